//! The trait every number type implements, for code generic over formats.

use crate::format::Format;
use crate::round::Rounding;

pub(crate) mod sealed {
    /// Only this crate's types are formats.
    pub trait Sealed {}
}

/// A low-precision floating-point number type of this crate.
///
/// Generic code (bulk conversion, tensors, kernels) is written once against this trait; each
/// method has the semantics of the inherent method of the same name on every type.
///
/// ```
/// use lowp::{LowpFloat, bf16, f8e4m3fn};
///
/// fn round_trip<T: LowpFloat>(x: f32) -> f32 {
///     T::from_f32(x).to_f32()
/// }
/// assert_eq!(round_trip::<bf16>(1.0 / 3.0), 0.333984375);
/// assert_eq!(round_trip::<f8e4m3fn>(1.0 / 3.0), 0.34375);
/// ```
pub trait LowpFloat:
    Copy
    + Default
    + PartialEq
    + PartialOrd
    + Send
    + Sync
    + 'static
    + sealed::Sealed
    + core::fmt::Debug
    + core::fmt::Display
    + core::fmt::LowerExp
    + core::fmt::UpperExp
    + core::str::FromStr<Err = crate::parse_error::ParseFloatError>
{
    /// The unsigned integer holding the bits: `u16` for 16-bit formats, `u8` for the rest.
    type Bits: Copy + Eq + core::hash::Hash + core::fmt::Debug + Into<u32> + Send + Sync + 'static;
    /// The format description.
    const FORMAT: Format;
    /// The value with the given bits (bits above the format's width are ignored).
    fn from_bits(bits: Self::Bits) -> Self;
    /// The bits of the value.
    fn to_bits(self) -> Self::Bits;
    /// The value with the low bits of `bits` (bits above the format's width are ignored).
    fn from_bits_u32(bits: u32) -> Self;
    /// Rounds an f32 to nearest, ties to even.
    fn from_f32(x: f32) -> Self;
    /// Rounds an f32 to nearest, ties to even, always in software; bit-identical to
    /// [`LowpFloat::from_f32`], which may use a CPU instruction.
    fn from_f32_const(x: f32) -> Self;
    /// The exact f32 value, always in software; bit-identical to [`LowpFloat::to_f32`].
    fn to_f32_const(self) -> f32;
    /// Rounds an f64 to nearest, ties to even, directly.
    fn from_f64(x: f64) -> Self;
    /// Rounds an f64 to nearest, ties to even, directly, always in software; bit-identical to
    /// [`LowpFloat::from_f64`], which may use a CPU instruction.
    fn from_f64_const(x: f64) -> Self;
    /// The exact f32 value.
    fn to_f32(self) -> f32;
    /// The exact f64 value.
    fn to_f64(self) -> f64;
    /// Rounds an f32 in the given mode.
    fn from_f32_round(x: f32, mode: Rounding) -> Self;
    /// Rounds an f64 in the given mode.
    fn from_f64_round(x: f64, mode: Rounding) -> Self;
    /// Rounds an f32 in the given mode, saturating overflow to ±MAX.
    fn from_f32_round_saturating(x: f32, mode: Rounding) -> Self;
    /// Rounds an f64 in the given mode, saturating overflow to ±MAX.
    fn from_f64_round_saturating(x: f64, mode: Rounding) -> Self;
    /// Rounds an f32 to nearest even, saturating overflow to ±MAX.
    fn from_f32_saturating(x: f32) -> Self;
    /// Rounds an f64 to nearest even, saturating overflow to ±MAX.
    fn from_f64_saturating(x: f64) -> Self;

    /// The bits widened to a `u32`.
    #[inline]
    fn to_bits_u32(self) -> u32 {
        self.to_bits().into()
    }

    /// Converts to another format, rounding to nearest even. The value is widened exactly to
    /// f32 first (every format fits), so this rounds once.
    ///
    /// ```
    /// use lowp::{LowpFloat, f16, f8e4m3fn};
    /// let x = f16::from_f32(300.0);
    /// assert_eq!(x.convert::<f8e4m3fn>().to_f32(), 288.0);
    /// ```
    #[inline]
    fn convert<U: LowpFloat>(self) -> U {
        U::from_f32(self.to_f32())
    }

    /// Converts to another format in the given rounding mode (one rounding).
    #[inline]
    fn convert_round<U: LowpFloat>(self, mode: Rounding) -> U {
        U::from_f32_round(self.to_f32(), mode)
    }

    /// Converts to another format, rounding to nearest even and saturating overflow to ±MAX.
    #[inline]
    fn convert_saturating<U: LowpFloat>(self) -> U {
        U::from_f32_saturating(self.to_f32())
    }
}
