//! Conversions between the formats, Rust's primitive types and `bool`.

use core::fmt;

/// A checked (`TryFrom`) conversion that would have lost information.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct TryFromFloatError {
    kind: TryFromFloatErrorKind,
}

/// Why a checked conversion failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum TryFromFloatErrorKind {
    /// The source is NaN and the target cannot hold NaN.
    Nan,
    /// The source is outside the target's range (infinity included).
    OutOfRange,
    /// The source lies within range but between two target values (a fraction for an integer
    /// target, too many significant bits for a float target).
    Inexact,
}

impl TryFromFloatError {
    pub(crate) const fn new(kind: TryFromFloatErrorKind) -> Self {
        Self { kind }
    }

    /// Why the conversion failed.
    pub fn kind(&self) -> TryFromFloatErrorKind {
        self.kind
    }
}

impl fmt::Display for TryFromFloatError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self.kind {
            TryFromFloatErrorKind::Nan => "NaN cannot be converted to the target type",
            TryFromFloatErrorKind::OutOfRange => "value out of the target type's range",
            TryFromFloatErrorKind::Inexact => "value not exactly representable in the target type",
        })
    }
}

impl core::error::Error for TryFromFloatError {}

use crate::round::{self, Decoded, Rounding};
use crate::{LowpFloat, format::Format};

/// Bits of the integer `(-1)^neg * mag` rounded to nearest even in `fmt` (+0 for zero).
pub(crate) const fn integer_bits(fmt: &Format, neg: bool, mag: u128) -> u32 {
    if mag == 0 {
        return round::encode(
            fmt,
            Decoded::Zero { neg: false },
            Rounding::NearestEven,
            false,
        );
    }
    let (sig, exp) = round::integer_parts(mag);
    round::round_finite(fmt, neg, sig, exp, Rounding::NearestEven, false)
}

/// Checks that the integer `(-1)^neg * mag` is exactly the value `x`.
fn exact_integer<T: LowpFloat>(x: T, neg: bool, mag: u128) -> Result<T, TryFromFloatError> {
    let value = x.to_f64();
    let max = T::from_bits_u32(T::FORMAT.max_finite_bits()).to_f64();
    if (neg && !T::FORMAT.signed) || mag > max as u128 || (mag == 0 && !T::FORMAT.has_zero()) {
        return Err(TryFromFloatError::new(TryFromFloatErrorKind::OutOfRange));
    }
    // `value` is an integer below 2^128 whenever it equals the source, so the cast is exact then.
    if libm::fabs(value) as u128 == mag && libm::trunc(value) == value {
        Ok(x)
    } else {
        Err(TryFromFloatError::new(TryFromFloatErrorKind::Inexact))
    }
}

/// Checks that the f64 `v` (exact value of a format) is an integer within `[lower, upper)`.
fn integral_in(v: f64, lower: f64, upper: f64) -> Result<(), TryFromFloatError> {
    if v.is_nan() {
        Err(TryFromFloatError::new(TryFromFloatErrorKind::Nan))
    } else if !(v >= lower && v < upper) {
        Err(TryFromFloatError::new(TryFromFloatErrorKind::OutOfRange))
    } else if libm::trunc(v) != v {
        Err(TryFromFloatError::new(TryFromFloatErrorKind::Inexact))
    } else {
        Ok(())
    }
}

/// Checks that rounding `x` into `T` gave `r` exactly (±0 counts as exact, also where `T` has
/// no -0; NaN only where `T` has NaN).
fn exact_float<T: LowpFloat>(x: f64, r: T) -> Result<T, TryFromFloatError> {
    let fmt = T::FORMAT;
    let v = r.to_f64();
    if x.is_nan() {
        return if fmt.has_nan() {
            Ok(r)
        } else {
            Err(TryFromFloatError::new(TryFromFloatErrorKind::Nan))
        };
    }
    if v == x {
        return Ok(r);
    }
    let max = T::from_bits_u32(fmt.max_finite_bits()).to_f64();
    let below_range = !fmt.has_zero() && libm::fabs(x) < T::from_bits_u32(0).to_f64();
    if libm::fabs(x) > max || (x < 0.0 && !fmt.signed) || x == 0.0 || below_range {
        Err(TryFromFloatError::new(TryFromFloatErrorKind::OutOfRange))
    } else {
        Err(TryFromFloatError::new(TryFromFloatErrorKind::Inexact))
    }
}

mod sealed {
    /// Only Rust's primitive integers.
    pub trait Sealed {}
}

/// A primitive integer type (`i8` to `i128`, `u8` to `u128`, `isize`, `usize`): what
/// `from_int` and `to_int` convert from and to, on every format.
///
/// The conversions are generic methods rather than one method per integer type (as `f16` has
/// `from_f32`) because num-traits' `ToPrimitive::to_i32` and `FromPrimitive::from_i32`, which
/// `half` users call with method syntax, return an `Option`; an inherent method of the same
/// name would shadow them and break code written for `half`.
pub trait Int: Copy + sealed::Sealed {
    /// The sign and the magnitude.
    #[doc(hidden)]
    fn sign_and_magnitude(self) -> (bool, u128);
    /// `x as Self`: truncated toward zero, saturated at the bounds, 0 for NaN.
    #[doc(hidden)]
    fn from_f64_as(x: f64) -> Self;
}

macro_rules! impl_int {
    (signed: $($int:ty),*) => {$(
        impl sealed::Sealed for $int {}
        impl Int for $int {
            #[inline]
            fn sign_and_magnitude(self) -> (bool, u128) {
                (self < 0, (self as i128).unsigned_abs())
            }
            #[inline]
            fn from_f64_as(x: f64) -> Self {
                x as $int
            }
        }
    )*};
    (unsigned: $($int:ty),*) => {$(
        impl sealed::Sealed for $int {}
        impl Int for $int {
            #[inline]
            fn sign_and_magnitude(self) -> (bool, u128) {
                (false, self as u128)
            }
            #[inline]
            fn from_f64_as(x: f64) -> Self {
                x as $int
            }
        }
    )*};
}
impl_int!(signed: i8, i16, i32, i64, i128, isize);
impl_int!(unsigned: u8, u16, u32, u64, u128, usize);

macro_rules! impl_int_conversions {
    ($t:ident) => {
        impl crate::$t {
            /// Rounds an integer of any primitive type to nearest, ties to even, in one step
            /// (exact for 128-bit values too, where `as f32` would round first). Overflow gives
            /// infinity, else NaN, else ±MAX, as `from_f64` does; zero gives +0 (NaN in
            /// f8e8m0fnu, which has no zero; so do negative values there).
            ///
            /// ```
            #[doc = concat!("use lowp::", stringify!($t), ";")]
            #[doc = concat!("assert_eq!(", stringify!($t), "::from_int(2u8).to_f32(), 2.0);")]
            /// ```
            #[inline]
            pub fn from_int<I: Int>(v: I) -> Self {
                let (negative, magnitude) = v.sign_and_magnitude();
                Self(integer_bits(&Self::FORMAT, negative, magnitude) as _)
            }

            /// Converts to an integer of any primitive type like Rust's `as`: truncates toward
            /// zero, saturates at the integer's bounds (±infinity included) and gives 0 for NaN.
            /// (num-traits' `ToPrimitive` gives `None` for those instead.)
            ///
            /// ```
            #[doc = concat!("use lowp::", stringify!($t), ";")]
            #[doc = concat!("assert_eq!(", stringify!($t), "::from_f32(2.0).to_int::<i32>(), 2);")]
            /// ```
            #[inline]
            pub fn to_int<I: Int>(self) -> I {
                I::from_f64_as(self.to_f64())
            }

            /// C's truth value, as Paddle's `float16` has it: `false` for ±0, `true` for every
            /// other value, NaN included.
            #[inline]
            pub const fn to_bool(self) -> bool {
                !crate::classify::is_zero(&Self::FORMAT, self.0 as u32)
            }

            /// 1 for `true`, 0 for `false` (NaN for `false` in f8e8m0fnu, which has no zero).
            #[inline]
            pub const fn from_bool(b: bool) -> Self {
                if b { Self::ONE } else { Self(integer_bits(&Self::FORMAT, false, 0) as _) }
            }
        }

        impl From<crate::$t> for f32 {
            /// Exact: every value of every format is an f32.
            #[inline]
            fn from(x: crate::$t) -> f32 {
                x.to_f32()
            }
        }

        impl From<crate::$t> for f64 {
            /// Exact: every value of every format is an f64.
            #[inline]
            fn from(x: crate::$t) -> f64 {
                x.to_f64()
            }
        }

        impl TryFrom<f32> for crate::$t {
            type Error = TryFromFloatError;
            /// Succeeds when the f32 is exactly a value of the format (±0 counts as exact where
            /// the format has only +0; NaN where the format has NaN; ±infinity where it has
            /// infinities); otherwise says whether it was out of range, inexact or NaN.
            #[inline]
            fn try_from(x: f32) -> Result<Self, Self::Error> {
                exact_float(x as f64, Self::from_f32(x))
            }
        }

        impl TryFrom<f64> for crate::$t {
            type Error = TryFromFloatError;
            /// Succeeds when the f64 is exactly a value of the format (see `TryFrom<f32>`).
            #[inline]
            fn try_from(x: f64) -> Result<Self, Self::Error> {
                exact_float(x, Self::from_f64(x))
            }
        }

        impl From<crate::$t> for bool {
            /// [`to_bool`](crate::f16::to_bool): `false` only for ±0.
            #[inline]
            fn from(x: crate::$t) -> bool {
                x.to_bool()
            }
        }

        impl_int_try_from_float!($t: i8, i16, i32, i64, i128, isize, u8, u16, u32, u64, u128, usize);
    };
}

macro_rules! impl_int_try_from_float {
    ($t:ident: $($int:ty),*) => {$(
        impl TryFrom<crate::$t> for $int {
            type Error = TryFromFloatError;
            /// Succeeds when the value is an integer within the target's range; NaN,
            /// infinities, fractions and out-of-range values are errors naming the reason.
            #[inline]
            fn try_from(x: crate::$t) -> Result<Self, Self::Error> {
                integral_in(x.to_f64(), <$int>::MIN as f64, <$int>::MAX as f64 + 1.0)?;
                Ok(x.to_f64() as $int)
            }
        }
    )*};
}

macro_rules! impl_try_from_int {
    ($t:ident, signed: $($int:ty),*) => {$(
        impl_try_from_int!(@one $t, $int, v, v < 0, (v as i128).unsigned_abs());
    )*};
    ($t:ident, unsigned: $($int:ty),*) => {$(
        impl_try_from_int!(@one $t, $int, v, false, v as u128);
    )*};
    (@one $t:ident, $int:ty, $v:ident, $neg:expr, $mag:expr) => {
        impl TryFrom<$int> for crate::$t {
            type Error = TryFromFloatError;
            /// Succeeds when the integer is exactly a value of the format; otherwise says
            /// whether it was out of range (zero and negative values included for f8e8m0fnu)
            /// or between two values.
            #[inline]
            fn try_from($v: $int) -> Result<Self, Self::Error> {
                exact_integer(Self::from_int($v), $neg, $mag)
            }
        }
    };
}

macro_rules! impl_from_small_int {
    ($t:ident: $($int:ty),*) => {$(
        impl From<$int> for crate::$t {
            /// Exact: every value of the integer type is a value of the format.
            #[inline]
            fn from(v: $int) -> Self {
                Self::from_int(v)
            }
        }
    )*};
}

macro_rules! impl_from_bool {
    ($($t:ident),*) => {$(
        impl From<bool> for crate::$t {
            /// 1 for `true`, +0 for `false`.
            #[inline]
            fn from(b: bool) -> Self {
                Self::from_bool(b)
            }
        }
    )*};
}

/// Defines `From` between formats for the pairs where every source value (NaN, infinities and
/// the sign of zero included) survives, and lists the pairs for the test that proves it.
macro_rules! lossless_format_pairs {
    ($($from:ident => $($to:ident),+;)*) => {
        $($(
            impl From<crate::$from> for crate::$to {
                /// Exact: every value of the source format is a value of this one.
                #[inline]
                fn from(x: crate::$from) -> Self {
                    Self::from_f32(x.to_f32())
                }
            }
        )+)*

        /// The (from, to) pairs with a lossless `From`.
        #[cfg(test)]
        pub(crate) const LOSSLESS_PAIRS: &[(&str, &str)] =
            &[$($((stringify!($from), stringify!($to)),)+)*];
    };
}

crate::for_each_format!(impl_int_conversions);

/// The integer and `bool` conversions a format's row of [`for_each_format!`] gives it: the
/// 16-bit formats hold every `i8` and `u8` exactly (`From`) and check the wider integers
/// (`TryFrom`); the narrower ones check every integer. A signed format holds 0 and 1
/// (`From<bool>`); the one unsigned format, E8M0, has no zero (`TryFrom<bool>`).
macro_rules! impl_int_and_bool {
    ($t:ident, $v:ident, u16, $c:ty, $sign:ident, $values:ident, $width:ident) => {
        // Every i8 and u8 is exact where the precision and range reach 255.
        const _: () = assert!(
            crate::$t::FORMAT.precision() >= 8 && crate::$t::FORMAT.max_exponent() >= 7
        );
        impl_from_small_int!($t: i8, u8);
        impl_try_from_int!($t, signed: i16, i32, i64, i128, isize);
        impl_try_from_int!($t, unsigned: u16, u32, u64, u128, usize);
        impl_int_and_bool!(@bool $t $sign);
    };
    ($t:ident, $v:ident, u8, $c:ty, $sign:ident, $values:ident, $width:ident) => {
        impl_try_from_int!($t, signed: i8, i16, i32, i64, i128, isize);
        impl_try_from_int!($t, unsigned: u8, u16, u32, u64, u128, usize);
        impl_int_and_bool!(@bool $t $sign);
    };
    (@bool $t:ident signed) => {
        impl_from_bool!($t);
    };
    (@bool $t:ident unsigned) => {
        const _: () = assert!(!crate::$t::FORMAT.has_zero(), "an unsigned format with a zero gets From<bool>");
        impl TryFrom<bool> for crate::$t {
            type Error = TryFromFloatError;
            /// 1 for `true`; `false` is an error, as the format has no zero.
            #[inline]
            fn try_from(b: bool) -> Result<Self, Self::Error> {
                if b {
                    Ok(Self::ONE)
                } else {
                    Err(TryFromFloatError::new(TryFromFloatErrorKind::OutOfRange))
                }
            }
        }
    };
}
crate::for_each_format!(impl_int_and_bool, rows);

lossless_format_pairs! {
    f8e4m3fn => f16, bf16;
    f8e5m2 => f16, bf16;
    f8e4m3fnuz => f16, bf16;
    f8e5m2fnuz => f16, bf16;
    f8e4m3 => f16, bf16;
    f8e3m4 => f16, bf16;
    f8e8m0fnu => bf16;
    f6e2m3fn => f16, bf16, f8e4m3fn, f8e4m3, f8e3m4;
    f6e3m2fn => f16, bf16, f8e4m3fn, f8e5m2, f8e4m3;
    f4e2m1fn => f16, bf16, f8e4m3fn, f8e5m2, f8e4m3, f8e3m4, f6e2m3fn, f6e3m2fn;
}

#[cfg(test)]
mod tests {
    extern crate std;
    use super::LOSSLESS_PAIRS;
    use crate::*;
    use std::vec::Vec;

    /// Whether every value of `S` (NaN, infinities and the sign of zero included) survives the
    /// trip into `T`, decided over every bit pattern.
    fn lossless<S: LowpFloat, T: LowpFloat>() -> bool {
        (0..1u32 << S::FORMAT.total_bits()).all(|bits| {
            let s = S::from_bits_u32(bits).to_f64();
            let t = T::from_f64(s).to_f64();
            if s.is_nan() {
                t.is_nan()
            } else {
                t == s && t.is_sign_negative() == s.is_sign_negative()
            }
        })
    }

    /// Every ordered pair of distinct formats whose `From` would be lossless.
    macro_rules! lossless_matrix {
        ($(($s:ident, $($rest:tt)*))*) => {{
            let mut pairs = Vec::new();
            $(crate::for_each_format!(lossless_matrix, list, pairs, $s);)*
            pairs
        }};
        ([$pairs:ident, $s:ident] $(($t:ident, $($rest:tt)*))*) => {$(
            if stringify!($s) != stringify!($t) && lossless::<$s, $t>() {
                $pairs.push((stringify!($s), stringify!($t)));
            }
        )*};
    }

    #[test]
    fn lossless_from_impls_are_exactly_the_lossless_pairs() {
        let mut found: Vec<(&str, &str)> = crate::for_each_format!(lossless_matrix, list);
        let mut declared = LOSSLESS_PAIRS.to_vec();
        found.sort();
        declared.sort();
        assert_eq!(found, declared);
    }
}
