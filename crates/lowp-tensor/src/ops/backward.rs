//! Gradients of ops that the other modules cannot compose without a comparison:
//! `relu_backward` (PyTorch's `threshold_backward` at 0), which a hand-written backward pass
//! of a ReLU network needs.
//!
//! The result is the incoming gradient itself or zero, element by element, so nothing is
//! rounded: the kernel is exact in every dtype.

use crate::element::FloatElement;
use crate::error::{Error, Result};
use crate::registry::{Registry, register};
use crate::tensor::Tensor;

/// The gradient of `relu` at `input`: `grad` where `input > 0`, 0 elsewhere (where `input`
/// is 0, -0 or negative, and where it is NaN: the comparison is false, as in PyTorch).
fn relu_backward<T: FloatElement>(grad: &Tensor, input: &Tensor) -> Result<Tensor> {
    if grad.shape() != input.shape() {
        return Err(Error::Shape {
            op: "relu_backward",
            message: format!(
                "the gradient {:?} and the input {:?} must have the same shape",
                grad.shape(),
                input.shape()
            ),
        });
    }
    let (g, x) = (grad.as_slice::<T>()?, input.as_slice::<T>()?);
    // Zero as the dtype has it (E8M0, which has none, gives NaN); the test is on the exact
    // value, since E8M0's "zero" could not be compared with.
    let zero = T::from_f64(0.0);
    let out: Vec<T> = g
        .iter()
        .zip(x)
        .map(|(&g, &x)| if x.to_f64() > 0.0 { g } else { zero })
        .collect();
    grad.with_data(out)
}

/// `relu_backward` for every float dtype.
pub(crate) fn register(r: &mut Registry) {
    register!(r, "relu_backward", BinaryKernel, relu_backward, floats);
}
