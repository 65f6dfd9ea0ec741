//! The f64 evaluations behind the methods, with the care each needs to round once into a
//! format: NaN results made one NaN, logarithms to any base, TwoSum, `pow` kept off zero,
//! `hypot`, and `atan2` and `fma`, which round themselves.

use crate::format::Format;
use crate::round::{self, Decoded, Rounding};

/// `y`, or for any NaN the one NaN every NaN result is converted from: the negative quiet NaN
/// of x86's arithmetic (see [`Function::apply`]).
#[inline]
pub(super) fn result(y: f64) -> f64 {
    if y.is_nan() { -f64::NAN } else { y }
}

/// `log_base(x)` in f64: `log2(x) / log2(base)`, with `log2` and `log10` themselves for the bases
/// 2 and 10. `log2` is exact on powers of two, so a power-of-two base and argument give the
/// exact quotient rounded once.
#[inline]
pub(super) fn log_base(x: f64, base: f64) -> f64 {
    if base == 2.0 {
        libm::log2(x)
    } else if base == 10.0 {
        libm::log10(x)
    } else {
        libm::log2(x) / libm::log2(base)
    }
}

/// `a + b` rounded to f64, and its rounding error, exactly: TwoSum (Knuth), for any finite
/// `a` and `b` whose sum does not overflow.
#[inline]
pub(super) fn two_sum(a: f64, b: f64) -> (f64, f64) {
    let s = a + b;
    let b_part = s - a;
    let a_part = s - b_part;
    (s, (a - a_part) + (b - b_part))
}

/// `x^y` in f64. A finite nonzero `x` with a finite `y` has a nonzero result, so when libm's
/// result underflows to zero the smallest subnormal of the right sign stands in for it: it
/// rounds to the same zero in every format with one, and to E8M0's smallest value, which is
/// what a tiny positive value rounds to there.
#[inline]
pub(super) fn pow(x: f64, y: f64) -> f64 {
    let r = libm::pow(x, y);
    if r == 0.0 && x != 0.0 && x.is_finite() && y.is_finite() {
        libm::copysign(f64::from_bits(1), r)
    } else {
        r
    }
}

/// `sqrt(a*a + b*b)` in f64, with `hypot(±inf, NaN) = +inf` as IEEE 754 requires.
#[inline]
pub(super) fn hypot(a: f64, b: f64) -> f64 {
    if a.is_infinite() || b.is_infinite() {
        f64::INFINITY
    } else {
        // Both squares are exact (at most 22 significant bits); the sum rounds once.
        libm::sqrt(a * a + b * b)
    }
}

/// `atan2(y, x)` rounded once into `fmt`, for `y`, `x` values of `fmt` as f64.
///
/// For a tiny quotient `q = y/x` (with `x > 0`) the result `atan(q)` lies strictly between
/// `q (1 - q²/3)` and `q`, too close to `q` for an f64 to tell apart: libm returns `q` itself,
/// which may be exactly a rounding boundary (a midpoint of the format) that the exact result is
/// just below. So this range is rounded here: if `q` is exactly an f64, the result is `q`
/// nudged a quarter of an f64 ulp toward zero, which no boundary separates from `atan(q)`;
/// if not, `q` is at least `2^-24 |q|` from every boundary (its numerator `y - b x` is a
/// nonzero multiple of a quantum at least `2^-24 |y|`), far more than `|atan(q) - q| <
/// 2^-29 |q|` and the f64 rounding error, so rounding the f64 quotient is correct.
#[inline]
pub(super) fn atan2_bits(fmt: &Format, y: f64, x: f64) -> u32 {
    if x > 0.0 && x.is_finite() && y != 0.0 && y.is_finite() {
        let q = y / x;
        if libm::fabs(q) < TINY_QUOTIENT {
            if libm::fma(q, x, -y) != 0.0 {
                return round::from_f64_nearest(fmt, q, false);
            }
            if let Decoded::Finite { neg, sig, exp } = round::decode_f64(q) {
                return round::round_finite(
                    fmt,
                    neg,
                    4 * sig - 1,
                    exp - 2,
                    Rounding::NearestEven,
                    false,
                );
            }
        }
    }
    round::from_f64_nearest(fmt, result(libm::atan2(y, x)), false)
}

/// Below this quotient `atan2` is rounded from the quotient itself (see [`atan2_bits`]).
const TINY_QUOTIENT: f64 = 1.0 / 16384.0;

/// `x * y + z` rounded once into `fmt`, for `x`, `y`, `z` values of `fmt` as f64 (see the
/// module docs for why this is correctly rounded).
#[inline]
pub(super) fn fused_mul_add(fmt: &Format, x: f64, y: f64, z: f64) -> u32 {
    // Exact for finite values: at most 2 * 11 significant bits, |exponent| below 270.
    let p = x * y;
    let (s, e) = two_sum(p, z);
    if !s.is_finite() {
        // A NaN or infinite operand, or inf - inf: the f64 result is the IEEE one.
        return round::from_f64_nearest(fmt, result(s), false);
    }
    if e == 0.0 {
        return round::from_f64_nearest(fmt, s, false);
    }
    match round::decode_f64(s) {
        Decoded::Finite { neg, sig, exp } => {
            // The exact sum lies strictly between s and its neighbour on e's side, as does
            // s ± ulp(s)/4; no f64 number, so no rounding boundary of fmt, separates them.
            let away = (e > 0.0) != neg;
            let sig = if away { 4 * sig + 1 } else { 4 * sig - 1 };
            round::round_finite(fmt, neg, sig, exp - 2, Rounding::NearestEven, false)
        }
        // Unreachable: a sum of two finite f64s that rounds to zero is exactly zero (e = 0).
        _ => round::from_f64_nearest(fmt, s, false),
    }
}
