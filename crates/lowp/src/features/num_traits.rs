//! `num-traits` support (the `num-traits` feature).
//!
//! A trait is implemented only where every one of its methods can return an honest value;
//! a method that would have to return something wrong (an `infinity()` that is not infinite, a
//! `zero()` that is not zero) is worse than a missing implementation.
//!
//! | traits | types | why |
//! |---|---|---|
//! | `ToPrimitive`, `FromPrimitive`, `NumCast`, `AsPrimitive`, `Bounded`, `One`, `ConstOne`, `FloatConst`, `TotalOrder`, `MulAdd`, `MulAddAssign`, `Inv` | every format | |
//! | `Zero`, `ConstZero`, `Num` | all but `f8e8m0fnu` | E8M0 has no zero |
//! | `Signed` | all but `f8e8m0fnu` | E8M0 is unsigned (and has no `Neg`) |
//! | `FloatCore`, `Float` (and so `Real`) | the formats with ±infinity and NaN (`f16`, `bf16`, `f8e5m2` and the IEEE-like FP8 formats) | they need ±infinity, NaN and -0: the `fn` FP8 formats have no infinity, the `fnuz` ones neither infinity nor -0, FP6/FP4 neither NaN nor infinity, and E8M0 no sign and no zero |
//!
//! Semantics:
//!
//! * `ToPrimitive` is exact for `to_f32`/`to_f64`. The integer conversions truncate toward
//!   zero and return `None` for NaN, infinities and values out of the integer's range, as
//!   num-traits documents (and does for `f32`). `AsPrimitive` is Rust's `as`: to integers it
//!   truncates and saturates, NaN giving 0; to floats it is exact.
//! * `FromPrimitive`, `NumCast` and `AsPrimitive` into these types round once, to nearest
//!   even, from the exact source value (a 64- or 128-bit integer is not rounded through f64
//!   first). `FromPrimitive` and `NumCast` return `None` where the rounded value does not stand
//!   for the source: a NaN result from a number (overflow in the formats without infinity,
//!   zero or a negative value in `f8e8m0fnu`), a number from NaN (the zero of the opposite
//!   sign in FP6/FP4), and an
//!   overflow that the FP6/FP4 formats saturate to ±MAX. `AsPrimitive` never fails and gives
//!   those values, like `as`.
//! * `Num::from_str_radix` parses radix 10 with the type's `FromStr` (correctly rounded) and
//!   the power-of-two radixes 2, 4, 8, 16 and 32 exactly, then rounds once; see
//!   [`parse_power_of_two_radix`]. Other radixes are rejected with
//!   [`ParseErrorKind::Invalid`](crate::ParseErrorKind::Invalid).
//! * The math methods of `Float` and `FloatCore` are the inherent ones, correctly rounded (see
//!   each type's methods). `clamp` does not panic: a NaN bound or `min > max` gives NaN.
//!   `powi` is the correctly rounded `powi`, not repeated multiplication.

use crate::round::{self, Decoded, Rounding};
use crate::types::*;
use crate::{ParseErrorKind, ParseFloatError};
use core::cmp::Ordering;
use core::num::FpCategory;
use num_traits::{
    AsPrimitive, Bounded, ConstOne, ConstZero, Float, FloatConst, FromBytes, FromPrimitive, Inv,
    MulAdd, MulAddAssign, Num, NumCast, One, Signed, ToBytes, ToPrimitive, Zero,
    float::{FloatCore, TotalOrder},
};

/// Parses `s` in a power-of-two radix (2, 4, 8, 16, 32) exactly, and rounds the value once,
/// to nearest even, into `fmt`; returns the bits, or `None` for invalid syntax.
///
/// The syntax is num-traits' for floats in other radixes: an optional sign, digits (`0-9`,
/// then `a-v` in either case, up to the radix) with an optional `.` and digits on at least one
/// side of it, or `inf`, `infinity`, `nan` in any case. Where `p` is not a digit (radixes 2 to
/// 16) an optional binary exponent follows: `p` or `P`, an optional sign and decimal digits,
/// scaling by that power of two (`"1.8p3"` in radix 16 is 12).
///
/// Every digit is worth a whole number of bits, so the value is a binary number: the first 62
/// significant bits are kept and any nonzero bit below them is folded into a sticky bit, which
/// rounds exactly like the full string at any precision of this crate.
pub(crate) fn parse_power_of_two_radix(
    fmt: &crate::format::Format,
    s: &str,
    radix: u32,
) -> Option<u32> {
    let bits_per_digit = radix.trailing_zeros();
    let (neg, body) = match s.as_bytes().first() {
        Some(b'-') => (true, &s[1..]),
        Some(b'+') => (false, &s[1..]),
        _ => (false, s),
    };
    if body.eq_ignore_ascii_case("inf") || body.eq_ignore_ascii_case("infinity") {
        return Some(round::encode(
            fmt,
            Decoded::Infinite { neg },
            Rounding::NearestEven,
            false,
        ));
    }
    if body.eq_ignore_ascii_case("nan") {
        return Some(round::encode(
            fmt,
            Decoded::Nan { neg, payload: 0 },
            Rounding::NearestEven,
            false,
        ));
    }
    let mut sig: u64 = 0;
    let mut exp: i64 = 0;
    let mut sticky = false;
    let mut digits = 0usize;
    let mut seen_point = false;
    let mut rest = body;
    for (i, c) in body.char_indices() {
        if c == '.' && !seen_point {
            seen_point = true;
            continue;
        }
        let Some(d) = c.to_digit(radix) else {
            rest = &body[i..];
            break;
        };
        digits += 1;
        if sig >> 62 == 0 && (sig << bits_per_digit) >> 62 == 0 {
            sig = sig << bits_per_digit | d as u64;
            if seen_point {
                exp -= bits_per_digit as i64;
            }
        } else {
            sticky |= d != 0;
            if !seen_point {
                exp += bits_per_digit as i64;
            }
        }
        rest = "";
    }
    if digits == 0 {
        return None;
    }
    if !rest.is_empty() {
        let exponent = rest.strip_prefix(['p', 'P'])?;
        let (exp_neg, exp_digits) = match exponent.as_bytes().first() {
            Some(b'-') => (true, &exponent[1..]),
            Some(b'+') => (false, &exponent[1..]),
            _ => (false, exponent),
        };
        if exp_digits.is_empty() {
            return None;
        }
        let mut e: i64 = 0;
        for c in exp_digits.chars() {
            // Far beyond every format's range; saturating keeps the arithmetic small.
            e = (e * 10 + c.to_digit(10)? as i64).min(1 << 40);
        }
        exp += if exp_neg { -e } else { e };
    }
    if sig == 0 {
        return Some(round::encode(
            fmt,
            Decoded::Zero { neg },
            Rounding::NearestEven,
            false,
        ));
    }
    // The sticky bit sits below all kept bits; with at least 62 of those, rounding to any
    // precision of this crate sees it exactly as it would see the discarded digits.
    let sig = sig << 1 | sticky as u64;
    let exp = (exp - 1).clamp(-100_000, 100_000) as i32;
    Some(round::round_finite(
        fmt,
        neg,
        sig,
        exp,
        Rounding::NearestEven,
        false,
    ))
}

/// `FromPrimitive`'s policy: `Some(r)` unless the rounded value `r` does not stand for the
/// source `x` (see the module docs).
#[inline]
fn represents(fmt: &crate::format::Format, r_bits: u32, x: f64) -> bool {
    let r_nan = fmt.is_nan_bits(r_bits);
    if r_nan != x.is_nan() {
        return false;
    }
    if !fmt.has_nan() && !x.is_nan() {
        // FP6/FP4 saturate: anything at or beyond MAX + ulp(MAX)/2 (a tie there would overflow,
        // MAX being odd) is an overflow clamped to ±MAX.
        let ulp = f64_pow2(fmt.max_exponent() - fmt.mantissa_bits as i32);
        let max = round::to_f64_exact(round::decode(fmt, fmt.max_finite_bits()));
        return libm::fabs(x) < max + ulp / 2.0;
    }
    true
}

/// `2^k` for a small `k`.
#[inline]
fn f64_pow2(k: i32) -> f64 {
    f64::from_bits(((k + 1023) as u64) << 52)
}

/// Implements trait methods by calling the inherent method of the same name, which has the
/// semantics (rounding, edge cases) the trait asks for.
macro_rules! forward {
    ($t:ident: $($(#[$doc:meta])* fn $name:ident(self $(, $arg:ident: $ty:ty)*) -> $ret:ty;)*) => {$(
        $(#[$doc])*
        #[inline]
        fn $name(self $(, $arg: $ty)*) -> $ret {
            $t::$name(self $(, $arg)*)
        }
    )*};
}

/// Implementations for every type.
macro_rules! impl_all {
    ($t:ident) => {
        impl ToBytes for $t {
            type Bytes = [u8; core::mem::size_of::<$t>()];
            /// The bits, most significant byte first (as the inherent `to_be_bytes`).
            #[inline]
            fn to_be_bytes(&self) -> Self::Bytes {
                $t::to_be_bytes(*self)
            }
            /// The bits, least significant byte first (as the inherent `to_le_bytes`).
            #[inline]
            fn to_le_bytes(&self) -> Self::Bytes {
                $t::to_le_bytes(*self)
            }
        }

        impl FromBytes for $t {
            type Bytes = [u8; core::mem::size_of::<$t>()];
            /// The value with these bits, most significant byte first (as the inherent
            /// `from_be_bytes`; FP6 and FP4 ignore the high bits, as `from_bits` does).
            #[inline]
            fn from_be_bytes(bytes: &Self::Bytes) -> Self {
                $t::from_be_bytes(*bytes)
            }
            /// The value with these bits, least significant byte first (as the inherent
            /// `from_le_bytes`).
            #[inline]
            fn from_le_bytes(bytes: &Self::Bytes) -> Self {
                $t::from_le_bytes(*bytes)
            }
        }

        impl ToPrimitive for $t {
            /// Truncates toward zero; `None` for NaN, infinities and values out of range.
            #[inline]
            fn to_i64(&self) -> Option<i64> {
                ToPrimitive::to_i64(&$t::to_f64(*self))
            }
            /// Truncates toward zero; `None` for NaN, infinities and values out of range.
            #[inline]
            fn to_u64(&self) -> Option<u64> {
                ToPrimitive::to_u64(&$t::to_f64(*self))
            }
            /// Truncates toward zero; `None` for NaN, infinities and values out of range.
            #[inline]
            fn to_i128(&self) -> Option<i128> {
                ToPrimitive::to_i128(&$t::to_f64(*self))
            }
            /// Truncates toward zero; `None` for NaN, infinities and values out of range.
            #[inline]
            fn to_u128(&self) -> Option<u128> {
                ToPrimitive::to_u128(&$t::to_f64(*self))
            }
            /// Truncates toward zero; `None` for NaN, infinities and values out of range.
            #[inline]
            fn to_isize(&self) -> Option<isize> {
                ToPrimitive::to_isize(&$t::to_f64(*self))
            }
            /// Truncates toward zero; `None` for NaN, infinities and values out of range.
            #[inline]
            fn to_i8(&self) -> Option<i8> {
                ToPrimitive::to_i8(&$t::to_f64(*self))
            }
            /// Truncates toward zero; `None` for NaN, infinities and values out of range.
            #[inline]
            fn to_i16(&self) -> Option<i16> {
                ToPrimitive::to_i16(&$t::to_f64(*self))
            }
            /// Truncates toward zero; `None` for NaN, infinities and values out of range.
            #[inline]
            fn to_i32(&self) -> Option<i32> {
                ToPrimitive::to_i32(&$t::to_f64(*self))
            }
            /// Truncates toward zero; `None` for NaN, infinities and values out of range.
            #[inline]
            fn to_usize(&self) -> Option<usize> {
                ToPrimitive::to_usize(&$t::to_f64(*self))
            }
            /// Truncates toward zero; `None` for NaN, infinities and values out of range.
            #[inline]
            fn to_u8(&self) -> Option<u8> {
                ToPrimitive::to_u8(&$t::to_f64(*self))
            }
            /// Truncates toward zero; `None` for NaN, infinities and values out of range.
            #[inline]
            fn to_u16(&self) -> Option<u16> {
                ToPrimitive::to_u16(&$t::to_f64(*self))
            }
            /// Truncates toward zero; `None` for NaN, infinities and values out of range.
            #[inline]
            fn to_u32(&self) -> Option<u32> {
                ToPrimitive::to_u32(&$t::to_f64(*self))
            }
            /// The exact value (every value of every format is an f32); NaN stays NaN.
            #[inline]
            fn to_f32(&self) -> Option<f32> {
                Some($t::to_f32(*self))
            }
            /// The exact value; NaN stays NaN.
            #[inline]
            fn to_f64(&self) -> Option<f64> {
                Some($t::to_f64(*self))
            }
        }

        impl FromPrimitive for $t {
            /// Rounds once to nearest even; `None` where the result does not stand for the
            /// value (see the module docs).
            #[inline]
            fn from_i64(n: i64) -> Option<Self> {
                <Self as FromPrimitive>::from_i128(n as i128)
            }
            /// Rounds once to nearest even; `None` where the result does not stand for the
            /// value (see the module docs).
            #[inline]
            fn from_u64(n: u64) -> Option<Self> {
                <Self as FromPrimitive>::from_u128(n as u128)
            }
            /// Rounds once to nearest even (no rounding through f64); `None` where the result
            /// does not stand for the value.
            #[inline]
            fn from_i128(n: i128) -> Option<Self> {
                let r = $t::from_int(n);
                represents(&Self::FORMAT, r.0 as u32, n as f64).then_some(r)
            }
            /// Rounds once to nearest even (no rounding through f64); `None` where the result
            /// does not stand for the value.
            #[inline]
            fn from_u128(n: u128) -> Option<Self> {
                let r = $t::from_int(n);
                represents(&Self::FORMAT, r.0 as u32, n as f64).then_some(r)
            }
            /// Rounds once to nearest even; `None` where the result does not stand for the
            /// value.
            #[inline]
            fn from_f32(n: f32) -> Option<Self> {
                let r = $t::from_f32(n);
                represents(&Self::FORMAT, r.0 as u32, n as f64).then_some(r)
            }
            /// Rounds once to nearest even, directly from the f64; `None` where the result does
            /// not stand for the value.
            #[inline]
            fn from_f64(n: f64) -> Option<Self> {
                let r = $t::from_f64(n);
                represents(&Self::FORMAT, r.0 as u32, n).then_some(r)
            }
        }

        impl NumCast for $t {
            /// Rounds the source once, to nearest even: floats from their exact value, integers
            /// beyond 2^53 from their exact 128-bit value. `None` where the result does not stand
            /// for the value (see the module docs) or the source has no numeric value.
            #[inline]
            fn from<N: ToPrimitive>(n: N) -> Option<Self> {
                let x = n.to_f64()?;
                if x.is_finite() && libm::fabs(x) >= 9007199254740992.0 {
                    // An integer source may have been rounded on the way to f64: use the exact
                    // integer when it differs from `x`.
                    if let Some(i) = n.to_i128() {
                        if x as i128 != i {
                            return <Self as FromPrimitive>::from_i128(i);
                        }
                    } else if let Some(u) = n.to_u128() {
                        if x as u128 != u {
                            return <Self as FromPrimitive>::from_u128(u);
                        }
                    }
                }
                <Self as FromPrimitive>::from_f64(x)
            }
        }

        impl Bounded for $t {
            /// The smallest finite value: `-MAX`, or `f8e8m0fnu`'s smallest value 2^-127.
            #[inline]
            fn min_value() -> Self {
                Self::MIN
            }
            /// The largest finite value.
            #[inline]
            fn max_value() -> Self {
                Self::MAX
            }
        }

        impl One for $t {
            /// 1.
            #[inline]
            fn one() -> Self {
                Self::ONE
            }
        }

        impl ConstOne for $t {
            const ONE: Self = $t::ONE;
        }

        impl FloatConst for $t {
            impl_all!(@consts PI, TAU, E, SQRT_2, FRAC_1_SQRT_2, LN_2, LN_10, LOG2_E, LOG10_E,
                LOG2_10, LOG10_2, FRAC_PI_2, FRAC_PI_3, FRAC_PI_4, FRAC_PI_6, FRAC_PI_8,
                FRAC_1_PI, FRAC_2_PI, FRAC_2_SQRT_PI);
        }

        impl TotalOrder for $t {
            /// The IEEE 754 total order (see the inherent `total_cmp`).
            #[inline]
            fn total_cmp(&self, other: &Self) -> Ordering {
                $t::total_cmp(self, other)
            }
        }

        impl MulAdd for $t {
            type Output = Self;
            forward! { $t:
                /// The correctly rounded fused multiply-add `self * a + b`.
                fn mul_add(self, a: Self, b: Self) -> Self;
            }
        }

        impl MulAddAssign for $t {
            /// `*self = self * a + b`, correctly rounded.
            #[inline]
            fn mul_add_assign(&mut self, a: Self, b: Self) {
                *self = $t::mul_add(*self, a, b);
            }
        }

        impl Inv for $t {
            type Output = Self;
            /// The correctly rounded reciprocal.
            #[inline]
            fn inv(self) -> Self {
                $t::recip(self)
            }
        }

        impl_all!(@as_int $t: i8, i16, i32, i64, i128, isize, u8, u16, u32, u64, u128, usize);

        impl AsPrimitive<f32> for $t {
            /// The exact value.
            #[inline]
            fn as_(self) -> f32 {
                $t::to_f32(self)
            }
        }
        impl AsPrimitive<f64> for $t {
            /// The exact value.
            #[inline]
            fn as_(self) -> f64 {
                $t::to_f64(self)
            }
        }
        impl AsPrimitive<$t> for f32 {
            /// Rounds once, to nearest even, with the format's overflow and NaN rules.
            #[inline]
            fn as_(self) -> $t {
                $t::from_f32(self)
            }
        }
        impl AsPrimitive<$t> for f64 {
            /// Rounds once, to nearest even, directly from the f64.
            #[inline]
            fn as_(self) -> $t {
                $t::from_f64(self)
            }
        }
        impl_all!(@int_as $t: i8, i16, i32, i64, i128, isize, u8, u16, u32, u64, u128, usize);
    };

    (@consts $($c:ident),*) => {$(
        #[doc = concat!("The correctly rounded `", stringify!($c), "`.")]
        #[inline]
        fn $c() -> Self {
            Self::$c
        }
    )*};

    (@as_int $t:ident: $($int:ident),*) => {$(
        impl AsPrimitive<$int> for $t {
            /// Like `as` from a float: truncates toward zero, saturates at the integer's bounds
            /// (infinities included), and gives 0 for NaN.
            #[inline]
            fn as_(self) -> $int {
                $t::to_f64(self) as $int
            }
        }
    )*};

    (@int_as $t:ident: $($int:ident),*) => {$(
        impl AsPrimitive<$t> for $int {
            /// Rounds the exact integer once, to nearest even, with the format's overflow rules.
            #[inline]
            fn as_(self) -> $t {
                $t::from_int(self)
            }
        }
    )*};
}

/// `AsPrimitive` between every pair of this crate's types (see [`impl_as_between`]).
macro_rules! impl_as_all_pairs {
    ($(($t:ident, $($rest:tt)*))*) => {
        impl_as_all_pairs!(@each [$($t)*] [$($t),*]);
    };
    (@each [$first:ident $($more:ident)*] [$($u:ident),*]) => {
        impl_as_between!($first: $($u),*);
        impl_as_all_pairs!(@each [$($more)*] [$($u),*]);
    };
    (@each [] [$($u:ident),*]) => {};
}

/// `AsPrimitive` between this crate's types: one rounding from the exact value.
macro_rules! impl_as_between {
    ($t:ident: $($u:ident),*) => {$(
        impl AsPrimitive<$u> for $t {
            /// Rounds once, to nearest even (exact widening to f32, then one rounding).
            #[inline]
            fn as_(self) -> $u {
                $u::from_f32($t::to_f32(self))
            }
        }
    )*};
}

crate::for_each_format!(impl_as_all_pairs, list);

crate::for_each_format!(impl_all);

/// `Zero`, `ConstZero`, `Num` and `Signed`: every type but `f8e8m0fnu`.
macro_rules! impl_signed_with_zero {
    ($t:ident, $variant:ident, $storage:ty, $compute:ty, unsigned, $values:ident, $width:ident) => {};
    ($t:ident, $variant:ident, $storage:ty, $compute:ty, signed, $values:ident, $width:ident) => {
        impl Zero for $t {
            /// +0.
            #[inline]
            fn zero() -> Self {
                Self(0)
            }
            /// Whether the value is ±0.
            #[inline]
            fn is_zero(&self) -> bool {
                self.classify() == FpCategory::Zero
            }
        }

        impl ConstZero for $t {
            const ZERO: Self = Self(0);
        }

        impl Num for $t {
            type FromStrRadixErr = ParseFloatError;

            /// Parses radix 10 with [`FromStr`](core::str::FromStr) (correctly rounded), and
            /// the radixes 2, 4, 8, 16 and 32 exactly, rounding once (syntax: an optional sign,
            /// digits with an optional point, and for radixes up to 16 an optional binary
            /// exponent `p±n`; or `inf`, `infinity`, `nan`). Other radixes, and invalid
            /// strings, give [`ParseErrorKind::Invalid`](crate::ParseErrorKind::Invalid); an
            /// empty string gives [`ParseErrorKind::Empty`](crate::ParseErrorKind::Empty).
            fn from_str_radix(s: &str, radix: u32) -> Result<Self, ParseFloatError> {
                if radix == 10 {
                    return s.parse();
                }
                if s.is_empty() {
                    return Err(ParseFloatError::new(ParseErrorKind::Empty));
                }
                if !matches!(radix, 2 | 4 | 8 | 16 | 32) {
                    return Err(ParseFloatError::new(ParseErrorKind::Invalid));
                }
                match parse_power_of_two_radix(&Self::FORMAT, s, radix) {
                    Some(bits) => Ok(Self(bits as _)),
                    None => Err(ParseFloatError::new(ParseErrorKind::Invalid)),
                }
            }
        }

        impl Signed for $t {
            /// The absolute value (NaN stays NaN).
            #[inline]
            fn abs(&self) -> Self {
                $t::abs(*self)
            }
            /// `self - other` if `self > other`, else +0; NaN if either is NaN.
            #[inline]
            fn abs_sub(&self, other: &Self) -> Self {
                if *self <= *other {
                    Self(0)
                } else {
                    *self - *other
                }
            }
            /// 1 for positive values and +0, -1 for negative values and -0, NaN for NaN.
            #[inline]
            fn signum(&self) -> Self {
                $t::signum(*self)
            }
            /// Whether the sign bit is clear (as num-traits does for `f32`: +0 and +inf
            /// included).
            #[inline]
            fn is_positive(&self) -> bool {
                self.is_sign_positive()
            }
            /// Whether the sign bit is set (-0 included; the `fnuz` formats' NaN, the
            /// negative-zero pattern, too).
            #[inline]
            fn is_negative(&self) -> bool {
                self.is_sign_negative()
            }
        }
    };
}

crate::for_each_format!(impl_signed_with_zero, rows);

/// `integer_decode` as num-traits defines it for `f32`: `(mantissa, exponent, sign)` with
/// `value = sign * mantissa * 2^exponent` for finite values; the implicit bit is included for
/// normal values and subnormals are shifted left one place; infinities and NaN decode like a
/// value with the all-ones exponent field.
#[inline]
fn integer_decode(fmt: &crate::format::Format, bits: u32) -> (u64, i16, i8) {
    let sign = if fmt.is_sign_negative_bits(bits) {
        -1
    } else {
        1
    };
    let mag = bits & fmt.magnitude_mask();
    let field = (mag >> fmt.mantissa_bits) as i16;
    let frac = (mag & fmt.mantissa_mask()) as u64;
    let mantissa = if field == 0 {
        frac << 1
    } else {
        frac | 1 << fmt.mantissa_bits
    };
    (
        mantissa,
        field - fmt.bias as i16 - fmt.mantissa_bits as i16,
        sign,
    )
}

/// `FloatCore` and `Float`: the formats with ±infinity, NaN and -0.
macro_rules! impl_float {
    ($t:ident, $variant:ident, $storage:ty, $compute:ty, $sign:ident, ieee, $width:ident) => {
        impl FloatCore for $t {
            #[inline]
            fn infinity() -> Self {
                Self::INFINITY
            }
            #[inline]
            fn neg_infinity() -> Self {
                Self::NEG_INFINITY
            }
            #[inline]
            fn nan() -> Self {
                Self::NAN
            }
            #[inline]
            fn neg_zero() -> Self {
                Self::NEG_ZERO
            }
            #[inline]
            fn min_value() -> Self {
                Self::MIN
            }
            #[inline]
            fn min_positive_value() -> Self {
                Self::MIN_POSITIVE
            }
            #[inline]
            fn epsilon() -> Self {
                Self::EPSILON
            }
            #[inline]
            fn max_value() -> Self {
                Self::MAX
            }
            forward! { $t:
                fn classify(self) -> FpCategory;
            }
            #[inline]
            fn integer_decode(self) -> (u64, i16, i8) {
                integer_decode(&Self::FORMAT, self.0 as u32)
            }
            forward! { $t:
                fn is_nan(self) -> bool;
                fn is_infinite(self) -> bool;
                fn is_finite(self) -> bool;
                fn is_normal(self) -> bool;
                fn is_subnormal(self) -> bool;
                fn floor(self) -> Self;
                fn ceil(self) -> Self;
                fn round(self) -> Self;
                fn trunc(self) -> Self;
                fn fract(self) -> Self;
                fn abs(self) -> Self;
                fn signum(self) -> Self;
                fn is_sign_positive(self) -> bool;
                fn is_sign_negative(self) -> bool;
                fn min(self, other: Self) -> Self;
                fn max(self, other: Self) -> Self;
                /// Never panics: a NaN bound or `min > max` gives NaN.
                fn clamp(self, min: Self, max: Self) -> Self;
                fn recip(self) -> Self;
                fn powi(self, exp: i32) -> Self;
                fn to_degrees(self) -> Self;
                fn to_radians(self) -> Self;
            }
        }

        impl Float for $t {
            #[inline]
            fn nan() -> Self {
                <Self as FloatCore>::nan()
            }
            #[inline]
            fn infinity() -> Self {
                <Self as FloatCore>::infinity()
            }
            #[inline]
            fn neg_infinity() -> Self {
                <Self as FloatCore>::neg_infinity()
            }
            #[inline]
            fn neg_zero() -> Self {
                <Self as FloatCore>::neg_zero()
            }
            #[inline]
            fn min_value() -> Self {
                Self::MIN
            }
            #[inline]
            fn min_positive_value() -> Self {
                Self::MIN_POSITIVE
            }
            #[inline]
            fn epsilon() -> Self {
                Self::EPSILON
            }
            #[inline]
            fn max_value() -> Self {
                Self::MAX
            }
            forward! { $t:
                fn is_nan(self) -> bool;
                fn is_infinite(self) -> bool;
                fn is_finite(self) -> bool;
                fn is_normal(self) -> bool;
                fn is_subnormal(self) -> bool;
                fn classify(self) -> FpCategory;
                fn floor(self) -> Self;
                fn ceil(self) -> Self;
                fn round(self) -> Self;
                fn trunc(self) -> Self;
                fn fract(self) -> Self;
                fn abs(self) -> Self;
                fn signum(self) -> Self;
                fn is_sign_positive(self) -> bool;
                fn is_sign_negative(self) -> bool;
                fn mul_add(self, a: Self, b: Self) -> Self;
                fn recip(self) -> Self;
                fn powi(self, n: i32) -> Self;
                fn powf(self, n: Self) -> Self;
                fn sqrt(self) -> Self;
                fn exp(self) -> Self;
                fn exp2(self) -> Self;
                fn ln(self) -> Self;
                fn log(self, base: Self) -> Self;
                fn log2(self) -> Self;
                fn log10(self) -> Self;
                fn to_degrees(self) -> Self;
                fn to_radians(self) -> Self;
                fn max(self, other: Self) -> Self;
                fn min(self, other: Self) -> Self;
                /// Never panics: a NaN bound or `min > max` gives NaN.
                fn clamp(self, min: Self, max: Self) -> Self;
            }
            /// `self - other` if `self > other`, else +0 (C's `fdim`); NaN if either is NaN.
            #[inline]
            fn abs_sub(self, other: Self) -> Self {
                if self.is_nan() || other.is_nan() {
                    <Self as FloatCore>::nan()
                } else if self <= other {
                    Self(0)
                } else {
                    self - other
                }
            }
            forward! { $t:
                fn cbrt(self) -> Self;
                fn hypot(self, other: Self) -> Self;
                fn sin(self) -> Self;
                fn cos(self) -> Self;
                fn tan(self) -> Self;
                fn asin(self) -> Self;
                fn acos(self) -> Self;
                fn atan(self) -> Self;
                fn atan2(self, other: Self) -> Self;
                fn sin_cos(self) -> (Self, Self);
                fn exp_m1(self) -> Self;
                fn ln_1p(self) -> Self;
                fn sinh(self) -> Self;
                fn cosh(self) -> Self;
                fn tanh(self) -> Self;
                fn asinh(self) -> Self;
                fn acosh(self) -> Self;
                fn atanh(self) -> Self;
            }
            #[inline]
            fn integer_decode(self) -> (u64, i16, i8) {
                integer_decode(&Self::FORMAT, self.0 as u32)
            }
            forward! { $t:
                fn copysign(self, sign: Self) -> Self;
            }
        }
    };
    ($t:ident, $variant:ident, $storage:ty, $compute:ty, $sign:ident, $values:ident, $width:ident) => {};
}

crate::for_each_format!(impl_float, rows);
