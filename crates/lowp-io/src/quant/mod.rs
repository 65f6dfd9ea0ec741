//! Block-scaled quantization: the numerics of fp8-block (DeepSeek-V3), MXFP8, MXFP4 (gpt-oss)
//! and NVFP4 (ModelOpt), as pure functions on one chunk of a tensor.
//!
//! A scheme ([`Scheme`]) stores a matrix as low-precision elements (E4M3 or E2M1) and one
//! scale per block of them; [`quantize`] turns whole rows of f32 or f64 values into the
//! element bytes and scale bytes that vLLM, transformers, gpt-oss and ModelOpt load, and
//! [`dequantize`] decodes them bit for bit as those loaders do. Everything is exact: each
//! element is the correctly rounded (or, on request, stochastically rounded) value of the
//! real quotient of its source value by the stored scale, by lowp's rounding engine; the
//! proofs are in the documentation of the codec's `source` module (and, for the routes f32
//! sources take to nearest under fp8-block's and nvfp4's scales, in the private module
//! `nearest_f32`).
//!
//! Nothing here reads a file or allocates per element; the caller cuts a tensor into chunks
//! of whole rows (bands of at most 128 rows of one matrix for fp8-block), runs them on as
//! many threads as it likes, and merges their [`QuantStats`]. For nvfp4 it first takes the
//! tensor's [`amax`] and passes [`nvfp4_tensor_scale`] of it to every chunk.
//!
//! ```
//! use lowp_io::quant::{QuantOptions, Scheme, dequantize, quantize};
//!
//! let x: Vec<f32> = (0..64).map(|i| (i as f32 - 20.0) * 0.37).collect(); // 2 rows of 32
//! let scheme = Scheme::Mxfp8;
//! let mut data = vec![0u8; 2 * scheme.data_row_bytes(32)];
//! let mut scales = vec![0u8; 2 * scheme.scale_row_bytes(32)];
//! let opts = QuantOptions::default();
//! let stats = quantize(scheme, &opts, &x, 32, 0, 0.0, &mut data, &mut scales).unwrap();
//! assert_eq!((stats.elements, stats.blocks), (64, 2));
//! // Each block's amax (7.4, 15.91) lies just below a power of two: OCP's shared exponent
//! // puts it beyond E4M3's 448 (473.6 and 509 times 2^X), and saturation clips it.
//! assert_eq!(stats.clipped_blocks, 2);
//! assert!(stats.sqnr_db() > 25.0);
//!
//! let mut back = vec![0f32; 64];
//! dequantize(scheme, &data, &scales, 32, 0.0, &mut back).unwrap();
//! assert_eq!(back[20], 0.0);
//! ```

pub mod codec;
mod divisor;
mod nearest_f32;
pub mod scheme;

pub use codec::long_row::{LongRow, RowScan};
pub use codec::{
    ElementRounding, Place, QuantOptions, QuantSource, QuantStats, ScaleCheck, ScaleSearch,
    ScaleType, amax, check_scales, dequantize, dequantize_f64, nvfp4_pow2_tensor_scale,
    nvfp4_tensor_scale, quantize, quantize_at,
};
pub use scheme::Scheme;
