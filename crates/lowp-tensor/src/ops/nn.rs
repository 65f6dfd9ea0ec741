//! The ops the formats article says must keep their reductions in FP32 whatever the input:
//! softmax, log_softmax, layer_norm and cross_entropy.
//!
//! Each works on one "lane" at a time (the elements along the reduced axis), widened exactly to
//! the accumulation type (f32 for every lowp format, f64 for f64); maxima, sums, means and
//! variances are computed there, and each output element is rounded once to the input's
//! dtype. Sums are pairwise, so their error is at most `gamma_k * sum |terms|` with `k =
//! ceil(log2(len))` roundings.

use crate::blocks::for_each_row;
use crate::element::{FloatElement, Real};
use crate::error::{Error, Result};
use crate::registry::{Registry, register};
use crate::shape::split_axis;
use crate::tensor::Tensor;

/// The pairwise sum of `xs`.
pub(crate) fn pairwise<C: Real>(xs: &[C]) -> C {
    match xs.len() {
        0 => C::ZERO,
        1 => xs[0],
        n => {
            let (l, r) = xs.split_at(n.div_ceil(2));
            pairwise(l) + pairwise(r)
        }
    }
}

/// The largest of `xs`, NaN if any is (−infinity for none).
fn maximum<C: Real>(xs: &[C]) -> C {
    xs.iter().fold(-C::INFINITY, |m, &x| m.maximum(x))
}

/// Applies `f` to every lane along `axis` (widened to `T::Acc`, updated in place, rounded
/// once back), on several threads for large tensors.
fn map_lanes<T: FloatElement>(
    op: &'static str,
    x: &Tensor,
    axis: usize,
    f: impl Fn(&mut [T::Acc]) + Sync + Send,
) -> Result<Tensor> {
    if axis >= x.rank() {
        return Err(Error::Axis {
            op,
            axis,
            rank: x.rank(),
        });
    }
    let src = x.as_slice::<T>()?;
    let (_, len, inner) = split_axis(x.shape(), axis);
    let mut out = vec![T::default(); src.len()];
    for_each_row(&mut out, len * inner, |o, block| {
        let s = &src[o * len * inner..(o + 1) * len * inner];
        let mut narrow = vec![T::default(); len];
        let mut lane = vec![T::Acc::ZERO; len];
        for i in 0..inner {
            for (p, v) in narrow.iter_mut().enumerate() {
                *v = s[p * inner + i];
            }
            T::Acc::widen(&narrow, &mut lane);
            f(&mut lane);
            T::Acc::narrow(&lane, &mut narrow, false);
            for (p, v) in narrow.iter().enumerate() {
                block[p * inner + i] = *v;
            }
        }
    });
    x.with_data(out)
}

/// `softmax` along `axis`: `exp(x - max) / sum exp(x - max)`.
fn softmax<T: FloatElement>(x: &Tensor, axis: usize) -> Result<Tensor> {
    map_lanes::<T>("softmax", x, axis, |lane| {
        let m = maximum(lane);
        for v in lane.iter_mut() {
            *v = (*v - m).exp();
        }
        let s = pairwise(lane);
        for v in lane.iter_mut() {
            *v = *v / s;
        }
    })
}

/// `log_softmax` along `axis`: `x - max - ln(sum exp(x - max))`.
fn log_softmax<T: FloatElement>(x: &Tensor, axis: usize) -> Result<Tensor> {
    map_lanes::<T>("log_softmax", x, axis, |lane| {
        let m = maximum(lane);
        let exps: Vec<T::Acc> = lane.iter().map(|&v| (v - m).exp()).collect();
        let log_sum = pairwise(&exps).ln();
        for v in lane.iter_mut() {
            *v = *v - m - log_sum;
        }
    })
}

/// The weight or bias of a layer norm, widened, after checking its dtype and shape.
fn affine<T: FloatElement>(
    what: &str,
    t: Option<&Tensor>,
    x: &Tensor,
    len: usize,
) -> Result<Option<Vec<T::Acc>>> {
    let Some(t) = t else { return Ok(None) };
    if t.dtype() != x.dtype() {
        return Err(Error::OperandDTypes {
            op: "layer_norm",
            dtypes: vec![x.dtype(), t.dtype()],
        });
    }
    if t.shape() != [len] {
        return Err(Error::Shape {
            op: "layer_norm",
            message: format!(
                "the {what} must have shape [{len}] (the input's last axis); it has {:?}",
                t.shape()
            ),
        });
    }
    let mut wide = vec![T::Acc::ZERO; len];
    T::Acc::widen(t.as_slice::<T>()?, &mut wide);
    Ok(Some(wide))
}

/// `layer_norm` over the last axis: `(x - mean) / sqrt(var + eps) * weight + bias`, the mean
/// and the (biased) variance computed in two passes in `T::Acc`.
fn layer_norm<T: FloatElement>(
    x: &Tensor,
    weight: Option<&Tensor>,
    bias: Option<&Tensor>,
    eps: f64,
) -> Result<Tensor> {
    if !(eps.is_finite() && eps >= 0.0) {
        return Err(Error::Argument {
            op: "layer_norm",
            message: format!("eps must be finite and not negative, not {eps}"),
        });
    }
    let Some(axis) = x.rank().checked_sub(1) else {
        return Err(Error::Shape {
            op: "layer_norm",
            message: "needs at least one axis; the input is a scalar".to_string(),
        });
    };
    let len = x.shape()[axis];
    let weight = affine::<T>("weight", weight, x, len)?;
    let bias = affine::<T>("bias", bias, x, len)?;
    let eps = T::Acc::of(eps);
    let n = T::Acc::of(len as f64);
    map_lanes::<T>("layer_norm", x, axis, |lane| {
        let mean = pairwise(lane) / n;
        let squares: Vec<T::Acc> = lane.iter().map(|&v| (v - mean) * (v - mean)).collect();
        let scale = T::Acc::ONE / (pairwise(&squares) / n + eps).sqrt();
        for (j, v) in lane.iter_mut().enumerate() {
            let mut y = (*v - mean) * scale;
            if let Some(w) = &weight {
                y = y * w[j];
            }
            if let Some(b) = &bias {
                y = y + b[j];
            }
            *v = y;
        }
    })
}

/// `cross_entropy` of `logits` (`[n, classes]`) against integer `labels` (`[n]`, i64): the
/// mean over rows of `logsumexp(row) - row[label]`, in `T::Acc`, rounded once to `T`.
fn cross_entropy<T: FloatElement>(logits: &Tensor, labels: &Tensor) -> Result<Tensor> {
    let op = "cross_entropy";
    let x = logits.as_slice::<T>()?;
    let (n, classes) = match *logits.shape() {
        [n, classes] if labels.shape() == [n] => (n, classes),
        _ => {
            return Err(Error::Shape {
                op,
                message: format!(
                    "needs logits of shape [n, classes] and labels of shape [n]; they are \
                     {:?} and {:?}",
                    logits.shape(),
                    labels.shape()
                ),
            });
        }
    };
    let labels = labels.as_slice::<i64>().map_err(|e| match e {
        Error::DTypeMismatch { found, .. } => Error::Argument {
            op,
            message: format!("the labels must be i64 class indices, not {found}"),
        },
        e => e,
    })?;
    if n == 0 {
        return Err(Error::Empty { op });
    }
    if let Some((row, &bad)) = labels
        .iter()
        .enumerate()
        .find(|&(_, &l)| l < 0 || l as u64 >= classes as u64)
    {
        return Err(Error::Argument {
            op,
            message: format!("label {bad} of row {row} is not a class index in 0..{classes}"),
        });
    }
    let mut lane = vec![T::Acc::ZERO; classes];
    let mut losses = Vec::with_capacity(n);
    for (row, &label) in x.chunks(classes).zip(labels) {
        T::Acc::widen(row, &mut lane);
        let m = maximum(&lane);
        let exps: Vec<T::Acc> = lane.iter().map(|&v| (v - m).exp()).collect();
        losses.push(m + pairwise(&exps).ln() - lane[label as usize]);
    }
    let mean = pairwise(&losses) / T::Acc::of(n as f64);
    let mut out = [T::default()];
    T::Acc::narrow(&[mean], &mut out, false);
    Ok(Tensor::scalar(out[0]))
}

/// The normalisation ops, for every float dtype.
pub(crate) fn register(r: &mut Registry) {
    register!(r, "softmax", AxisKernel, softmax, floats);
    register!(r, "log_softmax", AxisKernel, log_softmax, floats);
    register!(r, "layer_norm", LayerNormKernel, layer_norm, floats);
    register!(r, "cross_entropy", BinaryKernel, cross_entropy, floats);
}
