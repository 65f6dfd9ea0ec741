//! Finiteness tests, and the two loss-scaling kernels Paddle's mixed-precision training uses:
//! `check_finite_and_unscale` and `update_loss_scaling`.

use crate::blocks::{BLOCK, zip_blocks};
use crate::element::{FloatElement, Real};
use crate::error::{Error, Result};
use crate::registry::{Registry, register};
use crate::tensor::Tensor;
use std::sync::atomic::{AtomicBool, Ordering};

/// A bool tensor of `test` applied to every element.
fn test_each<T: FloatElement>(x: &Tensor, test: impl Fn(T) -> bool + Sync) -> Result<Tensor> {
    let src = x.as_slice::<T>()?;
    let mut out = vec![false; src.len()];
    zip_blocks(src, &mut out, |_, s, d| {
        for (o, &v) in d.iter_mut().zip(s) {
            *o = test(v);
        }
    });
    x.with_data(out)
}

/// `isfinite`: neither NaN nor infinite (every value of FP6/FP4, which have neither).
fn isfinite<T: FloatElement>(x: &Tensor) -> Result<Tensor> {
    test_each::<T>(x, T::is_finite)
}

/// `isnan`.
fn isnan<T: FloatElement>(x: &Tensor) -> Result<Tensor> {
    test_each::<T>(x, T::is_nan)
}

/// `isinf`: ±infinity.
fn isinf<T: FloatElement>(x: &Tensor) -> Result<Tensor> {
    test_each::<T>(x, T::is_infinite)
}

/// Paddle's `check_finite_and_unscale` for one tensor: every element times `1 / scale`
/// (the inverse computed once in `T::Acc`, as Paddle does, then one rounding per element),
/// and whether any element of the input was infinite or NaN.
fn check_finite_and_unscale<T: FloatElement>(x: &Tensor, scale: f32) -> Result<(Tensor, bool)> {
    if !(scale.is_finite() && scale > 0.0) {
        return Err(Error::Argument {
            op: "check_finite_and_unscale",
            message: format!("the loss scale must be finite and positive, not {scale}"),
        });
    }
    let src = x.as_slice::<T>()?;
    let inverse = T::Acc::ONE / T::Acc::of(scale as f64);
    let found = AtomicBool::new(false);
    let mut out = vec![T::default(); src.len()];
    zip_blocks(src, &mut out, |_, s, d| {
        if s.iter().any(|v| !v.is_finite()) {
            found.store(true, Ordering::Relaxed);
        }
        let mut buf = [T::Acc::ZERO; BLOCK];
        let buf = &mut buf[..s.len()];
        T::Acc::widen(s, buf);
        for v in buf.iter_mut() {
            *v = *v * inverse;
        }
        T::Acc::narrow(buf, d, false);
    });
    Ok((x.with_data(out)?, found.into_inner()))
}

/// The gradient step of `update_loss_scaling`: zeros of the tensor's shape when an overflow
/// was found (so applying them changes nothing), the tensor itself otherwise.
fn zero_if<T: FloatElement>(x: &Tensor, found_inf: bool) -> Result<Tensor> {
    x.as_slice::<T>()?;
    if found_inf {
        x.with_data(vec![T::from_f64(0.0); x.numel()])
    } else {
        Ok(x.clone())
    }
}

/// The state of dynamic loss scaling between steps (Paddle's `PrevLossScaling`,
/// `InGoodSteps`, `InBadSteps`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LossScaling {
    /// The current loss scale.
    pub scale: f32,
    /// Consecutive steps without overflow since the scale last changed.
    pub good_steps: u32,
    /// Consecutive steps with overflow since the scale last changed.
    pub bad_steps: u32,
}

/// The knobs of `update_loss_scaling`, with Paddle's names.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LossScalingConfig {
    /// Grow the scale after this many consecutive good steps.
    pub incr_every_n_steps: u32,
    /// Shrink the scale after this many consecutive steps with overflow.
    pub decr_every_n_nan_or_inf: u32,
    /// Factor to grow by (> 1).
    pub incr_ratio: f32,
    /// Factor to shrink by (in (0, 1)).
    pub decr_ratio: f32,
}

impl Default for LossScalingConfig {
    /// Paddle's `GradScaler` defaults: grow by 2 after 1000 good steps, shrink by 0.5 after 2
    /// bad ones.
    fn default() -> Self {
        LossScalingConfig {
            incr_every_n_steps: 1000,
            decr_every_n_nan_or_inf: 2,
            incr_ratio: 2.0,
            decr_ratio: 0.5,
        }
    }
}

impl LossScalingConfig {
    /// Checks the knobs, naming the one that is out of range.
    pub fn validate(&self) -> Result<()> {
        let bad = |message: String| {
            Err(Error::Argument {
                op: "update_loss_scaling",
                message,
            })
        };
        if self.incr_every_n_steps == 0 || self.decr_every_n_nan_or_inf == 0 {
            return bad("incr_every_n_steps and decr_every_n_nan_or_inf must be at least 1".into());
        }
        if !(self.incr_ratio.is_finite() && self.incr_ratio > 1.0) {
            return bad(format!(
                "incr_ratio must be above 1, not {}",
                self.incr_ratio
            ));
        }
        if !(self.decr_ratio > 0.0 && self.decr_ratio < 1.0) {
            return bad(format!(
                "decr_ratio must be in (0, 1), not {}",
                self.decr_ratio
            ));
        }
        Ok(())
    }
}

/// The new loss-scaling state after a step, exactly as Paddle's `update_loss_scaling`
/// computes it: on overflow the good count resets and the bad count grows, and when it
/// reaches `decr_every_n_nan_or_inf` the scale is multiplied by `decr_ratio` (never below 1)
/// and the count resets; without overflow the bad count resets and the good count grows, and
/// at `incr_every_n_steps` the scale is multiplied by `incr_ratio` (kept as it was if that
/// overflows f32) and the count resets. [`next_loss_scaling_with_floor`] with a floor of 1.
pub fn next_loss_scaling(
    state: LossScaling,
    found_inf: bool,
    config: &LossScalingConfig,
) -> LossScaling {
    next_loss_scaling_with_floor(state, found_inf, config, 1.0)
}

/// The schedule of [`next_loss_scaling`] with the scale kept at or above `min_scale` when it
/// shrinks (Paddle: 1; PyTorch's `GradScaler`: 0, no floor), the one implementation of the
/// schedule that `lowp_amp::GradScaler` uses too.
///
/// A count at or above its threshold (a state restored from elsewhere) counts as reaching it,
/// so the scale still moves and the counts never overflow.
///
/// ```
/// use lowp_tensor::ops::{LossScaling, LossScalingConfig, next_loss_scaling_with_floor};
/// let config = LossScalingConfig { decr_every_n_nan_or_inf: 1, ..LossScalingConfig::default() };
/// let state = LossScaling { scale: 1.0, good_steps: 0, bad_steps: 0 };
/// assert_eq!(next_loss_scaling_with_floor(state, true, &config, 0.0).scale, 0.5);
/// assert_eq!(next_loss_scaling_with_floor(state, true, &config, 1.0).scale, 1.0);
/// ```
pub fn next_loss_scaling_with_floor(
    state: LossScaling,
    found_inf: bool,
    config: &LossScalingConfig,
    min_scale: f32,
) -> LossScaling {
    let mut next = state;
    if found_inf {
        next.good_steps = 0;
        next.bad_steps = state.bad_steps.saturating_add(1);
        if next.bad_steps >= config.decr_every_n_nan_or_inf {
            next.scale = (state.scale * config.decr_ratio).max(min_scale);
            next.bad_steps = 0;
        }
    } else {
        next.bad_steps = 0;
        next.good_steps = state.good_steps.saturating_add(1);
        if next.good_steps >= config.incr_every_n_steps {
            let grown = state.scale * config.incr_ratio;
            next.scale = if grown.is_finite() {
                grown
            } else {
                state.scale
            };
            next.good_steps = 0;
        }
    }
    next
}

/// The finiteness tests and the loss-scaling kernels, for every float dtype.
pub(crate) fn register(r: &mut Registry) {
    register!(r, "isfinite", UnaryKernel, isfinite, floats);
    register!(r, "isnan", UnaryKernel, isnan, floats);
    register!(r, "isinf", UnaryKernel, isinf, floats);
    register!(
        r,
        "check_finite_and_unscale",
        UnscaleKernel,
        check_finite_and_unscale,
        floats
    );
    register!(r, "update_loss_scaling", ZeroIfKernel, zero_if, floats);
}
