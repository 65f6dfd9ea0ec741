//! Element-wise ops of two tensors, with NumPy broadcasting.
//!
//! Both operands have the same dtype (there is no implicit promotion). Each pair is widened
//! exactly to the compute type (f32 for the lowp formats, f64 for f32 and f64), combined once
//! and rounded once: for `+ - * /` that is the correctly rounded result, because the compute
//! type carries at least `2p + 2` bits (the `lowp` crate's arithmetic docs give the proof).

use crate::blocks::{BLOCK, fill_blocks};
use crate::element::{FloatElement, Real};
use crate::error::Result;
use crate::registry::{Registry, register};
use crate::shape::{BroadcastWalk, broadcast_shapes};
use crate::tensor::Tensor;

/// A function of two reals, evaluated in `f32` or `f64`.
pub(crate) trait BinaryOp {
    /// The op's name, for errors.
    const NAME: &'static str;
    /// The value at `(a, b)`.
    fn apply<C: Real>(a: C, b: C) -> C;
}

/// The element-wise kernel of op `O` for dtype `T`, broadcasting `a` and `b` together.
pub(crate) fn binary<T: FloatElement, O: BinaryOp>(a: &Tensor, b: &Tensor) -> Result<Tensor> {
    let (sa, sb) = (a.as_slice::<T>()?, b.as_slice::<T>()?);
    let shape = broadcast_shapes(O::NAME, a.shape(), b.shape())?;
    let n = crate::shape::numel(&shape).unwrap_or(0);
    let mut out = vec![T::default(); n];
    let combine = |xa: &[T], xb: &[T], d: &mut [T]| {
        let len = d.len();
        let mut wa = [T::Compute::ZERO; BLOCK];
        let mut wb = [T::Compute::ZERO; BLOCK];
        T::Compute::widen(xa, &mut wa[..len]);
        T::Compute::widen(xb, &mut wb[..len]);
        for (x, &y) in wa[..len].iter_mut().zip(&wb[..len]) {
            *x = O::apply(*x, y);
        }
        T::Compute::narrow(&wa[..len], d, false);
    };
    if a.shape() == b.shape() {
        fill_blocks(&mut out, |start, d| {
            let end = start + d.len();
            combine(&sa[start..end], &sb[start..end], d);
        });
    } else {
        let walk = BroadcastWalk::new(&shape, [a.shape(), b.shape()]);
        fill_blocks(&mut out, |start, d| {
            let len = d.len();
            let mut ia = [0usize; BLOCK];
            let mut ib = [0usize; BLOCK];
            walk.fill(start, &mut [&mut ia[..len], &mut ib[..len]]);
            let mut ga = [T::default(); BLOCK];
            let mut gb = [T::default(); BLOCK];
            for j in 0..len {
                ga[j] = sa[ia[j]];
                gb[j] = sb[ib[j]];
            }
            combine(&ga[..len], &gb[..len], d);
        });
    }
    Tensor::from_vec(out, &shape)
}

/// Generates, for each op: a marker type with its [`BinaryOp`] impl, the registration for
/// every float dtype, and `for_each_binary_op!`, from which `crate::dispatch` makes the
/// `Tensor` method of the op's name.
macro_rules! binary_ops {
    ($($(#[$doc:meta])* $ty:ident $name:ident |$a:ident, $b:ident| $body:expr;)*) => {
        $(
            #[doc = concat!("The `", stringify!($name), "` op.")]
            pub(crate) struct $ty;
            impl BinaryOp for $ty {
                const NAME: &'static str = stringify!($name);
                #[inline]
                fn apply<C: Real>($a: C, $b: C) -> C {
                    $body
                }
            }
        )*

        /// The element-wise ops of two tensors.
        pub const BINARY_OPS: &[&str] = &[$(stringify!($name)),*];

        /// Calls `$m!` once with every op as `#[doc] name;` (its doc comment, then its name),
        /// for the module that gives `Tensor` a method per op.
        macro_rules! for_each_binary_op {
            ($m:ident) => {
                $m! { $($(#[$doc])* $name;)* }
            };
        }
        pub(crate) use for_each_binary_op;

        /// Registers every binary op for every float dtype.
        pub(crate) fn register(r: &mut Registry) {
            $(register!(r, stringify!($name), BinaryKernel, binary<_, $ty>, floats);)*
        }
    };
}

binary_ops! {
    /// a + b.
    Add add |a, b| a + b;
    /// a - b.
    Sub sub |a, b| a - b;
    /// a * b.
    Mul mul |a, b| a * b;
    /// a / b.
    Div div |a, b| a / b;
    /// The larger; NaN if either is NaN (NumPy's `maximum`).
    Maximum maximum |a, b| a.maximum(b);
    /// The smaller; NaN if either is NaN.
    Minimum minimum |a, b| a.minimum(b);
    /// a^b (C's `pow`: `pow(x, 0) = 1` even for NaN x).
    Pow pow |a, b| a.powf(b);
}
