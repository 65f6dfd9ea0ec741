//! Tensors whose kernels are keyed by data type and compute in the right precision.
//!
//! The float16 design doc's central idea, built: the data type is "a key for the executor to
//! find and run the correct version of compute method specialized for float16". A
//! [`Tensor`] holds contiguous row-major elements of one [`DType`] (every format of the
//! `lowp` crate, plus f32, f64, i8, i32, i64, u8 and bool); every op derives the key (op,
//! backend, dtype) from its inputs and runs the kernel the [`Registry`] holds for it, and a
//! missing kernel is an error naming the op, the dtype and the dtypes that have one.
//!
//! The kernels compute the way FP16/BF16 kernels must (as PyTorch's and PaddlePaddle's do):
//!
//! * element-wise math widens each element exactly to the compute type (f32 for the 16-bit
//!   and narrower formats, f64 for f32 and f64), evaluates once and rounds once;
//! * reductions, softmax, layer norm, cross entropy and matrix products accumulate in the
//!   accumulation type (`MPTypeTrait`: f32 for every format narrower than f32) and round once;
//! * no kernel widens a whole tensor: each works on blocks of 1024 elements on the stack,
//!   converting with the `lowp` crate's SIMD paths, on all cores for large tensors.
//!
//! ```
//! use lowp_tensor::{DType, Tensor};
//!
//! // 100,000 copies of 0.1 in f16: an f16 running sum stalls at 256, ours does not.
//! let x = Tensor::full(&[100_000], 0.1, DType::F16).unwrap();
//! let total = x.sum(None).unwrap();
//! assert_eq!(total.dtype(), DType::F16);
//! assert!((total.item().unwrap() - 9997.56).abs() < 8.0); // 0.0999755859375 * 100000
//!
//! let logits = Tensor::rand_normal(&[4, 10], 0.0, 1.0, DType::BF16, 7).unwrap();
//! let probs = logits.softmax(1).unwrap();
//! let row_sums = probs.cast(DType::F32).unwrap().sum(Some(1)).unwrap();
//! assert!(row_sums.to_f64_vec().iter().all(|s| (s - 1.0).abs() < 0.02));
//!
//! let err = Tensor::from_vec(vec![1i32, 2], &[2]).unwrap().sin().unwrap_err();
//! assert!(err.to_string().starts_with("op 'sin' has no cpu kernel for dtype i32"));
//! ```
#![warn(missing_docs)]

/// `$m!(Variant, type)` for every float dtype, given lowp's list of formats as
/// `lowp::for_each_format!(float_rows, list, $m)` gives it: the formats, then f32 and f64.
/// Defined before the modules so that `element::for_each_float!` works in all of them.
macro_rules! float_rows {
    ([$m:ident] $(($t:ident, $variant:ident, $($rest:tt)*))*) => {
        $($m!($variant, lowp::$t);)*
        $m!(F32, f32);
        $m!(F64, f64);
    };
}

mod backend;
mod blocks;
mod builtin;
mod dispatch;
mod display;
pub mod dtype;
pub mod element;
pub mod error;
mod function_table;
pub mod ops;
pub mod random;
pub mod registry;
pub mod shape;
mod simd;
pub mod storage;
pub mod tensor;

pub use builtin::registry;
pub use dispatch::{add_n, check_finite_and_unscale, update_loss_scaling};
pub use dtype::DType;
pub use element::{Element, FloatElement, Real};
pub use error::{Error, Result};
pub use registry::{
    AxisKernel, Backend, BinaryKernel, CastKernel, Kernel, KernelKey, LayerNormKernel, NaryKernel,
    ReduceKernel, Registry, UnaryKernel, UnscaleKernel, ZeroIfKernel,
};
pub use simd::Path as SimdPath;
pub use storage::Storage;
pub use tensor::Tensor;

/// Matrix products on a chosen micro-kernel path (for tests and benchmarks): `a x b` as
/// [`Tensor::matmul`] computes it, on `path` if the CPU supports it (the portable code
/// otherwise).
pub fn matmul_on(path: SimdPath, a: &Tensor, b: &Tensor) -> Result<Tensor> {
    macro_rules! arm {
        ($variant:ident, $t:ty) => {
            if a.dtype() == DType::$variant {
                if b.dtype() != a.dtype() {
                    return Err(Error::OperandDTypes {
                        op: "matmul",
                        dtypes: vec![a.dtype(), b.dtype()],
                    });
                }
                return ops::matmul::matmul_on::<$t>(path, a, b);
            }
        };
    }
    element::for_each_float!(arm);
    Err(registry()
        .get::<BinaryKernel>("matmul", Backend::Cpu, a.dtype())
        .expect_err("every float dtype was handled above"))
}
