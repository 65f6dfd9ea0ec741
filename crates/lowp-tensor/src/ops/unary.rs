//! Element-wise math of one tensor: every function of the seeds' appendix table 3.3, and gelu.
//!
//! Each element is widened exactly to the dtype's compute type ([`FloatElement::Compute`]:
//! f32 for the lowp formats, f64 for f32 and f64), the function is evaluated there once, and
//! the result is rounded once to the dtype, to nearest even (overflow as the format has it).
//! Where the textbook formula loses accuracy in the compute type, the op uses a stable form
//! (noted beside it): the seeds' table shows what the naive forms cost in FP16.

use crate::blocks::{BLOCK, zip_blocks};
use crate::element::{FloatElement, Real};
use crate::error::Result;
use crate::registry::{Registry, register};
use crate::tensor::Tensor;

/// A function of one real, evaluated in `f32` or `f64`.
pub(crate) trait UnaryOp {
    /// The value at `x`.
    fn apply<C: Real>(x: C) -> C;
}

/// The element-wise kernel of op `O` for dtype `T`.
pub(crate) fn unary<T: FloatElement, O: UnaryOp>(x: &Tensor) -> Result<Tensor> {
    let src = x.as_slice::<T>()?;
    let mut out = vec![T::default(); src.len()];
    zip_blocks(src, &mut out, |_, s, d| {
        let mut buf = [T::Compute::ZERO; BLOCK];
        let buf = &mut buf[..s.len()];
        T::Compute::widen(s, buf);
        for v in buf.iter_mut() {
            *v = O::apply(*v);
        }
        T::Compute::narrow(buf, d, false);
    });
    x.with_data(out)
}

/// Taylor coefficients of `x - tanh(x)` (of x^3, x^5, ..., x^33), from the Bernoulli numbers:
/// `-2^(2n) (2^(2n) - 1) B_2n / (2n)!` for the power `2n - 1`.
const TANH_SHRINK_SERIES: [f64; 16] = [
    0.3333333333333333,
    -0.13333333333333333,
    0.05396825396825397,
    -0.021869488536155203,
    0.008863235529902197,
    -0.003592128036572481,
    0.0014558343870513183,
    -0.000590027440945586,
    0.00023912911424355248,
    -9.691537956929451e-05,
    3.927832388331683e-05,
    -1.5918905069328964e-05,
    6.451689215655431e-06,
    -2.6147711512907546e-06,
    1.0597268320104654e-06,
    -4.294911078273806e-07,
];

/// `x - tanh(x)` without the cancellation of the naive form near 0: below 1/2 in magnitude,
/// its Taylor series to x^33 (the first omitted term is about 2^-53 of the sum at 1/2, and
/// much less nearer 0); above, the naive form loses at most a factor `x / (x - tanh x) < 12`
/// of the compute type's precision: the subtraction is exact, but tanh's rounding error is up
/// to 16 ulps of the difference (tanh(x) in [1/2, 1), the difference below 1/16, for x in
/// [0.549, 0.597)), which an f64 output shows (within 36 ulps, the tests find) and the
/// narrower outputs, rounded from f32 or f64, do not.
fn tanh_shrink<C: Real>(x: C) -> C {
    if x.abs() < C::of(0.5) {
        let x2 = x * x;
        let poly = TANH_SHRINK_SERIES
            .iter()
            .rev()
            .fold(C::ZERO, |acc, &c| acc * x2 + C::of(c));
        poly * x2 * x
    } else {
        x - x.tanh()
    }
}

/// The logistic function in the form that never overflows: `1 / (1 + e^-x)` for x >= 0,
/// `e^x / (1 + e^x)` below.
fn sigmoid<C: Real>(x: C) -> C {
    if x >= C::ZERO {
        C::ONE / (C::ONE + (-x).exp())
    } else {
        let e = x.exp();
        e / (C::ONE + e)
    }
}

/// Generates, for each op: a marker type with its [`UnaryOp`] impl, the registration for every
/// float dtype, and `for_each_unary_op!`, from which `crate::dispatch` makes the `Tensor`
/// method of the op's name.
macro_rules! unary_ops {
    ($($(#[$doc:meta])* $ty:ident $name:ident |$x:ident| $body:expr;)*) => {
        $(
            #[doc = concat!("The `", stringify!($name), "` op.")]
            pub(crate) struct $ty;
            impl UnaryOp for $ty {
                #[inline]
                fn apply<C: Real>($x: C) -> C {
                    $body
                }
            }
        )*

        /// The element-wise ops, in the order of the seeds' table 3.3 then gelu.
        pub const UNARY_OPS: &[&str] = &[$(stringify!($name)),*];

        /// Calls `$m!` once with every op as `#[doc] name;` (its doc comment, then its name),
        /// for the module that gives `Tensor` a method per op.
        macro_rules! for_each_unary_op {
            ($m:ident) => {
                $m! { $($(#[$doc])* $name;)* }
            };
        }
        pub(crate) use for_each_unary_op;

        /// Registers every element-wise op for every float dtype.
        pub(crate) fn register(r: &mut Registry) {
            $(register!(r, stringify!($name), UnaryKernel, unary<_, $ty>, floats);)*
        }
    };
}

unary_ops! {
    /// sin.
    Sin sin |x| x.sin();
    /// cos.
    Cos cos |x| x.cos();
    /// tan.
    Tan tan |x| x.tan();
    /// asin.
    Asin asin |x| x.asin();
    /// acos.
    Acos acos |x| x.acos();
    /// atan.
    Atan atan |x| x.atan();
    /// sinh.
    Sinh sinh |x| x.sinh();
    /// cosh.
    Cosh cosh |x| x.cosh();
    /// tanh.
    Tanh tanh |x| x.tanh();
    /// asinh.
    Asinh asinh |x| x.asinh();
    /// acosh.
    Acosh acosh |x| x.acosh();
    /// atanh.
    Atanh atanh |x| x.atanh();
    /// e^x.
    Exp exp |x| x.exp();
    /// e^x - 1 (accurate near 0).
    Expm1 expm1 |x| x.exp_m1();
    /// Natural logarithm.
    Log log |x| x.ln();
    /// Base-2 logarithm.
    Log2 log2 |x| x.log2();
    /// Base-10 logarithm.
    Log10 log10 |x| x.log10();
    /// ln(1 + x) (accurate near 0).
    Log1p log1p |x| x.ln_1p();
    /// Square root.
    Sqrt sqrt |x| x.sqrt();
    /// 1 / sqrt(x).
    Rsqrt rsqrt |x| C::ONE / x.sqrt();
    /// 1 / x.
    Reciprocal reciprocal |x| C::ONE / x;
    /// x * x.
    Square square |x| x * x;
    /// |x|.
    Abs abs |x| x.abs();
    /// Largest integer not above x.
    Floor floor |x| x.floor();
    /// Smallest integer not below x.
    Ceil ceil |x| x.ceil();
    /// Nearest integer, ties to even (as NumPy and PyTorch round; Paddle's `round` rounds
    /// ties away from zero).
    Round round |x| x.round_ties_even();
    /// max(x, 0); NaN stays NaN, -0 gives +0.
    Relu relu |x| if x > C::ZERO || x.is_nan() { x } else { C::ZERO };
    /// 1 / (1 + e^-x), in the form that cannot overflow.
    Sigmoid sigmoid |x| sigmoid(x);
    /// ln(sigmoid(x)) = min(x, 0) - ln(1 + e^-|x|): no overflow, no cancellation.
    Logsigmoid logsigmoid |x| {
        let m = if x < C::ZERO { x } else { C::ZERO };
        // Negated last, so that a result too small to show is -0, not +0.
        -((-x.abs()).exp().ln_1p() - m)
    };
    /// x * sigmoid(x).
    Silu silu |x| x * sigmoid(x);
    /// x / (1 + |x|).
    Softsign softsign |x| x / (C::ONE + x.abs());
    /// x - tanh(x), by its series near 0 (the naive form loses every digit there).
    TanhShrink tanh_shrink |x| tanh_shrink(x);
    /// The exact (erf) GELU, x * Phi(x), as `x/2 * erfc(-x/sqrt 2)`: erfc keeps the tiny
    /// values of large negative x that `1 + erf` would cancel to zero.
    Gelu gelu |x| C::of(0.5) * x * (-x * C::of(std::f64::consts::FRAC_1_SQRT_2)).erfc();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tanh_shrink_is_accurate_near_zero() {
        // x - tanh(x) in f64 where the cancellation still leaves 40 bits or more.
        for &x in &[0.01f64, 0.1, 0.3, 0.4999, 0.5, 0.7, -0.1] {
            let naive = x - x.tanh();
            let series = tanh_shrink(x);
            let single = tanh_shrink(x as f32) as f64;
            assert!(
                ((series - naive) / naive).abs() < 1e-11,
                "{x}: {series} {naive}"
            );
            assert!(
                ((single - naive) / naive).abs() < 1e-6,
                "{x}: {single} {naive}"
            );
        }
        // Near 0 the first term rules: x^3 / 3.
        let x = 1e-9f64; // the next term, -2x^5/15, is 4e-19 of the first
        assert!((tanh_shrink(x) / (x * x * x / 3.0) - 1.0).abs() < 1e-15);
        assert_eq!(tanh_shrink(0.0f32), 0.0);
    }

    #[test]
    fn sigmoid_forms_do_not_overflow() {
        assert_eq!(sigmoid(-1000.0f32), 0.0);
        assert_eq!(sigmoid(1000.0f32), 1.0);
        assert!((sigmoid(-20.0f64) - 2.061153618190204e-9).abs() < 1e-22);
        assert_eq!(Logsigmoid::apply(1000.0f32), 0.0);
        assert_eq!(Logsigmoid::apply(-1000.0f32), -1000.0);
        assert!(Gelu::apply(-30.0f64) < 0.0); // not flushed to 0 by 1 + erf cancelling
    }
}
