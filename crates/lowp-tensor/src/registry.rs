//! The kernel registry: kernels keyed by (op, backend, dtype).
//!
//! This is the executor the float16 design doc asks for: the dtype is "a key for the executor
//! to find and run the correct version of compute method specialized for float16". Each op
//! module registers its kernels with one short declaration per op, naming the dtypes, as
//! Paddle's `PD_REGISTER_KERNEL` does:
//!
//! ```ignore
//! register!(r, "sin", Unary, sin, floats);   // sin::<T> for every float dtype
//! ```
//!
//! A call derives the key from its inputs' dtype and runs what is registered; when nothing is,
//! the error names the op, the dtype asked for and the dtypes that have kernels.
//!
//! This module holds only the types and the lookup: the op modules register their kernels
//! into a [`Registry`] they are handed, and the crate's `builtin` module builds the one
//! registry of the crate's kernels ([`crate::registry()`]) from them.
//!
//! ```
//! use lowp_tensor::{Backend, DType, UnaryKernel, registry};
//! let reg = registry();
//! assert!(reg.get::<UnaryKernel>("sin", Backend::Cpu, DType::BF16).is_ok());
//! let err = reg.get::<UnaryKernel>("sin", Backend::Cpu, DType::I32).unwrap_err();
//! assert!(err.to_string().contains("'sin'") && err.to_string().contains("bf16"));
//! ```

use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::tensor::Tensor;
use std::collections::HashMap;

pub use crate::backend::Backend;

/// The key a kernel is registered and found under.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct KernelKey {
    /// The op's name (`"sin"`, `"matmul"`).
    pub op: &'static str,
    /// The backend.
    pub backend: Backend,
    /// The dtype of the inputs.
    pub dtype: DType,
}

/// An element-wise op of one tensor, or any op of one tensor and no arguments.
pub type UnaryKernel = fn(&Tensor) -> Result<Tensor>;
/// An op of two tensors of the same dtype (element-wise with broadcasting, matmul, loss).
pub type BinaryKernel = fn(&Tensor, &Tensor) -> Result<Tensor>;
/// A reduction over the whole tensor (`None`) or one axis.
pub type ReduceKernel = fn(&Tensor, Option<usize>) -> Result<Tensor>;
/// An op along one axis that keeps the shape (softmax, log_softmax).
pub type AxisKernel = fn(&Tensor, usize) -> Result<Tensor>;
/// A cast to a dtype, saturating or not.
pub type CastKernel = fn(&Tensor, DType, bool) -> Result<Tensor>;
/// An op of any number of tensors of one dtype and shape (add_n).
pub type NaryKernel = fn(&[&Tensor]) -> Result<Tensor>;
/// Layer normalisation over the last axis: input, optional weight and bias, epsilon.
pub type LayerNormKernel = fn(&Tensor, Option<&Tensor>, Option<&Tensor>, f64) -> Result<Tensor>;
/// Paddle's `check_finite_and_unscale` of one tensor: the tensor times `1 / scale`, and
/// whether the input held an infinity or NaN.
pub type UnscaleKernel = fn(&Tensor, f32) -> Result<(Tensor, bool)>;
/// The gradient step of Paddle's `update_loss_scaling`: the tensor, or zeros of its shape
/// when an overflow was found.
pub type ZeroIfKernel = fn(&Tensor, bool) -> Result<Tensor>;

/// Generates [`Kernel`] and the [`Signature`] impls from one list of signatures.
macro_rules! kernels {
    ($($variant:ident($ty:ident) $name:literal),* $(,)?) => {
        /// A registered kernel, with its signature.
        #[derive(Clone, Copy, Debug)]
        pub enum Kernel {
            $(
                #[doc = concat!("A [`", stringify!($ty), "`].")]
                $variant($ty),
            )*
        }

        impl Kernel {
            /// The name of the kernel's signature (`"unary"`).
            pub fn signature(&self) -> &'static str {
                match self {
                    $(Kernel::$variant(_) => $name,)*
                }
            }
        }

        $(
            impl Signature for $ty {
                const NAME: &'static str = $name;
                fn wrap(self) -> Kernel {
                    Kernel::$variant(self)
                }
                fn unwrap(kernel: Kernel) -> Option<$ty> {
                    match kernel {
                        Kernel::$variant(k) => Some(k),
                        #[allow(unreachable_patterns)]
                        _ => None,
                    }
                }
            }
        )*
    };
}

kernels! {
    Unary(UnaryKernel) "unary",
    Binary(BinaryKernel) "binary",
    Reduce(ReduceKernel) "reduce",
    Axis(AxisKernel) "axis",
    Cast(CastKernel) "cast",
    Nary(NaryKernel) "nary",
    LayerNorm(LayerNormKernel) "layer_norm",
    Unscale(UnscaleKernel) "unscale",
    ZeroIf(ZeroIfKernel) "zero_if",
}

/// A kernel function type that the registry stores.
pub trait Signature: Copy {
    /// The name of the signature.
    const NAME: &'static str;
    /// The kernel, tagged with its signature.
    fn wrap(self) -> Kernel;
    /// The function, if `kernel` has this signature.
    fn unwrap(kernel: Kernel) -> Option<Self>;
}

/// Kernels by (op, backend, dtype).
#[derive(Clone, Debug, Default)]
pub struct Registry {
    kernels: HashMap<&'static str, HashMap<(Backend, DType), Kernel>>,
}

impl Registry {
    /// An empty registry.
    pub fn new() -> Registry {
        Registry::default()
    }

    /// Registers `kernel` for `op` on `backend` for inputs of `dtype`, replacing what was
    /// registered under that key.
    pub fn register<S: Signature>(
        &mut self,
        op: &'static str,
        backend: Backend,
        dtype: DType,
        kernel: S,
    ) {
        self.kernels
            .entry(op)
            .or_default()
            .insert((backend, dtype), kernel.wrap());
    }

    /// The kernel for `op` on `backend` for `dtype`, with signature `S`. The error names the
    /// op and says what is missing: no op of that name, no kernel for that dtype (with the
    /// dtypes that have one), or a kernel of another signature (`Tensor::unary("matmul")`
    /// asks for a one-tensor kernel of a two-tensor op).
    pub fn get<S: Signature>(&self, op: &str, backend: Backend, dtype: DType) -> Result<S> {
        match self.kernels.get(op).and_then(|k| k.get(&(backend, dtype))) {
            Some(&kernel) => S::unwrap(kernel).ok_or_else(|| Error::Signature {
                op: op.to_string(),
                expected: S::NAME,
                registered: kernel.signature(),
            }),
            None => Err(Error::NoKernel {
                op: op.to_string(),
                backend,
                dtype,
                registered: self.dtypes(op, backend),
            }),
        }
    }

    /// Whether a kernel is registered under the key.
    pub fn contains(&self, op: &str, backend: Backend, dtype: DType) -> bool {
        self.kernels
            .get(op)
            .is_some_and(|k| k.contains_key(&(backend, dtype)))
    }

    /// Every key with a kernel, sorted by op, backend and dtype.
    pub fn keys(&self) -> Vec<KernelKey> {
        let mut keys: Vec<KernelKey> = self
            .kernels
            .iter()
            .flat_map(|(&op, k)| {
                k.keys()
                    .map(move |&(backend, dtype)| KernelKey { op, backend, dtype })
            })
            .collect();
        keys.sort_unstable_by_key(|k| (k.op, k.backend, k.dtype));
        keys
    }

    /// The ops with at least one kernel, sorted by name.
    pub fn ops(&self) -> Vec<&'static str> {
        let mut ops: Vec<&'static str> = self.kernels.keys().copied().collect();
        ops.sort_unstable();
        ops
    }

    /// The dtypes `op` has kernels for on `backend`, in [`DType::ALL`]'s order.
    pub fn dtypes(&self, op: &str, backend: Backend) -> Vec<DType> {
        let mut dtypes: Vec<DType> = self
            .kernels
            .get(op)
            .into_iter()
            .flat_map(|k| k.keys())
            .filter(|(b, _)| *b == backend)
            .map(|&(_, d)| d)
            .collect();
        dtypes.sort_unstable();
        dtypes
    }

    /// The number of registered kernels.
    pub fn len(&self) -> usize {
        self.kernels.values().map(HashMap::len).sum()
    }

    /// Whether nothing is registered.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// Registers `$kernel::<T>` (or `$kernel::<T, Op>`, written `kernel<_, Op>`) under `$op` on
/// the CPU for each type `T` of a group (`floats`: every floating-point dtype; `ints`: the
/// integers and bool; `all`: every dtype), with signature `$sig`.
macro_rules! register {
    ($r:expr, $op:expr, $sig:ident, $($kernel:ident)::+ $(<_, $extra:ty>)?, $group:ident) => {{
        macro_rules! one {
            ($variant:ident, $t:ty) => {
                $r.register(
                    $op,
                    $crate::registry::Backend::Cpu,
                    $crate::DType::$variant,
                    $($kernel)::+::<$t $(, $extra)?> as $crate::registry::$sig,
                );
            };
        }
        $crate::registry::register!(@group $group, one);
    }};
    (@group floats, $m:ident) => {
        $crate::element::for_each_float!($m)
    };
    (@group ints, $m:ident) => {
        $crate::element::for_each_int!($m)
    };
    (@group all, $m:ident) => {
        $crate::dtype::for_each_dtype!($m)
    };
}
pub(crate) use register;

#[cfg(test)]
mod tests {
    use super::*;

    fn identity(x: &Tensor) -> Result<Tensor> {
        Ok(x.clone())
    }

    #[test]
    fn lookups_by_key() {
        let mut r = Registry::new();
        assert!(r.is_empty());
        r.register("id", Backend::Cpu, DType::F16, identity as UnaryKernel);
        r.register("id", Backend::Cpu, DType::BF16, identity as UnaryKernel);
        assert_eq!(r.len(), 2);
        assert!(r.contains("id", Backend::Cpu, DType::F16));
        assert_eq!(r.ops(), vec!["id"]);
        assert_eq!(r.keys()[1].dtype, DType::BF16);
        assert_eq!(r.dtypes("id", Backend::Cpu), vec![DType::F16, DType::BF16]);
        let err = r
            .get::<UnaryKernel>("id", Backend::Cpu, DType::F32)
            .unwrap_err()
            .to_string();
        assert_eq!(
            err,
            "op 'id' has no cpu kernel for dtype f32; registered dtypes: f16, bf16"
        );
        let err = r
            .get::<UnaryKernel>("nope", Backend::Cpu, DType::F32)
            .unwrap_err()
            .to_string();
        assert!(err.contains("no op 'nope'"), "{err}");
    }

    #[test]
    fn a_wrong_signature_is_an_error() {
        let mut r = Registry::new();
        r.register("id", Backend::Cpu, DType::F16, identity as UnaryKernel);
        let err = r
            .get::<BinaryKernel>("id", Backend::Cpu, DType::F16)
            .unwrap_err();
        assert_eq!(
            err,
            Error::Signature {
                op: "id".to_string(),
                expected: "binary",
                registered: "unary",
            }
        );
        assert_eq!(
            err.to_string(),
            "op 'id' has kernels of the unary signature, but was called with the binary one"
        );
    }
}
