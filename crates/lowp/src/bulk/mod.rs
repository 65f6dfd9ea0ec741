//! Converting whole slices at memory speed, on the best path the CPU has.
//!
//! The slice methods of [`LowpSliceExt`] (named like the `half` crate's `HalfFloatSliceExt`)
//! and the constructors of [`LowpVecExt`] work for every format; [`crate::prelude`] brings
//! them in. They round to nearest, ties to even, by default, with saturating and stochastic
//! variants; every result is bit-identical to the scalar conversion of the same element
//! (`T::from_f32`, `T::from_f64`, `to_f32`, `to_f64`), NaN payloads included, on every path.
//!
//! ```
//! use lowp::prelude::*;
//! use lowp::{bf16, f8e4m3fn};
//!
//! let weights = [0.1f32, -2.5, 1e-3, 500.0];
//! let mut packed = [bf16::ZERO; 4];
//! packed.convert_from_f32_slice(&weights);
//! assert_eq!(packed.to_f32_vec(), [0.10009765625, -2.5, 0.00099945068359375, 500.0]);
//!
//! // E4M3FN has no infinity: 500 overflows to NaN, or saturates to 448.
//! let fp8 = Vec::<f8e4m3fn>::from_f32_slice(&weights);
//! assert!(fp8[3].is_nan());
//! let fp8 = Vec::<f8e4m3fn>::from_f32_slice_saturating(&weights);
//! assert_eq!(fp8[3].to_f32(), 448.0);
//! ```
//!
//! # Paths
//!
//! The work is done by one of several [`Path`]s: vector code for AVX-512 (with the BF16 and
//! FP16 extensions where present) or AVX2 and F16C, or a portable loop. The best path the CPU
//! has is chosen on first use and kept ([`active_path`], decided in [`crate::cpu`], which the
//! rest of the crate and `lowp-tensor` ask too); the environment variable
//! `LOWP_FORCE_PATH` (`portable`, `f16c`, `avx512`, `avx512bf16`, `avx512fp16`) pins another,
//! and the `Path` methods run a given path directly:
//!
//! ```
//! use lowp::bulk::Path;
//! use lowp::f16;
//!
//! let src = [1.0f32, 65520.0, f32::NAN];
//! let mut a = [f16::ZERO; 3];
//! let mut b = [f16::ZERO; 3];
//! Path::Portable.convert_from_f32_slice(&mut a, &src).unwrap();
//! Path::best().convert_from_f32_slice(&mut b, &src).unwrap();
//! assert_eq!(a.map(f16::to_bits), b.map(f16::to_bits));
//! assert_eq!(a[1], f16::INFINITY);
//! ```
//!
//! FP4 also packs two values to a byte: [`pack_f4`], [`unpack_f4`], [`pack_f4_from_f32`],
//! [`unpack_f4_to_f32`].
//!
//! # Lengths
//!
//! The methods that fill a caller's slice panic when its length differs from the source's, as
//! `half`'s do; the message names both lengths.

mod dispatch;
mod packed;
#[cfg(feature = "rayon")]
mod parallel;
mod portable;
mod reinterpret;
mod slice;

pub use crate::cpu::{
    FORCE_PATH_VAR, ForcedPathError, Path, UnknownPath, UnsupportedPath, active_path,
    forced_path_error,
};
pub use packed::{pack_f4, pack_f4_from_f32, unpack_f4, unpack_f4_to_f32};
#[cfg(feature = "alloc")]
pub use packed::{pack_f4_vec, unpack_f4_vec};
#[cfg(feature = "rayon")]
pub use parallel::{LowpParSliceExt, ThreadSplit};
pub use portable::random_bits;
pub use reinterpret::AllBitPatterns;
pub use slice::{HalfBitsSliceExt, LowpSliceExt};
#[cfg(feature = "alloc")]
pub use slice::{HalfBitsVecExt, LowpVecExt};
// The per-path conversions the slice methods, the packed and parallel forms and `fit` share.
pub(crate) use dispatch::{
    check_lengths, convert, narrow_f32, narrow_f64, stochastic_f32, stochastic_f64, widen_f32,
    widen_f64,
};
