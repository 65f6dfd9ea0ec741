//! The math methods of every type (`f16::sin`, `bf16::powf`, `hypot`, `mul_add`, ...), each
//! evaluated in f64 and rounded once; the `math` module docs give the argument for each.

use super::function::Function;
use super::in_f64::{atan2_bits, fused_mul_add, hypot, log_base, pow, result};

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
