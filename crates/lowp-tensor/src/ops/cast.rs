//! `cast`: any dtype to any dtype, rounding once.
//!
//! * float to float: widened exactly to f32 (f64 from f64) and rounded once to nearest even on
//!   the bulk conversion paths; `saturate` turns overflow and ±infinity into ±MAX (OCP's
//!   satfinite), NaN stays NaN.
//! * integer or bool to float: rounded once from the exact integer (`saturate`: overflow to
//!   ±MAX).
//! * float to integer: like Rust's `as`: toward zero, saturating at the integer's bounds, NaN
//!   to 0. Float to bool: `x != 0` (NaN is true, as in C).
//! * integer to integer: wrapping like Rust's `as` and NumPy's `astype`, or clamping to the
//!   target's bounds when `saturate`.

use crate::blocks::{BLOCK, zip_blocks};
use crate::dtype::DType;
use crate::element::{Element, FloatElement, for_each_float, for_each_int};
use crate::error::Result;
use crate::registry::{Registry, register};
use crate::tensor::Tensor;

/// The cast kernel for float sources.
fn cast_float<S: FloatElement>(x: &Tensor, to: DType, saturate: bool) -> Result<Tensor> {
    let src = x.as_slice::<S>()?;
    if to == S::DTYPE && !saturate {
        return Ok(x.clone());
    }
    macro_rules! float_target {
        ($variant:ident, $d:ty) => {
            if to == DType::$variant {
                return x.with_data(float_to_float::<S, $d>(src, saturate));
            }
        };
    }
    for_each_float!(float_target);
    macro_rules! other_target {
        ($variant:ident, $d:ty) => {
            if to == DType::$variant {
                return x.with_data(per_element::<S, $d>(src, |s: S| {
                    if DType::$variant == DType::Bool {
                        <$d as Element>::from_bool(Element::to_bool(s))
                    } else {
                        <$d as Element>::from_i64(Element::to_i64(s), true)
                    }
                }));
            }
        };
    }
    for_each_int!(other_target);
    unreachable!("every dtype is a float or not")
}

/// The cast kernel for integer and bool sources: through the exact i64.
fn cast_int<S: Element>(x: &Tensor, to: DType, saturate: bool) -> Result<Tensor> {
    let src = x.as_slice::<S>()?;
    if to == S::DTYPE {
        return Ok(x.clone());
    }
    macro_rules! target {
        ($variant:ident, $d:ty) => {
            if to == DType::$variant {
                return x.with_data(per_element::<S, $d>(src, |s: S| {
                    <$d as Element>::from_i64(Element::to_i64(s), saturate)
                }));
            }
        };
    }
    crate::dtype::for_each_dtype!(target);
    unreachable!("every dtype has an element type")
}

/// Float to float, a block at a time: widened exactly, rounded once.
fn float_to_float<S: FloatElement, D: FloatElement>(src: &[S], saturate: bool) -> Vec<D> {
    let mut out = vec![D::default(); src.len()];
    zip_blocks(src, &mut out, |_, s, d| {
        if S::DTYPE == DType::F64 {
            let mut wide = [0f64; BLOCK];
            let wide = &mut wide[..s.len()];
            S::widen_f64(s, wide);
            D::narrow_f64(wide, d, saturate);
        } else {
            let mut wide = [0f32; BLOCK];
            let wide = &mut wide[..s.len()];
            S::widen_f32(s, wide);
            D::narrow_f32(wide, d, saturate);
        }
    });
    out
}

/// `f` of every element, on all threads for large tensors.
fn per_element<S: Element, D: Element>(src: &[S], f: impl Fn(S) -> D + Sync) -> Vec<D> {
    let mut out = vec![D::default(); src.len()];
    zip_blocks(src, &mut out, |_, s, d| {
        for (o, &i) in d.iter_mut().zip(s) {
            *o = f(i);
        }
    });
    out
}

/// Registers `cast` for every dtype.
pub(crate) fn register(r: &mut Registry) {
    register!(r, "cast", CastKernel, cast_float, floats);
    register!(r, "cast", CastKernel, cast_int, ints);
}
