//! The one-argument functions as values: each one's name and its f64 evaluation, the one list
//! that the methods of every format (`f16::sin`, ...) and the tensor kernels of other crates
//! are made from.

use super::activation;
use super::in_f64::result;
use crate::LowpFloat;

/// 180/π rounded to f64, as std's `f64::to_degrees` uses.
const DEGREES_PER_RADIAN: f64 = 180.0 / core::f64::consts::PI;
/// π/180 rounded to f64, as std's `f64::to_radians` uses.
const RADIANS_PER_DEGREE: f64 = core::f64::consts::PI / 180.0;

/// libm's `acosh` on its domain `x >= 1`, NaN elsewhere: libm (musl's) picks its formula by
/// `|x|` and returns numbers for `x <= -2` (`-6540` gave `-15.48`), so the domain is checked
/// here rather than assumed of it.
fn acosh_in_domain(x: f64) -> f64 {
    if x >= 1.0 { libm::acosh(x) } else { f64::NAN }
}

/// `max(x, 0)` with NaN kept and `-0` made `+0`.
fn relu(x: f64) -> f64 {
    if x > 0.0 || x.is_nan() { x } else { 0.0 }
}

macro_rules! functions {
    ($($(#[$doc:meta])* $variant:ident $name:literal $eval:expr;)*) => {
        /// A function of one real argument that lowp evaluates correctly rounded in every
        /// format: the method of the same name on every type (`f16::sin`, `bf16::gelu`, ...)
        /// is [`Function::apply`].
        ///
        /// Each function is evaluated in f64 by [`Function::eval`] and rounded once into the
        /// format. For the values of every lowp format (at most 11 significant bits) the f64
        /// result is close enough to the exact one that rounding it once gives the correctly
        /// rounded result, for every input: the `math` module docs give the argument and
        /// `tests/math_correct_rounding.rs` checks it input by input. (For f32 or f64
        /// arguments `eval` is an ordinary f64 evaluation, within a few f64 ulps, not
        /// correctly rounded.)
        ///
        /// ```
        /// use lowp::math::Function;
        /// use lowp::{bf16, f16};
        ///
        /// assert_eq!(Function::Sin.apply(f16::from_f32(0.5)), f16::from_f32(0.5).sin());
        /// assert_eq!(Function::from_name("gelu"), Some(Function::Gelu));
        /// let y = Function::Sigmoid.apply(bf16::from_f32(0.0));
        /// assert_eq!(y.to_f32(), 0.5);
        /// ```
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        #[non_exhaustive]
        pub enum Function {
            $($(#[$doc])* $variant,)*
        }

        impl Function {
            /// Every function, in the order of this list.
            pub const ALL: &'static [Function] = &[$(Function::$variant),*];

            /// The name: the method's name on the format types (`"exp_m1"`, `"gelu"`).
            pub const fn name(self) -> &'static str {
                match self {
                    $(Function::$variant => $name,)*
                }
            }

            /// The function's position in [`Function::ALL`], for tables indexed by function.
            pub const fn index(self) -> usize {
                self as usize
            }

            /// The function of this name, if there is one.
            pub fn from_name(name: &str) -> Option<Function> {
                Function::ALL.iter().copied().find(|f| f.name() == name)
            }

            /// The function evaluated in f64, as the methods evaluate it before rounding once.
            ///
            /// NaN gives NaN; the results at ±0 and ±inf and outside the domain are those
            /// listed on each variant.
            #[inline]
            pub fn eval(self, x: f64) -> f64 {
                match self {
                    $(Function::$variant => ($eval)(x),)*
                }
            }
        }
    };
}

functions! {
    /// The square root; NaN below 0.
    Sqrt "sqrt" libm::sqrt;
    /// `1/sqrt(x)` (two roundings in f64, below 1.5 ulp); NaN below 0, `±0` gives `±inf`.
    Rsqrt "rsqrt" |x: f64| 1.0 / libm::sqrt(x);
    /// `1/x`; `±0` gives `±inf`.
    Recip "recip" |x: f64| 1.0 / x;
    /// `e^x`.
    Exp "exp" libm::exp;
    /// `2^x`.
    Exp2 "exp2" libm::exp2;
    /// `e^x - 1`, accurate near 0.
    ExpM1 "exp_m1" libm::expm1;
    /// The natural logarithm; NaN below 0, `±0` gives `-inf`.
    Ln "ln" libm::log;
    /// The base-2 logarithm; NaN below 0, `±0` gives `-inf`.
    Log2 "log2" libm::log2;
    /// The base-10 logarithm; NaN below 0, `±0` gives `-inf`.
    Log10 "log10" libm::log10;
    /// `ln(1 + x)`, accurate near 0; NaN below -1, `-1` gives `-inf`.
    Ln1p "ln_1p" libm::log1p;
    /// The sine; NaN at `±inf`.
    Sin "sin" libm::sin;
    /// The cosine; NaN at `±inf`.
    Cos "cos" libm::cos;
    /// The tangent; NaN at `±inf`.
    Tan "tan" libm::tan;
    /// The arcsine; NaN beyond ±1.
    Asin "asin" libm::asin;
    /// The arccosine; NaN beyond ±1.
    Acos "acos" libm::acos;
    /// The arctangent.
    Atan "atan" libm::atan;
    /// The hyperbolic sine.
    Sinh "sinh" libm::sinh;
    /// The hyperbolic cosine.
    Cosh "cosh" libm::cosh;
    /// The hyperbolic tangent.
    Tanh "tanh" libm::tanh;
    /// The inverse hyperbolic sine.
    Asinh "asinh" libm::asinh;
    /// The inverse hyperbolic cosine; NaN below 1.
    Acosh "acosh" acosh_in_domain;
    /// The inverse hyperbolic tangent; NaN beyond ±1, `±1` gives `±inf`.
    Atanh "atanh" libm::atanh;
    /// The cube root.
    Cbrt "cbrt" libm::cbrt;
    /// Radians to degrees, `x * (180/π)` as std's `f64::to_degrees` (two roundings).
    ToDegrees "to_degrees" |x: f64| x * DEGREES_PER_RADIAN;
    /// Degrees to radians, `x * (π/180)` as std's `f64::to_radians` (two roundings).
    ToRadians "to_radians" |x: f64| x * RADIANS_PER_DEGREE;
    /// The largest integer not above `x` (exact).
    Floor "floor" libm::floor;
    /// The smallest integer not below `x` (exact).
    Ceil "ceil" libm::ceil;
    /// The nearest integer, ties away from zero (exact).
    Round "round" libm::round;
    /// The nearest integer, ties to even (exact).
    RoundTiesEven "round_ties_even" libm::roundeven;
    /// Toward zero (exact).
    Trunc "trunc" libm::trunc;
    /// `x - trunc(x)` (exact), with the sign of `x`; NaN at `±inf`.
    Fract "fract" |x: f64| x - libm::trunc(x);
    /// `|x|` (exact). Through f64, so a NaN comes back as the format's NaN; the formats'
    /// own `abs` methods clear the sign bit of any bits instead.
    Abs "abs" libm::fabs;
    /// `x * x` (exact in f64 for every lowp format's values).
    Square "square" |x: f64| x * x;
    /// `max(x, 0)` (exact): NaN stays NaN, `-0` gives `+0`.
    Relu "relu" relu;
    /// The logistic function `1 / (1 + e^-x)`: `sigmoid(+inf) = 1`, `sigmoid(-inf) = +0`.
    Sigmoid "sigmoid" activation::sigmoid;
    /// `ln(sigmoid(x)) = -ln(1 + e^-x)`: `+inf` gives `-0`, `-inf` gives `-inf`.
    LogSigmoid "log_sigmoid" activation::log_sigmoid;
    /// Softplus, `ln(1 + e^x)`: `+inf` gives `+inf`, `-inf` gives `+0`.
    Softplus "softplus" activation::softplus;
    /// SiLU (swish), `x * sigmoid(x)`: `+inf` gives `+inf`, `-inf` gives `-0`, `±0` gives `±0`.
    Silu "silu" activation::silu;
    /// `x / (1 + |x|)`: `±inf` gives `±1`, `±0` gives `±0`.
    Softsign "softsign" activation::softsign;
    /// `x - tanh(x)`: `±inf` gives `±inf`, `±0` gives `±0`.
    TanhShrink "tanh_shrink" activation::tanh_shrink;
    /// The exact (erf) GELU, `x * Φ(x)` with `Φ` the standard normal distribution
    /// function: `+inf` gives `+inf`, `-inf` gives `-0`, `±0` gives `±0`.
    Gelu "gelu" activation::gelu;
}

impl Function {
    /// The function of `x`, correctly rounded into `T`: [`Function::eval`] of the exact f64
    /// value of `x`, rounded once with [`LowpFloat::from_f64`] (to nearest even, overflow and
    /// NaN as the format has them).
    ///
    /// A NaN result is the conversion of one NaN, whatever the sign and payload of the NaN
    /// that the f64 evaluation produced: the negative quiet NaN that x86's arithmetic makes
    /// (and so NumPy and ml_dtypes on x86, which compute in f32). It is the format's NaN with
    /// the sign bit set, and `+0` in the formats without NaN (FP6, FP4), which convert a NaN
    /// to the zero of the other sign, as ml_dtypes does. So results do not depend on the
    /// machine.
    #[inline]
    pub fn apply<T: LowpFloat>(self, x: T) -> T {
        T::from_f64(result(self.eval(x.to_f64())))
    }
}

impl core::fmt::Display for Function {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str(self.name())
    }
}
