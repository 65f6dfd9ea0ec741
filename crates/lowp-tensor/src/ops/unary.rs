//! Element-wise math of one tensor: every function of the FP16 error table of
//! docs/precision-analysis.md, gelu and the other activations.
//!
//! In the lowp formats every op is correctly rounded for every input: each is one of lowp's
//! scalar functions ([`lowp::math::Function`], proven correctly rounded input by input), looked
//! up in a table of its value at every bit pattern of the format (`function_table.rs`).
//!
//! In f32 and f64 each element is widened exactly to the dtype's compute type
//! ([`FloatElement::Compute`], f64), the function is evaluated there once, and the result is
//! rounded once to the dtype, to nearest even. The ops that are one library function use
//! std's; the compositions use lowp's f64 forms, which neither overflow nor cancel
//! (docs/precision-analysis.md shows what the naive forms cost in FP16).

use crate::blocks::{BLOCK, zip_blocks};
use crate::element::{FloatElement, Real};
use crate::error::Result;
use crate::registry::{Registry, register};
use crate::tensor::Tensor;
use lowp::math::Function;

/// A function of one real: lowp's correctly rounded scalar function, and its evaluation in
/// `f32` or `f64` for the machine dtypes.
pub(crate) trait UnaryOp {
    /// The lowp function the op is, for the lowp formats.
    const FUNCTION: Function;
    /// The value at `x`.
    fn apply<C: Real>(x: C) -> C;
}

/// `f` evaluated in f64 by lowp (the compositions' stable forms), in the compute type `C`.
fn lowp_form<C: Real>(f: Function, x: C) -> C {
    C::of(f.eval(x.f64()))
}

/// The element-wise kernel of op `O` for dtype `T`.
pub(crate) fn unary<T: FloatElement, O: UnaryOp>(x: &Tensor) -> Result<Tensor> {
    let src = x.as_slice::<T>()?;
    let mut out = vec![T::default(); src.len()];
    zip_blocks(src, &mut out, |_, s, d| {
        if T::apply_correctly_rounded(O::FUNCTION, s, d) {
            return;
        }
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

/// Generates, for each op: a marker type with its [`UnaryOp`] impl, the registration for every
/// float dtype, and `for_each_unary_op!`, from which `crate::dispatch` makes the `Tensor`
/// method of the op's name.
macro_rules! unary_ops {
    ($($(#[$doc:meta])* $ty:ident $name:ident = $function:ident |$x:ident| $body:expr;)*) => {
        $(
            #[doc = concat!("The `", stringify!($name), "` op.")]
            pub(crate) struct $ty;
            impl UnaryOp for $ty {
                const FUNCTION: Function = Function::$function;
                #[inline]
                fn apply<C: Real>($x: C) -> C {
                    $body
                }
            }
        )*

        /// The element-wise ops, in the order of the FP16 error table, then gelu.
        pub const UNARY_OPS: &[&str] = &[$(stringify!($name)),*];

        /// The lowp function that the element-wise op `op` computes (`"log"` is
        /// [`Function::Ln`], `"round"` [`Function::RoundTiesEven`]), or `None` if there is no
        /// such op. In every lowp format the op's results are that function's, bit for bit:
        /// correctly rounded for every input.
        ///
        /// ```
        /// use lowp::math::Function;
        /// assert_eq!(lowp_tensor::ops::unary::function("expm1"), Some(Function::ExpM1));
        /// assert_eq!(lowp_tensor::ops::unary::function("softmax"), None);
        /// ```
        pub fn function(op: &str) -> Option<Function> {
            match op {
                $(stringify!($name) => Some(Function::$function),)*
                _ => None,
            }
        }

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
    Sin sin = Sin |x| x.sin();
    /// cos.
    Cos cos = Cos |x| x.cos();
    /// tan.
    Tan tan = Tan |x| x.tan();
    /// asin.
    Asin asin = Asin |x| x.asin();
    /// acos.
    Acos acos = Acos |x| x.acos();
    /// atan.
    Atan atan = Atan |x| x.atan();
    /// sinh.
    Sinh sinh = Sinh |x| x.sinh();
    /// cosh.
    Cosh cosh = Cosh |x| x.cosh();
    /// tanh.
    Tanh tanh = Tanh |x| x.tanh();
    /// asinh.
    Asinh asinh = Asinh |x| x.asinh();
    /// acosh.
    Acosh acosh = Acosh |x| x.acosh();
    /// atanh.
    Atanh atanh = Atanh |x| x.atanh();
    /// e^x.
    Exp exp = Exp |x| x.exp();
    /// e^x - 1 (accurate near 0).
    Expm1 expm1 = ExpM1 |x| x.exp_m1();
    /// Natural logarithm.
    Log log = Ln |x| x.ln();
    /// Base-2 logarithm.
    Log2 log2 = Log2 |x| x.log2();
    /// Base-10 logarithm.
    Log10 log10 = Log10 |x| x.log10();
    /// ln(1 + x) (accurate near 0).
    Log1p log1p = Ln1p |x| x.ln_1p();
    /// Square root.
    Sqrt sqrt = Sqrt |x| x.sqrt();
    /// 1 / sqrt(x).
    Rsqrt rsqrt = Rsqrt |x| C::ONE / x.sqrt();
    /// 1 / x.
    Reciprocal reciprocal = Recip |x| C::ONE / x;
    /// x * x.
    Square square = Square |x| x * x;
    /// |x|.
    Abs abs = Abs |x| x.abs();
    /// Largest integer not above x.
    Floor floor = Floor |x| x.floor();
    /// Smallest integer not below x.
    Ceil ceil = Ceil |x| x.ceil();
    /// Nearest integer, ties to even (as NumPy and PyTorch round; Paddle's `round` rounds
    /// ties away from zero).
    Round round = RoundTiesEven |x| x.round_ties_even();
    /// max(x, 0); NaN stays NaN, -0 gives +0.
    Relu relu = Relu |x| if x > C::ZERO || x.is_nan() { x } else { C::ZERO };
    /// 1 / (1 + e^-x), in the form that cannot overflow.
    Sigmoid sigmoid = Sigmoid |x| lowp_form(Self::FUNCTION, x);
    /// ln(sigmoid(x)) = min(x, 0) - ln(1 + e^-|x|): no overflow, no cancellation.
    Logsigmoid logsigmoid = LogSigmoid |x| lowp_form(Self::FUNCTION, x);
    /// ln(1 + e^x) = max(x, 0) + ln(1 + e^-|x|): no overflow, no cancellation.
    Softplus softplus = Softplus |x| lowp_form(Self::FUNCTION, x);
    /// x * sigmoid(x).
    Silu silu = Silu |x| lowp_form(Self::FUNCTION, x);
    /// x / (1 + |x|).
    Softsign softsign = Softsign |x| lowp_form(Self::FUNCTION, x);
    /// x - tanh(x), by its series near 0 (the naive form loses every digit there).
    TanhShrink tanh_shrink = TanhShrink |x| lowp_form(Self::FUNCTION, x);
    /// The exact (erf) GELU, x * Phi(x), as `x/2 * erfc(-x/sqrt 2)`: erfc keeps the tiny
    /// values of large negative x that `1 + erf` would cancel to zero.
    Gelu gelu = Gelu |x| lowp_form(Self::FUNCTION, x);
}
