//! The math functions, computed in f64 and rounded once: the methods of every format
//! (`f16::sin`, `bf16::gelu`, ...), and [`Function`], the same one-argument functions as values.
//!
//! Every function takes its arguments exactly into f64 (`to_f64` is exact for every format),
//! evaluates there with the `libm` crate (a port of musl/FreeBSD msun; the crate is `no_std`, so
//! not std's `f64` methods), and rounds the f64 result once into the format with
//! [`from_f64`](crate::f16::from_f64): to nearest, ties to even, with the format's own overflow,
//! NaN and zero rules. This module's docs explain why that is *correctly rounded*, and what the
//! tests (`tests/math_correct_rounding.rs`) check to prove it.
//!
//! # Why f64-then-round-once is correctly rounded
//!
//! Let `F` be a format of this crate (precision `p <= 11` bits), `x` a value of `F`, `Y = f(x)`
//! the exact result and `y` the f64 that libm returns. `RN_F` (rounding to nearest even into
//! `F`) is a monotone step function: it is constant on each interval between two consecutive
//! *boundaries*, which are
//!
//! * the midpoints between adjacent values of `F` (ties go to the even one),
//! * the overflow thresholds `±(MAX + ulp(MAX)/2)` (none in FP6/FP4, which saturate),
//! * zero, where the sign of a zero result or E8M0's NaN for non-positive values changes.
//!
//! All of them have at most `p + 1 <= 12` significant bits and exponents between -135 and 129,
//! so every boundary is an f64 number.
//!
//! **The error model.** libm's documented errors for the functions used here are below 1 ulp
//! (musl/FreeBSD `exp`, `log`, `log1p`, `sin`, `cos`, `tan`, `asin`, `acos`, `atan`, `pow`),
//! below 2 ulp (`tanh`, `asinh`, `acosh`, `atanh`), or correctly rounded (`sqrt`, `cbrt`,
//! `floor`, ...). Compositions done here (`1/sqrt(x)`, `x * (180/π)`, `log2(x)/log2(b)`) add at
//! most two more roundings. The activation functions (`sigmoid`, `log_sigmoid`, `softplus`,
//! `silu`, `softsign`, `tanh_shrink`, `gelu`) are compositions in forms that neither overflow nor
//! cancel; `activation.rs` bounds each one's error (17 ulps at most, `gelu` 520 for `|x| <= 16`
//! and `2^13` beyond, where its result is below 2^-186 and the tests use that bound). We
//! assume a bound `B = 2^10` f64 ulps of `y` (`2^13` for that tail of `gelu`), more than 250
//! times the largest documented libm error and twice the largest composition bound:
//! `|y - Y| <= B ulp(y)`, a zero `y` having the sign of `Y`
//! (exact zero results included, whose sign IEEE 754 fixes), and an infinite `y` only for an
//! infinite `Y` or `|Y| > 2^1023`. The tests measure libm against a 256-bit evaluation
//! (astro-float): on a sample of inputs of every function in the regular run, and on all f16
//! and bf16 inputs of every function in an on-demand run (the oracle,
//! `oracle_every_16_bit_input`); the largest error of libm's own functions is 1.98 ulp
//! (`tanh`), more than 500 times inside the bound, and the compositions stay within theirs.
//!
//! **The check.** If the interval `I = [y - B ulp(y), y + B ulp(y)]`, which contains `Y`, holds
//! no boundary, then `RN_F(y) = RN_F(Y)`: both ends of `I` round to the same value, so by
//! monotonicity everything in `I` does. The test computes `I` (rounded outward) for *every*
//! input of *every* format and every one-argument function and checks that its ends round to
//! the same bits as `y`. The few inputs where this fails are listed and settled one by one,
//! independently of libm: either the result is exact (`exp2(-25) = 2^-25`, which for f16 is
//! exactly the tie between 0 and the smallest subnormal and so rounds to the even 0, exactly as
//! `RN_F(y)` does since `y = Y`), or a 256-bit astro-float evaluation of `Y` shows it lies
//! strictly inside the same rounding interval as `y`. So for every input the result is
//! `RN_F(Y)`: every one-argument function is correctly rounded for every input of every format.
//!
//! The exact cases come out exact: `sqrt` of a perfect square, `exp(0) = 1`, `ln(1) = 0`,
//! `log2(2^k) = k`, `cos(0) = 1`, and so on, because libm returns them exactly and they are
//! values of the format (or ties, rounded to even).
//!
//! # Functions of two or three arguments
//!
//! * [`mul_add`](crate::f16::mul_add) is correctly rounded by construction: `a * b` is exact in
//!   f64 (at most 22 significant bits, exponents within ±270), `s = a*b + c` is rounded to f64
//!   and its error `e` is recovered exactly with TwoSum. If `e = 0`, `s` is the exact result.
//!   Otherwise the exact result lies strictly between `s` and its f64 neighbour on `e`'s side,
//!   within half the gap, and so does the number `s ± ulp(s)/4`, written `(4 sig ± 1) *
//!   2^(exp-2)` for `s = sig * 2^exp`; no f64 number, hence no boundary, separates the two, so
//!   rounding that 55-bit number exactly with the engine gives the correctly rounded result.
//! * [`hypot`](crate::f16::hypot) computes `sqrt(a*a + b*b)` in f64 and is correctly rounded; its
//!   docs give the argument.
//! * [`powf`](crate::f16::powf), [`powi`](crate::f16::powi), [`atan2`](crate::f16::atan2) and
//!   [`log`](crate::f16::log) rely on the same error model; the tests check every pair of
//!   every 8-bit and narrower format (correctly rounded) and hundreds of thousands of f16 and
//!   bf16 pairs. For f16 and bf16 they are correctly rounded except possibly when the exact
//!   result lies within `2^-40` (relative) of a boundary, and always faithful.
//!
//! One structured case defeats the error model and is handled apart: `atan2(y, x)` with a tiny
//! quotient `q = y/x`. The exact result `atan(q) = q (1 - q²/3 + ...)` is then closer to `q`
//! than an f64 can resolve, and `q` itself may be exactly a midpoint of the format (in bf16,
//! `atan2(-1.1655e-17, 2.5383e23)` has `q = -2^-134`, the tie between -0 and the smallest
//! subnormal): libm returns the tie and rounding it to even goes the wrong way. Below
//! `|q| = 2^-14` the quotient is rounded directly, nudged toward zero when it is exact (see
//! `atan2_bits`); the tests check that range against exact comparisons. No one-argument function
//! has this problem (their arguments are values of the format, never midpoints), and the
//! exhaustive proof would have caught it.

mod activation;
mod function;

pub use function::Function;

use function::result;

use crate::round::{self, Decoded, Rounding};

/// `log_base(x)` in f64: `log2(x) / log2(base)`, with `log2` and `log10` themselves for the bases
/// 2 and 10. `log2` is exact on powers of two, so a power-of-two base and argument give the
/// exact quotient rounded once.
#[inline]
fn log_base(x: f64, base: f64) -> f64 {
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
fn two_sum(a: f64, b: f64) -> (f64, f64) {
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
fn pow(x: f64, y: f64) -> f64 {
    let r = libm::pow(x, y);
    if r == 0.0 && x != 0.0 && x.is_finite() && y.is_finite() {
        libm::copysign(f64::from_bits(1), r)
    } else {
        r
    }
}

/// `sqrt(a*a + b*b)` in f64, with `hypot(±inf, NaN) = +inf` as IEEE 754 requires.
#[inline]
fn hypot(a: f64, b: f64) -> f64 {
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
fn atan2_bits(fmt: &crate::format::Format, y: f64, x: f64) -> u32 {
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
fn fused_mul_add(fmt: &crate::format::Format, x: f64, y: f64, z: f64) -> u32 {
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

/// The paragraph on rounding and special values shared by every function's docs.
macro_rules! rounding_note {
    () => {
        "\n\nThe result is rounded once, to nearest with ties to even (`f8e8m0fnu`: ties up), \
         as [`Self::from_f64`] rounds: above \
         the largest finite value it is ±infinity, NaN in formats without infinities (the `fn` \
         and `fnuz` FP8 formats, `f8e8m0fnu`), or ±MAX in the FP6/FP4 formats, which saturate. \
         The FP6/FP4 formats have no NaN either: where the result is NaN they give +0 (every \
         NaN result is converted from x86's negative NaN, and these formats convert a NaN to \
         the zero of the other sign, as ml_dtypes does); elsewhere a NaN result is the \
         format's NaN with the sign bit set. The \
         `fnuz` formats have no -0: a -0 result is +0. `f8e8m0fnu` is unsigned and has no \
         zero: a zero or negative result is NaN there, and a positive result below 2^-127 is \
         2^-127."
    };
}

/// The accuracy statement of the one-argument functions.
macro_rules! correctly_rounded {
    () => {
        "\n\nCorrectly rounded for every input of every format: computed in f64 and rounded \
         once, and the tests prove, input by input, that the f64 result rounds like the exact \
         one."
    };
}

/// The accuracy statement of `powf`, `powi`, `atan2` and `log`.
macro_rules! two_argument_accuracy {
    () => {
        "\n\nAccuracy: computed in f64 with libm (error a few f64 ulps at most) and rounded \
         once. Correctly rounded for every pair of arguments in the 8-bit and narrower formats \
         (the tests check all of them). For f16 and bf16 the result is correctly rounded \
         unless the exact result lies within 2^-40 (relative) of a rounding boundary, and \
         always faithful: one of the two values adjacent to the exact result."
    };
}

macro_rules! unary {
    ($(#[$doc:meta])* $name:ident, $f:ident) => {
        $(#[$doc])*
        #[doc = correctly_rounded!()]
        #[doc = rounding_note!()]
        #[inline]
        pub fn $name(self) -> Self {
            Function::$f.apply(self)
        }
    };
}

macro_rules! constants {
    ($($name:ident = $value:ident, $what:literal;)*) => {$(
        #[doc = concat!($what, ", correctly rounded (`from_f64_const(core::f64::consts::",
            stringify!($value), ")`; the tests check it against a 256-bit value).")]
        pub const $name: Self = Self::from_f64_const(core::f64::consts::$value);
    )*};
}

macro_rules! impl_math {
    ($t:ident) => {
        impl crate::$t {
            constants! {
                PI = PI, "Archimedes' constant π";
                TAU = TAU, "The full circle constant τ = 2π";
                E = E, "Euler's number e";
                SQRT_2 = SQRT_2, "√2";
                FRAC_1_SQRT_2 = FRAC_1_SQRT_2, "1/√2";
                LN_2 = LN_2, "ln(2)";
                LN_10 = LN_10, "ln(10)";
                LOG2_E = LOG2_E, "log₂(e)";
                LOG10_E = LOG10_E, "log₁₀(e)";
                LOG2_10 = LOG2_10, "log₂(10)";
                LOG10_2 = LOG10_2, "log₁₀(2)";
                FRAC_PI_2 = FRAC_PI_2, "π/2";
                FRAC_PI_3 = FRAC_PI_3, "π/3";
                FRAC_PI_4 = FRAC_PI_4, "π/4";
                FRAC_PI_6 = FRAC_PI_6, "π/6";
                FRAC_PI_8 = FRAC_PI_8, "π/8";
                FRAC_1_PI = FRAC_1_PI, "1/π";
                FRAC_2_PI = FRAC_2_PI, "2/π";
                FRAC_2_SQRT_PI = FRAC_2_SQRT_PI, "2/√π";
            }

            unary!(
                /// The square root.
                ///
                /// `sqrt(±0) = ±0`, `sqrt(+inf) = +inf`; a negative input or NaN gives NaN.
                /// The square root of a perfect square is exact.
                sqrt, Sqrt
            );
            unary!(
                /// The reciprocal square root, `1/sqrt(self)`.
                ///
                /// `rsqrt(±0) = ±inf`, `rsqrt(+inf) = +0`; a negative input or NaN gives NaN.
                rsqrt, Rsqrt
            );
            unary!(
                /// The reciprocal, `1/self`.
                ///
                /// `recip(±0) = ±inf`, `recip(±inf) = ±0`, NaN gives NaN.
                recip, Recip
            );
            unary!(
                /// `e^self`.
                ///
                /// `exp(±0) = 1` exactly, `exp(-inf) = +0`, `exp(+inf) = +inf`, NaN gives NaN;
                /// large inputs overflow and very negative ones underflow to +0.
                exp, Exp
            );
            unary!(
                /// `2^self`.
                ///
                /// Exact for integer inputs within range (`exp2(-25)` in f16 is the tie
                /// 2^-25, which rounds to the even +0). `exp2(±0) = 1`, `exp2(-inf) = +0`,
                /// `exp2(+inf) = +inf`, NaN gives NaN.
                exp2, Exp2
            );
            unary!(
                /// `e^self - 1`, accurate also for `self` near zero.
                ///
                /// `exp_m1(±0) = ±0`, `exp_m1(-inf) = -1`, `exp_m1(+inf) = +inf`, NaN gives NaN.
                exp_m1, ExpM1
            );
            unary!(
                /// The natural logarithm.
                ///
                /// `ln(1) = +0`, `ln(±0) = -inf`, `ln(+inf) = +inf`; a negative input or NaN
                /// gives NaN.
                ln, Ln
            );
            unary!(
                /// The base-2 logarithm.
                ///
                /// Exact for powers of two (`log2(2^k) = k`, rounded to even when `k` is a
                /// tie of the format). `log2(1) = +0`, `log2(±0) = -inf`, `log2(+inf) = +inf`;
                /// a negative input or NaN gives NaN.
                log2, Log2
            );
            unary!(
                /// The base-10 logarithm.
                ///
                /// Exact for powers of ten. `log10(1) = +0`, `log10(±0) = -inf`,
                /// `log10(+inf) = +inf`; a negative input or NaN gives NaN.
                log10, Log10
            );
            unary!(
                /// `ln(1 + self)`, accurate also for `self` near zero.
                ///
                /// `ln_1p(±0) = ±0`, `ln_1p(-1) = -inf`, `ln_1p(+inf) = +inf`; an input below
                /// -1 or NaN gives NaN.
                ln_1p, Ln1p
            );

            /// The logarithm of `self` to the base `base`, evaluated in f64 as
            /// `log2(self) / log2(base)` (and exactly as [`Self::log2`] and [`Self::log10`]
            /// for the bases 2 and 10), then rounded once.
            ///
            /// Powers of two to a power-of-two base give the exact quotient rounded once
            /// (`log(8, 4) = 1.5`). The special values follow from IEEE arithmetic on the two
            /// logarithms: a negative `self` or `base`, or NaN, gives NaN; `base = 1` gives
            /// `±inf` (NaN for `self = 1`); `self = 0` gives `∓inf`; `base = 0` or `+inf`
            /// gives `±0`.
            #[doc = two_argument_accuracy!()]
            #[doc = rounding_note!()]
            #[inline]
            pub fn log(self, base: Self) -> Self {
                Self::from_f64(result(log_base(self.to_f64(), base.to_f64())))
            }

            /// `self` raised to the power `n`, evaluated with libm's `pow` in f64 and rounded
            /// once.
            ///
            /// Special values as C's `pow`: `powf(x, ±0) = 1` and `powf(1, y) = 1` for every
            /// `x` and `y`, NaN included; otherwise NaN gives NaN. A negative finite `self`
            /// with a non-integer `n` gives NaN. `powf(±0, n)` is `±0` for odd integers
            /// `n > 0`, `+0` for other `n > 0`, `±inf` for odd integers `n < 0` and `+inf`
            /// for other `n < 0`. `powf(-1, ±inf) = 1`; `|self| < 1` gives `+0` for
            /// `n = +inf` and `+inf` for `n = -inf`, `|self| > 1` the reverse. Infinite
            /// `self` follows `powf(±0, -n)`. Exact results (`powf(3, 2) = 9`,
            /// `powf(4, 0.5) = 2`) come out exact, rounded to even if they are ties.
            #[doc = two_argument_accuracy!()]
            #[doc = rounding_note!()]
            #[inline]
            pub fn powf(self, n: Self) -> Self {
                Self::from_f64(result(pow(self.to_f64(), n.to_f64())))
            }

            /// `self` raised to the integer power `n`: exactly [`Self::powf`] with `n`
            /// converted exactly to f64 (`powi(x, 0) = 1` for every `x`, NaN included).
            #[doc = two_argument_accuracy!()]
            #[doc = rounding_note!()]
            #[inline]
            pub fn powi(self, n: i32) -> Self {
                Self::from_f64(result(pow(self.to_f64(), n as f64)))
            }

            unary!(
                /// The sine (of an angle in radians).
                ///
                /// `sin(±0) = ±0`; `sin(±inf)` and NaN give NaN.
                sin, Sin
            );
            unary!(
                /// The cosine (of an angle in radians).
                ///
                /// `cos(±0) = 1`; `cos(±inf)` and NaN give NaN.
                cos, Cos
            );
            unary!(
                /// The tangent (of an angle in radians).
                ///
                /// `tan(±0) = ±0`; `tan(±inf)` and NaN give NaN.
                tan, Tan
            );

            /// The sine and the cosine, `(self.sin(), self.cos())`, each correctly rounded.
            /// Special values as [`Self::sin`] and [`Self::cos`].
            #[doc = rounding_note!()]
            #[inline]
            pub fn sin_cos(self) -> (Self, Self) {
                (self.sin(), self.cos())
            }

            unary!(
                /// The arcsine, in radians in `[-π/2, π/2]`.
                ///
                /// `asin(±0) = ±0`; `|self| > 1` and NaN give NaN.
                asin, Asin
            );
            unary!(
                /// The arccosine, in radians in `[0, π]`.
                ///
                /// `acos(1) = +0`; `|self| > 1` and NaN give NaN.
                acos, Acos
            );
            unary!(
                /// The arctangent, in radians in `[-π/2, π/2]`.
                ///
                /// `atan(±0) = ±0`, `atan(±inf) = ±π/2` (rounded); NaN gives NaN.
                atan, Atan
            );

            /// The four-quadrant arctangent of `self / other` (`self` is the y coordinate,
            /// `other` the x coordinate), in radians in `[-π, π]`.
            ///
            /// Special values as C's `atan2`: `atan2(±0, +0) = ±0`, `atan2(±0, -0) = ±π`,
            /// `atan2(±0, x < 0) = ±π`, `atan2(±0, x > 0) = ±0`, `atan2(y, ±0) = ±π/2` for
            /// `y ≠ 0` of that sign, `atan2(±y, -inf) = ±π` and `atan2(±y, +inf) = ±0` for
            /// finite `y`, `atan2(±inf, x) = ±π/2` for finite `x`, `atan2(±inf, -inf) =
            /// ±3π/4`, `atan2(±inf, +inf) = ±π/4` (all rounded); NaN gives NaN.
            ///
            /// When `other > 0` and `|self / other| < 2^-14`, the result `atan(q)` of the
            /// quotient `q` is closer to `q` than f64 can resolve, and `q` may be exactly a tie
            /// of the format; there it is rounded from the quotient itself, just toward zero,
            /// which is correctly rounded for every format (see the `math` module docs).
            #[doc = two_argument_accuracy!()]
            #[doc = rounding_note!()]
            #[inline]
            pub fn atan2(self, other: Self) -> Self {
                Self(atan2_bits(&Self::FORMAT, self.to_f64(), other.to_f64()) as _)
            }

            unary!(
                /// The hyperbolic sine.
                ///
                /// `sinh(±0) = ±0`, `sinh(±inf) = ±inf`, NaN gives NaN; large inputs overflow.
                sinh, Sinh
            );
            unary!(
                /// The hyperbolic cosine.
                ///
                /// `cosh(±0) = 1`, `cosh(±inf) = +inf`, NaN gives NaN; large inputs overflow.
                cosh, Cosh
            );
            unary!(
                /// The hyperbolic tangent.
                ///
                /// `tanh(±0) = ±0`, `tanh(±inf) = ±1`, NaN gives NaN.
                tanh, Tanh
            );
            unary!(
                /// The inverse hyperbolic sine.
                ///
                /// `asinh(±0) = ±0`, `asinh(±inf) = ±inf`, NaN gives NaN.
                asinh, Asinh
            );
            unary!(
                /// The inverse hyperbolic cosine.
                ///
                /// `acosh(1) = +0`, `acosh(+inf) = +inf`; an input below 1 or NaN gives NaN.
                acosh, Acosh
            );
            unary!(
                /// The inverse hyperbolic tangent.
                ///
                /// `atanh(±0) = ±0`, `atanh(±1) = ±inf`; `|self| > 1` and NaN give NaN.
                atanh, Atanh
            );
            unary!(
                /// The cube root.
                ///
                /// `cbrt(±0) = ±0`, `cbrt(±inf) = ±inf`, NaN gives NaN; negative inputs give
                /// negative results. The cube root of a perfect cube is exact.
                cbrt, Cbrt
            );
            unary!(
                /// The largest integer less than or equal to `self`.
                ///
                /// Exact: `±0`, `±inf` and NaN are returned unchanged, and `floor(-0.5) = -1`.
                floor, Floor
            );
            unary!(
                /// The smallest integer greater than or equal to `self`.
                ///
                /// `±0`, `±inf` and NaN are returned unchanged; `ceil(-0.5) = -0`. The result
                /// is exact except where the integer is beyond the largest finite value:
                /// `ceil(15.5)` in `f8e3m4` (max 15.5) overflows to +inf, and in `f6e2m3fn`
                /// `ceil(7.5)` saturates to 7.5.
                ceil, Ceil
            );
            unary!(
                /// The nearest integer, halfway cases away from zero (`round(2.5) = 3`,
                /// `round(-0.5) = -1`).
                ///
                /// `±0`, `±inf` and NaN are returned unchanged; `round(-0.25) = -0`. Exact,
                /// except that an integer beyond the largest finite value overflows, as for
                /// [`Self::ceil`] (`round(15.5)` in `f8e3m4` is +inf).
                round, Round
            );
            unary!(
                /// The nearest integer, halfway cases to the even one (`2.5` gives 2,
                /// `3.5` gives 4).
                ///
                /// `±0`, `±inf` and NaN are returned unchanged; `round_ties_even(-0.5) = -0`.
                /// Exact, except that an integer beyond the largest finite value overflows, as
                /// for [`Self::ceil`].
                round_ties_even, RoundTiesEven
            );
            unary!(
                /// The integer part, rounding toward zero.
                ///
                /// Exact: `±0`, `±inf` and NaN are returned unchanged, `trunc(-0.5) = -0`.
                trunc, Trunc
            );
            unary!(
                /// The fractional part, `self - self.trunc()`, with the sign of `self`
                /// (`fract(-1.25) = -0.25`).
                ///
                /// Exact. An integer (`±0` included) gives +0; `±inf` and NaN give NaN.
                fract, Fract
            );

            unary!(
                /// `self * self`, exact in f64 and rounded once (as `self * self` is).
                ///
                /// `±0` gives `+0`, `±inf` gives `+inf`, NaN gives NaN; large values overflow.
                square, Square
            );
            unary!(
                /// The rectifier, `max(self, 0)`.
                ///
                /// Exact: negative values and `-0` give `+0`, NaN gives NaN.
                relu, Relu
            );
            unary!(
                /// The logistic function, `1 / (1 + e^-self)`, evaluated in a form that cannot
                /// overflow.
                ///
                /// `sigmoid(±0) = 1/2`, `sigmoid(+inf) = 1`, `sigmoid(-inf) = +0`, NaN gives
                /// NaN.
                sigmoid, Sigmoid
            );
            unary!(
                /// The logarithm of the logistic function, `ln(1 / (1 + e^-self))`, without
                /// overflow or cancellation.
                ///
                /// `log_sigmoid(±0) = -ln 2`, `log_sigmoid(+inf) = -0`,
                /// `log_sigmoid(-inf) = -inf`, NaN gives NaN; always `<= 0`.
                log_sigmoid, LogSigmoid
            );
            unary!(
                /// Softplus, `ln(1 + e^self)`, a smooth `max(self, 0)`, evaluated without
                /// overflow or cancellation.
                ///
                /// `softplus(±0) = ln 2`, `softplus(+inf) = +inf`, `softplus(-inf) = +0`, NaN
                /// gives NaN; always `>= 0`.
                softplus, Softplus
            );
            unary!(
                /// SiLU (swish), `self * sigmoid(self)`.
                ///
                /// `silu(±0) = ±0`, `silu(+inf) = +inf`, `silu(-inf) = -0`, NaN gives NaN.
                silu, Silu
            );
            unary!(
                /// Softsign, `self / (1 + |self|)`.
                ///
                /// `softsign(±0) = ±0`, `softsign(±inf) = ±1`, NaN gives NaN.
                softsign, Softsign
            );
            unary!(
                /// `self - tanh(self)`, accurate near 0 (where the naive difference cancels).
                ///
                /// `tanh_shrink(±0) = ±0`, `tanh_shrink(±inf) = ±inf`, NaN gives NaN.
                tanh_shrink, TanhShrink
            );
            unary!(
                /// The exact (erf) GELU, `self * Φ(self)` with `Φ` the standard normal
                /// distribution function (not the tanh approximation).
                ///
                /// `gelu(±0) = ±0`, `gelu(+inf) = +inf`, `gelu(-inf) = -0`, NaN gives NaN;
                /// large negative inputs give tiny negative results, `-0` once below the
                /// format's smallest value.
                gelu, Gelu
            );

            /// The length of the hypotenuse, `sqrt(self² + other²)`, without overflow in the
            /// intermediate squares.
            ///
            /// `hypot(±inf, y) = +inf` even when `y` is NaN; otherwise NaN gives NaN.
            /// `hypot(x, ±0) = |x|`.
            ///
            /// Correctly rounded for every pair of arguments. The squares are exact in f64 and
            /// their sum `s` is rounded once; then `sqrt` is correctly rounded. Let `b` be a
            /// rounding boundary (at most `p + 1` significant bits). If `s ≠ b²` exactly, then
            /// `|s - b²| >= 2^-(3p+5) b²`: when `other²` is below half of `|self² - b²|`, that
            /// difference is at least `2^-(p+5) b²` because `self` is at least a quarter of its
            /// ulp from `b`; otherwise `other` is large enough that `s - b²`, a multiple of the
            /// squared quanta, is at least `2^-(3p+5) b²`. With
            /// `p <= 11`, `2^-38` dwarfs the `2^-52` relative error of the f64 evaluation, so
            /// the f64 result is on the same side of every boundary as the exact one; and if
            /// `s = b²` exactly, every step is exact (`hypot(3, 4) = 5`, a tie in `f4e2m1fn`,
            /// rounds to the even 4). The tests check every pair of the 8-bit and narrower
            /// formats and millions of f16 and bf16 pairs against an exact comparison.
            #[doc = rounding_note!()]
            #[inline]
            pub fn hypot(self, other: Self) -> Self {
                Self::from_f64(result(hypot(self.to_f64(), other.to_f64())))
            }

            /// The fused multiply-add `self * a + b`, with one rounding of the exact result.
            ///
            /// Correctly rounded for every triple of arguments (the module docs of `math.rs`
            /// give the construction: the product is exact in f64, the sum's rounding error is
            /// recovered exactly and decides the rounding). Special values as IEEE 754
            /// `fusedMultiplyAdd`: NaN if any argument is NaN, if `self * a` is `0 * inf`, or
            /// if it is an infinity that `b` cancels (`inf - inf`). An exactly zero result is
            /// +0 unless both `self * a` and `b` are -0.
            #[doc = rounding_note!()]
            #[inline]
            pub fn mul_add(self, a: Self, b: Self) -> Self {
                Self(fused_mul_add(&Self::FORMAT, self.to_f64(), a.to_f64(), b.to_f64()) as _)
            }

            unary!(
                /// Converts radians to degrees: `self * (180/π)`.
                ///
                /// `±0` gives `±0`, `±inf` gives `±inf`, NaN gives NaN; large values overflow.
                to_degrees, ToDegrees
            );
            unary!(
                /// Converts degrees to radians: `self * (π/180)`.
                ///
                /// `±0` gives `±0`, `±inf` gives `±inf`, NaN gives NaN; tiny values may
                /// underflow to `±0`.
                to_radians, ToRadians
            );
        }
    };
}

crate::for_each_format!(impl_math);
