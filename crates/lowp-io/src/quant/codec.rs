//! Quantizing one chunk of a tensor into a block-scaled scheme, and decoding it back, stage by
//! stage: the options (`options`), the source types and the exactness of their quotients
//! (`source`, whose documentation holds the proofs), the element formats (`element`), each
//! block's scale (`scale`) and its search (`search`), the error accounting (`errors`),
//! the driver (`encode`), decoding (`decode`) and checking stored scales (`check`).

mod check;
mod decode;
mod element;
mod encode;
mod errors;
mod lengths;
pub mod long_row;
mod options;
mod round;
mod scale;
mod search;
mod source;
mod stats;

pub use check::{ScaleCheck, check_scales};
pub use decode::{dequantize, dequantize_f64};
pub use encode::{Place, quantize, quantize_at};
pub use options::{ElementRounding, QuantOptions, ScaleSearch, ScaleType};
pub use scale::{amax, nvfp4_pow2_tensor_scale, nvfp4_tensor_scale};
pub use source::QuantSource;
pub use stats::QuantStats;
