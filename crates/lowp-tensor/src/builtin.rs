//! The registry of the crate's own kernels: the one place that knows both the registry's
//! types ([`crate::registry`]) and every op module ([`crate::ops`]).
//!
//! The op modules register their kernels into a [`Registry`] they are handed and know
//! nothing of this module; the registry module knows nothing of the ops. The `Tensor` methods
//! ([`crate::dispatch`]) find their kernels here.

use crate::ops::{backward, binary, cast, loss_scale, matmul, nn, reduce, unary};
use crate::registry::Registry;
use std::sync::OnceLock;

/// Registers every kernel of the crate into `r`.
fn register_all(r: &mut Registry) {
    cast::register(r);
    unary::register(r);
    binary::register(r);
    reduce::register(r);
    matmul::register(r);
    nn::register(r);
    loss_scale::register(r);
    backward::register(r);
}

/// The registry of every kernel this crate has, built on first use.
///
/// ```
/// use lowp_tensor::{Backend, DType, registry};
/// assert!(registry().contains("matmul", Backend::Cpu, DType::BF16));
/// assert!(registry().ops().contains(&"sin"));
/// ```
pub fn registry() -> &'static Registry {
    static REGISTRY: OnceLock<Registry> = OnceLock::new();
    REGISTRY.get_or_init(|| {
        let mut r = Registry::new();
        register_all(&mut r);
        r
    })
}

/// Looks up and runs the CPU kernel of `op` for `dtype` with the given arguments.
macro_rules! call {
    ($op:expr, $sig:ident, $dtype:expr, $($arg:expr),* $(,)?) => {
        $crate::builtin::registry()
            .get::<$crate::registry::$sig>($op, $crate::registry::Backend::Cpu, $dtype)
            .and_then(|kernel| kernel($($arg),*))
    };
}
pub(crate) use call;
