//! The kernels of the ops, written once generic over the element type.
//!
//! Each module below holds the kernels of some ops and a `register` function that puts them
//! into a [`Registry`](crate::Registry) it is handed; the crate's registry
//! ([`crate::registry()`]) is built from them, and each op is a method on
//! [`Tensor`](crate::Tensor) (or a function at the crate root for ops of several tensors:
//! [`crate::add_n`]) that derives the kernel key from its inputs and runs what that registry
//! holds. These modules do not look kernels up themselves.

pub mod backward;
pub mod binary;
pub mod cast;
pub mod gemm;
pub mod loss_scale;
pub(crate) mod matmul;
pub mod nn;
pub mod reduce;
pub mod reference;
pub(crate) mod thread_buffers;
pub mod unary;

pub use binary::BINARY_OPS;
pub use loss_scale::{
    LossScaling, LossScalingConfig, next_loss_scaling, next_loss_scaling_with_floor,
};
pub use unary::UNARY_OPS;
