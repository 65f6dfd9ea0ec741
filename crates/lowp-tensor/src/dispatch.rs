//! The ops as methods of [`Tensor`] (and functions of several tensors): each derives the
//! kernel key (op, backend, dtype) from its inputs and runs the kernel the crate's registry
//! ([`crate::registry()`]) holds for it. The kernels themselves are in [`crate::ops`].

use crate::builtin::call;
use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::ops::binary::for_each_binary_op;
use crate::ops::loss_scale::{LossScaling, LossScalingConfig, next_loss_scaling};
use crate::ops::unary::for_each_unary_op;
use crate::tensor::Tensor;

/// A `Tensor` method per element-wise op of one tensor, from `for_each_unary_op!`.
macro_rules! unary_methods {
    ($($(#[$doc:meta])* $name:ident;)*) => {
        impl Tensor {
            $(
                $(#[$doc])*
                ///
                /// Computed in the dtype's compute type and rounded once (see
                /// [`crate::ops::unary`]); registered for every float dtype.
                pub fn $name(&self) -> Result<Tensor> {
                    self.unary(stringify!($name))
                }
            )*
        }
    };
}
for_each_unary_op!(unary_methods);

/// A `Tensor` method per element-wise op of two tensors, from `for_each_binary_op!`.
macro_rules! binary_methods {
    ($($(#[$doc:meta])* $name:ident;)*) => {
        impl Tensor {
            $(
                $(#[$doc])*
                ///
                /// Element-wise with NumPy broadcasting; both operands of one dtype, combined
                /// in the compute type and rounded once.
                pub fn $name(&self, other: &Tensor) -> Result<Tensor> {
                    self.binary(stringify!($name), other)
                }
            )*
        }
    };
}
for_each_binary_op!(binary_methods);

/// An error unless every operand has the first one's dtype.
fn same_dtype(op: &'static str, xs: &[&Tensor]) -> Result<()> {
    match xs.first() {
        Some(first) if xs.iter().any(|x| x.dtype() != first.dtype()) => Err(Error::OperandDTypes {
            op,
            dtypes: xs.iter().map(|x| x.dtype()).collect(),
        }),
        _ => Ok(()),
    }
}

impl Tensor {
    /// Casts to `to`, rounding once to nearest even (overflow as the target format has it:
    /// infinity, NaN or MAX); see [`cast`](crate::ops::cast) for integers and bool.
    ///
    /// ```
    /// use lowp_tensor::{DType, Tensor};
    /// let x = Tensor::from_vec(vec![1.0f32, 500.0, -1e-9], &[3]).unwrap();
    /// let fp8 = x.cast(DType::F8E4M3FN).unwrap();
    /// assert!(fp8.to_f64_vec()[1].is_nan()); // E4M3FN has no infinity
    /// assert_eq!(x.cast_saturating(DType::F8E4M3FN).unwrap().to_f64_vec()[1], 448.0);
    /// ```
    pub fn cast(&self, to: DType) -> Result<Tensor> {
        call!("cast", CastKernel, self.dtype(), self, to, false)
    }

    /// Casts to `to`, saturating overflow and ±infinity to ±MAX (OCP's satfinite; NaN stays
    /// NaN), or clamping integers to the target's bounds.
    pub fn cast_saturating(&self, to: DType) -> Result<Tensor> {
        call!("cast", CastKernel, self.dtype(), self, to, true)
    }

    /// Runs the element-wise op named `op` (one of [`UNARY_OPS`](crate::ops::UNARY_OPS)), or any registered op of
    /// one tensor (`isfinite`, `transpose`, ...).
    pub fn unary(&self, op: &str) -> Result<Tensor> {
        call!(op, UnaryKernel, self.dtype(), self)
    }

    /// Runs the op of two tensors named `op` (one of [`BINARY_OPS`](crate::ops::BINARY_OPS), or `matmul`); the
    /// operands must have the same dtype.
    pub fn binary(&self, op: &'static str, other: &Tensor) -> Result<Tensor> {
        same_dtype(op, &[self, other])?;
        call!(op, BinaryKernel, self.dtype(), self, other)
    }

    /// The sum of all elements (a scalar) or along `axis` (which disappears), accumulated in
    /// the accumulation type; see [`reduce`](crate::ops::reduce) for the error bound.
    pub fn sum(&self, axis: Option<usize>) -> Result<Tensor> {
        call!("sum", ReduceKernel, self.dtype(), self, axis)
    }

    /// The mean, accumulated like [`Tensor::sum`]; an error for no elements.
    pub fn mean(&self, axis: Option<usize>) -> Result<Tensor> {
        call!("mean", ReduceKernel, self.dtype(), self, axis)
    }

    /// The largest element (NaN if any is NaN); an error for no elements.
    pub fn max(&self, axis: Option<usize>) -> Result<Tensor> {
        call!("max", ReduceKernel, self.dtype(), self, axis)
    }

    /// The smallest element (NaN if any is NaN); an error for no elements.
    pub fn min(&self, axis: Option<usize>) -> Result<Tensor> {
        call!("min", ReduceKernel, self.dtype(), self, axis)
    }

    /// The i64 index of the first largest element (of the first NaN, if any), in the
    /// flattened tensor or along `axis`.
    pub fn argmax(&self, axis: Option<usize>) -> Result<Tensor> {
        call!("argmax", ReduceKernel, self.dtype(), self, axis)
    }

    /// The matrix product (`[..., m, k] x [..., k, n]`, batch axes broadcast), accumulated
    /// in the accumulation type and rounded once; see [`gemm`](crate::ops::gemm) for the error bound.
    ///
    /// ```
    /// use lowp_tensor::{DType, Tensor};
    /// let a = Tensor::arange(0.0, 6.0, 1.0, DType::BF16).unwrap().reshape(&[2, 3]).unwrap();
    /// let b = Tensor::ones(&[3, 2], DType::BF16).unwrap();
    /// assert_eq!(a.matmul(&b).unwrap().to_f64_vec(), [3.0, 3.0, 12.0, 12.0]);
    /// ```
    pub fn matmul(&self, other: &Tensor) -> Result<Tensor> {
        self.binary("matmul", other)
    }

    /// The tensor with its last two axes swapped.
    pub fn transpose(&self) -> Result<Tensor> {
        self.unary("transpose")
    }

    /// Softmax along `axis`, its max and sum in the accumulation type.
    pub fn softmax(&self, axis: usize) -> Result<Tensor> {
        call!("softmax", AxisKernel, self.dtype(), self, axis)
    }

    /// Log-softmax along `axis`, its max and sum in the accumulation type.
    pub fn log_softmax(&self, axis: usize) -> Result<Tensor> {
        call!("log_softmax", AxisKernel, self.dtype(), self, axis)
    }

    /// Layer normalisation over the last axis with optional weight and bias (of the input's
    /// dtype and the last axis' length), mean and variance in the accumulation type.
    pub fn layer_norm(
        &self,
        weight: Option<&Tensor>,
        bias: Option<&Tensor>,
        eps: f64,
    ) -> Result<Tensor> {
        call!(
            "layer_norm",
            LayerNormKernel,
            self.dtype(),
            self,
            weight,
            bias,
            eps
        )
    }

    /// The mean cross entropy of these logits (`[n, classes]`) against i64 class `labels`
    /// (`[n]`), a scalar of the logits' dtype computed in the accumulation type.
    pub fn cross_entropy(&self, labels: &Tensor) -> Result<Tensor> {
        call!("cross_entropy", BinaryKernel, self.dtype(), self, labels)
    }

    /// Element-wise: neither NaN nor infinite (bool).
    pub fn isfinite(&self) -> Result<Tensor> {
        self.unary("isfinite")
    }

    /// Element-wise: NaN (bool).
    pub fn isnan(&self) -> Result<Tensor> {
        self.unary("isnan")
    }

    /// Element-wise: ±infinity (bool).
    pub fn isinf(&self) -> Result<Tensor> {
        self.unary("isinf")
    }

    /// The gradient of [`Tensor::relu`]: this gradient where `input > 0` and 0 elsewhere
    /// (NaN inputs included), exact in every float dtype. Both tensors have one dtype and one
    /// shape; `input` may be relu's input or its output (both are positive at the same places).
    ///
    /// ```
    /// use lowp_tensor::{DType, Tensor};
    /// let x = Tensor::from_vec(vec![-1.0f32, 0.0, 2.0], &[3]).unwrap();
    /// let g = Tensor::from_vec(vec![5.0f32, 6.0, 7.0], &[3]).unwrap();
    /// assert_eq!(g.relu_backward(&x).unwrap().to_f64_vec(), [0.0, 0.0, 7.0]);
    /// ```
    pub fn relu_backward(&self, input: &Tensor) -> Result<Tensor> {
        self.binary("relu_backward", input)
    }
}

/// The element-wise sum of tensors of one dtype and shape, accumulated in the accumulation
/// type and rounded once (PaddlePaddle's `add_n`).
///
/// ```
/// use lowp_tensor::{DType, Tensor, add_n};
/// let a = Tensor::full(&[2], 2048.0, DType::F16).unwrap();
/// let b = Tensor::full(&[2], 1.0, DType::F16).unwrap();
/// // In f16 (2048 + 1) + 1 would stall at 2048; in f32 it reaches 2050.
/// assert_eq!(add_n(&[&a, &b, &b]).unwrap().to_f64_vec(), [2050.0, 2050.0]);
/// ```
pub fn add_n(xs: &[&Tensor]) -> Result<Tensor> {
    same_dtype("add_n", xs)?;
    let Some(first) = xs.first() else {
        return Err(Error::Argument {
            op: "add_n",
            message: "needs at least one tensor".to_string(),
        });
    };
    call!("add_n", NaryKernel, first.dtype(), xs)
}

/// Paddle's `check_finite_and_unscale`: every gradient times `1 / scale`, and whether any of
/// them held an infinity or NaN (checked on the scaled gradients, before unscaling).
pub fn check_finite_and_unscale(grads: &[Tensor], scale: f32) -> Result<(Vec<Tensor>, bool)> {
    let mut found = false;
    let mut out = Vec::with_capacity(grads.len());
    for g in grads {
        let (u, f) = call!(
            "check_finite_and_unscale",
            UnscaleKernel,
            g.dtype(),
            g,
            scale
        )?;
        found |= f;
        out.push(u);
    }
    Ok((out, found))
}

/// Paddle's `update_loss_scaling`: the gradients (zeroed when `found_inf`, so the step they
/// feed changes nothing) and the next loss-scaling state ([`next_loss_scaling`]).
pub fn update_loss_scaling(
    grads: &[Tensor],
    found_inf: bool,
    state: LossScaling,
    config: &LossScalingConfig,
) -> Result<(Vec<Tensor>, LossScaling)> {
    config.validate()?;
    let grads = grads
        .iter()
        .map(|g| call!("update_loss_scaling", ZeroIfKernel, g.dtype(), g, found_inf))
        .collect::<Result<Vec<_>>>()?;
    Ok((grads, next_loss_scaling(state, found_inf, config)))
}
