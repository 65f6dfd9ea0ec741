//! Low-precision floating point for machine learning: float16, bfloat16 and the FP8, FP6 and
//! FP4 formats, converted exactly and correctly rounded.
//!
//! # The types
//!
//! | type | bits | exponent / mantissa | bias | special values | max |
//! |---|---|---|---|---|---|
//! | [`f16`](struct@f16) | 16 | 5 / 10 | 15 | ±inf, NaN | 65504 |
//! | [`bf16`](struct@bf16) | 16 | 8 / 7 | 127 | ±inf, NaN | ≈3.39e38 |
//! | [`f8e4m3fn`] | 8 | 4 / 3 | 7 | NaN = S.1111.111 | 448 |
//! | [`f8e5m2`] | 8 | 5 / 2 | 15 | ±inf, NaN | 57344 |
//! | [`f8e4m3fnuz`] | 8 | 4 / 3 | 8 | NaN = 0x80, no -0 | 240 |
//! | [`f8e5m2fnuz`] | 8 | 5 / 2 | 16 | NaN = 0x80, no -0 | 57344 |
//! | [`f8e4m3`] | 8 | 4 / 3 | 7 | ±inf, NaN | 240 |
//! | [`f8e3m4`] | 8 | 3 / 4 | 3 | ±inf, NaN | 15.5 |
//! | [`f8e8m0fnu`] | 8 | 8 / 0, unsigned | 127 | NaN = 0xFF, no zero | 2^127 |
//! | [`f6e2m3fn`] | 6 | 2 / 3 | 1 | none | 7.5 |
//! | [`f6e3m2fn`] | 6 | 3 / 2 | 3 | none | 28 |
//! | [`f4e2m1fn`] | 4 | 2 / 1 | 1 | none | 6 |
//!
//! Each type is a `#[repr(transparent)]` newtype over its bits, generated from a [`Format`]
//! description; the semantics of every conversion from f32 match
//! [ml_dtypes](https://github.com/jax-ml/ml_dtypes) (the exhaustive tests check all 2^32
//! inputs against digests of ml_dtypes' results).
//!
//! [`F8E4M3`] and [`F8E5M2`] are the `float8` crate's (candle's) names for [`f8e4m3fn`] and
//! [`f8e5m2`]; their docs say where `float8` answers differently.
//!
//! # Conversions
//!
//! * `from_f32`/`from_f64` round to nearest, ties to even, in one step from the source: an f64
//!   is never rounded to f32 first, so there is no double rounding (ml_dtypes and the `half`
//!   crate do round f64 through f32).
//! * `to_f32`/`to_f64` are exact.
//! * Every other rounding mode has its own function (`from_f32_toward_zero`,
//!   `from_f32_stochastic`, ...), each with a `_saturating` twin that turns overflow into ±MAX
//!   ([`Rounding`] has the rules).
//! * [`LowpFloat::convert`] goes between any two formats with one rounding.
//!
//! ```
//! use lowp::{bf16, f16, f8e4m3fn};
//!
//! assert_eq!(f16::from_f32(0.1).to_bits(), 0x2e66);
//! assert_eq!(bf16::from_f64(1.0 + 2f64.powi(-8) + 2f64.powi(-40)).to_bits(), 0x3f81);
//! assert_eq!(f8e4m3fn::from_f32(464.0), f8e4m3fn::MAX); // the tie rounds to even: 448
//! assert!(f8e4m3fn::from_f32(465.0).is_nan());
//! assert_eq!(f8e4m3fn::from_f32_saturating(1e9), f8e4m3fn::MAX);
//! ```
//!
//! # Rounding modes
//!
//! ```
//! use lowp::{Rounding, f16, f8e4m3fn, f8e5m2};
//!
//! let x = 1.0 + 0.3 * 2f32.powi(-10); // 30% of the way from 1 to the next f16
//! assert_eq!(f16::from_f32_toward_zero(x).to_f32(), 1.0);
//! assert_eq!(f16::from_f32_toward_positive(x).to_bits(), 0x3c01);
//! assert_eq!(f16::from_f32_round(-x, Rounding::TowardNegative).to_bits(), 0xbc01);
//! // Stochastic rounding rounds up with probability 0.3: the random bits decide.
//! assert_eq!(f16::from_f32_stochastic(x, 0).to_bits(), 0x3c01);
//! assert_eq!(f16::from_f32_stochastic(x, u32::MAX).to_bits(), 0x3c00);
//! // Overflow: infinity, NaN where there is none, or ±MAX when saturating.
//! assert!(f8e5m2::from_f32(1e6).is_infinite());
//! assert!(f8e4m3fn::from_f32(1e6).is_nan());
//! assert_eq!(f8e5m2::from_f32_toward_zero(1e6), f8e5m2::MAX);
//! assert_eq!(f8e5m2::from_f32_saturating(f32::NEG_INFINITY), f8e5m2::MIN);
//! ```
//!
//! # A float type like `f32`
//!
//! Arithmetic is computed in f32 (f64 for E8M0) and rounded once, which is correctly rounded for
//! every format (the `arith` module docs prove it); the math functions are correctly rounded for
//! every input (computed in f64; the tests prove it input by input). The formatting traits print
//! the value's f32, as the `half` crate does; [`shortest`](crate::f16::shortest) prints the shortest
//! decimal that reads back. Parsing rounds the decimal once, directly.
//!
//! ```
//! use lowp::{bf16, f16, f8e4m3fn};
//!
//! let a = f16::from_f32(0.1);
//! assert_eq!(a.to_string(), "0.099975586"); // the f32, as in `half`
//! assert_eq!(a.shortest().to_string(), "0.1");
//! assert_eq!(format!("{:?} {:e} {:.6}", a.shortest(), a.shortest(), a), "0.1 1e-1 0.099976");
//! assert_eq!((a + a).shortest().to_string(), "0.2");
//! assert_eq!("0.1".parse::<f16>().unwrap(), a);
//! assert_eq!(f16::from_f32(2.0).sqrt().to_bits(), f16::SQRT_2.to_bits());
//! assert_eq!(bf16::from_f32(-0.0).next_up(), bf16::MIN_POSITIVE_SUBNORMAL);
//! assert!(f16::NAN != f16::NAN && f16::ZERO == f16::NEG_ZERO);
//! assert_eq!(f8e4m3fn::MAX.ulp().to_f32(), 32.0);
//! assert_eq!(f16::from_f32(300.0).to_int::<u8>(), 255); // saturating like `as`
//! assert_eq!(i32::try_from(f16::from_f32(2.5)).unwrap_err().kind(),
//!            lowp::TryFromFloatErrorKind::Inexact);
//! ```
//!
//! # Hardware
//!
//! `f16` and `bf16` convert to and from f32 with a few integer operations written for the two
//! formats, inlined into the caller: faster than a call to the F16C instructions, and faster
//! than the `half` crate in unoptimized builds and with overflow checks on, where crates run
//! their tests. With the `std` feature on x86, `f16::from_f64` uses F16C's `vcvtps2ph` when
//! the process runs a vector path ([`cpu`] decides, once, for the whole process;
//! `LOWP_FORCE_PATH=portable` pins everything to software); it gives the same bits as the
//! software engine, which the tests check on tens of millions of inputs (it first rounds to odd
//! at f32 precision, so it still rounds once). Every conversion is checked against the engine
//! on all 2^32 f32 inputs. Widening an 8-bit-or-narrower format is a lookup in a table built at
//! compile time. (A round-to-odd F16C path for E4M3 was measured at 60% of the software engine's
//! speed, so the engine it is.)
//!
//! # Whole slices
//!
//! The [`bulk`] module converts slices on the fastest path the CPU has (AVX-512 with its BF16
//! and FP16 extensions, AVX2 with F16C, or a portable loop), chosen once; every path gives the
//! scalar conversions' bits on every input. [`prelude`] brings in the methods, named as in the
//! `half` crate:
//!
//! ```
//! use lowp::prelude::*;
//! use lowp::f8e4m3fn;
//!
//! let activations = vec![0.5f32; 1000];
//! let fp8 = Vec::<f8e4m3fn>::from_f32_slice(&activations);
//! let mut back = vec![0f32; fp8.len()];
//! fp8.convert_to_f32_slice(&mut back);
//! assert_eq!(back, activations);
//! println!("converted on the {} path", lowp::bulk::active_path());
//! ```
#![cfg_attr(not(feature = "std"), no_std)]

#[cfg(feature = "alloc")]
extern crate alloc;

mod arith;
mod bits;
pub mod bulk;
mod classify;
mod cmp;
mod convert;
pub mod cpu;
mod decimal;
mod display;
mod features;
pub mod fit;
pub mod format;
mod format_ops;
pub mod hw;
pub mod math;
mod parse;
mod parse_error;
mod round;
mod scalar16;
#[cfg(feature = "serde")]
pub mod serde;
mod simd;
mod traits;
mod types;
mod widen;

/// The two half-precision types and the traits that make the crate's methods available:
/// `use lowp::prelude::*;`, as with the `half` crate's prelude.
///
/// It brings [`f16`](struct@crate::f16) and [`bf16`](struct@crate::bf16) into scope by name,
/// which also keeps the name `f16` from meaning Rust's unstable built-in type.
pub mod prelude {
    pub use crate::LowpFloat;
    #[cfg(feature = "rayon")]
    pub use crate::bulk::LowpParSliceExt;
    #[doc(no_inline)]
    pub use crate::slice::{HalfBitsSliceExt, HalfFloatSliceExt, LowpSliceExt};
    #[cfg(feature = "alloc")]
    #[doc(no_inline)]
    pub use crate::vec::{HalfBitsVecExt, HalfFloatVecExt, LowpVecExt};
    #[doc(no_inline)]
    pub use crate::{bf16, f16};
}

pub mod slice {
    //! The slice traits under the `half` crate's names: [`HalfFloatSliceExt`] (the same trait
    //! as [`LowpSliceExt`], for every format) and [`HalfBitsSliceExt`].
    /// The `half` crate's name for [`LowpSliceExt`]: bulk conversion and `reinterpret_cast`.
    pub use crate::bulk::LowpSliceExt as HalfFloatSliceExt;
    pub use crate::bulk::{AllBitPatterns, HalfBitsSliceExt, LowpSliceExt};
}

#[cfg(feature = "alloc")]
pub mod vec {
    //! The vector traits under the `half` crate's names: [`HalfFloatVecExt`] (the same trait as
    //! [`LowpVecExt`], for every format) and [`HalfBitsVecExt`].
    /// The `half` crate's name for [`LowpVecExt`]: `from_f32_slice` and `reinterpret_into`.
    pub use crate::bulk::LowpVecExt as HalfFloatVecExt;
    pub use crate::bulk::{HalfBitsVecExt, LowpVecExt};
}

pub use convert::{Int, TryFromFloatError, TryFromFloatErrorKind};
pub use display::Shortest;
pub use format::Format;
pub use format_ops::{SliceLengthError, UnknownFormatError};
pub use parse_error::{ParseErrorKind, ParseFloatError};
pub use round::Rounding;
pub use simd::{vectorized, vectorized_on};
pub use traits::LowpFloat;
pub use types::{
    bf16, f4e2m1fn, f6e2m3fn, f6e3m2fn, f8e3m4, f8e4m3, f8e4m3fn, f8e4m3fnuz, f8e5m2, f8e5m2fnuz,
    f8e8m0fnu, f16,
};

/// The `float8` crate's name for [`f8e4m3fn`], the OCP FP8 E4M3 format (bias 7, no infinity,
/// NaN = S.1111.111): this crate's type itself, not a wrapper, so the two names mix freely.
///
/// `float8` 0.7's `F8E4M3` has the same bit layout and the same values, and rounds the same
/// way, but differs at the top of the range: its `MAX` is 416 (0x7D) and it calls 448 (0x7E)
/// `INFINITY`, and its conversions saturate (1000.0 gives 448), where here 448 is
/// [`MAX`](f8e4m3fn::MAX), there is no `INFINITY`, and overflow gives NaN as OCP and ml_dtypes
/// define it ([`from_f32_saturating`](f8e4m3fn::from_f32_saturating) saturates). It also
/// classifies zero and NaN as subnormal. Every difference, with an example and the test that
/// measures it, is listed in `docs/migrating-from-float8.md` in lowp's repository.
pub type F8E4M3 = f8e4m3fn;

/// The `float8` crate's name for [`f8e5m2`], the OCP FP8 E5M2 format (bias 15, ±infinity and
/// NaN as in IEEE 754): this crate's type itself, not a wrapper.
///
/// `float8` 0.7's `F8E5M2` has the same bit layout and values and rounds the same way, but its
/// `INFINITY` is 57344 (0x7B, the largest finite value; here [`MAX`](f8e5m2::MAX)) and its
/// `MAX` 49152 (0x7A); its conversions saturate to 57344 where here they give infinity; only
/// 0x7E and 0xFE are NaN to its `is_nan` (here 0x7D to 0x7F and 0xFD to 0xFF, as in IEEE 754)
/// and 0x7C, infinity, counts as a normal number. `docs/migrating-from-float8.md` in lowp's
/// repository lists every difference with an example.
pub type F8E5M2 = f8e5m2;
