//! Loss scaling: [`GradScaler`], with the knobs and defaults of PyTorch's
//! `torch.amp.GradScaler` and those Paddle's `update_loss_scaling` adds.
//!
//! FP16 gradients smaller than 2^-24 flush to zero. Multiplying the loss by a scale `S`
//! before the backward pass multiplies every gradient by `S` (the chain rule is linear in the
//! loss), which lifts them into FP16's range; the gradients are then cast to f32, multiplied
//! by `1/S` and checked for infinities and NaNs there ([`GradScaler::unscale`]), and the
//! optimizer step is skipped when any is found ([`GradScaler::step`]). [`GradScaler::update`]
//! then moves the scale by the schedule below, so it stays near the largest value that does
//! not overflow.
//!
//! # The schedule
//!
//! With `found_inf` the result of this iteration's unscale:
//!
//! * overflow: the count of good steps resets to 0 and the count of bad steps grows by one;
//!   when it reaches `decr_every_n_nan_or_inf`, the scale is multiplied by `backoff_factor`
//!   (but not below `min_scale`) and the bad count resets;
//! * no overflow: the bad count resets and the good count grows by one; when it reaches
//!   `growth_interval`, the scale is multiplied by `growth_factor` (kept as it was if that
//!   overflows f32) and the good count resets.
//!
//! With `decr_every_n_nan_or_inf = 1` and `min_scale = 0` this is PyTorch's
//! `_amp_update_scale_` exactly (its `_growth_tracker` is the good count); with Paddle's
//! knobs ([`GradScalerConfig::paddle`]) it is Paddle's `update_loss_scaling`. The one
//! implementation is [`lowp_tensor::ops::next_loss_scaling_with_floor`], which
//! [`lowp_tensor::ops::next_loss_scaling`] (Paddle's, floor 1) calls too.

use lowp_tensor::ops::{LossScaling, LossScalingConfig, next_loss_scaling_with_floor};
use lowp_tensor::{DType, Error, Result, Tensor, check_finite_and_unscale};
use serde::{Deserialize, Serialize};

/// The knobs of dynamic loss scaling. [`Default`] is PyTorch's `GradScaler()`.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct GradScalerConfig {
    /// The scale to start from (PyTorch: 2^16).
    pub init_scale: f32,
    /// Factor the scale grows by after `growth_interval` good steps (PyTorch: 2; Paddle's
    /// `incr_ratio`).
    pub growth_factor: f32,
    /// Factor the scale shrinks by after `decr_every_n_nan_or_inf` bad steps (PyTorch: 0.5;
    /// Paddle's `decr_ratio`).
    pub backoff_factor: f32,
    /// Consecutive steps without overflow before the scale grows (PyTorch: 2000; Paddle's
    /// `incr_every_n_steps`).
    pub growth_interval: u32,
    /// Consecutive steps with overflow before the scale shrinks (PyTorch: 1, it shrinks at
    /// once; Paddle: 2).
    pub decr_every_n_nan_or_inf: u32,
    /// The scale never shrinks below this (PyTorch: 0, no floor; Paddle: 1).
    pub min_scale: f32,
    /// Whether the scale moves at all. A static scale still unscales, checks and skips
    /// overflowing steps; it only never changes (Paddle's `use_dynamic_loss_scaling=False`).
    pub dynamic: bool,
}

impl Default for GradScalerConfig {
    /// PyTorch's `torch.amp.GradScaler()`: init 2^16, growth 2, backoff 0.5, interval 2000.
    fn default() -> Self {
        GradScalerConfig {
            init_scale: 65536.0,
            growth_factor: 2.0,
            backoff_factor: 0.5,
            growth_interval: 2000,
            decr_every_n_nan_or_inf: 1,
            min_scale: 0.0,
            dynamic: true,
        }
    }
}

impl GradScalerConfig {
    /// PyTorch's defaults (the same as [`Default`]).
    pub fn pytorch() -> Self {
        GradScalerConfig::default()
    }

    /// Paddle's `paddle.amp.GradScaler()` defaults: init 2^15, grow by 2 after 1000 good
    /// steps, shrink by 0.5 after 2 bad ones, never below 1.
    pub fn paddle() -> Self {
        GradScalerConfig {
            init_scale: 32768.0,
            growth_factor: 2.0,
            backoff_factor: 0.5,
            growth_interval: 1000,
            decr_every_n_nan_or_inf: 2,
            min_scale: 1.0,
            dynamic: true,
        }
    }

    /// A static scale: `scale` always (overflowing steps are still skipped).
    pub fn fixed(scale: f32) -> Self {
        GradScalerConfig {
            init_scale: scale,
            dynamic: false,
            ..GradScalerConfig::default()
        }
    }

    /// Checks the knobs, naming the one out of range.
    pub fn validate(&self) -> Result<()> {
        let bad = |message: String| {
            Err(Error::Argument {
                op: "GradScaler",
                message,
            })
        };
        if !(self.init_scale.is_finite() && self.init_scale > 0.0) {
            return bad(format!(
                "init_scale must be finite and positive, not {}",
                self.init_scale
            ));
        }
        if !(self.growth_factor.is_finite() && self.growth_factor > 1.0) {
            return bad(format!(
                "growth_factor must be above 1, not {}",
                self.growth_factor
            ));
        }
        if !(self.backoff_factor > 0.0 && self.backoff_factor < 1.0) {
            return bad(format!(
                "backoff_factor must be in (0, 1), not {}",
                self.backoff_factor
            ));
        }
        if self.growth_interval == 0 || self.decr_every_n_nan_or_inf == 0 {
            return bad("growth_interval and decr_every_n_nan_or_inf must be at least 1".into());
        }
        if !(self.min_scale.is_finite() && self.min_scale >= 0.0) {
            return bad(format!(
                "min_scale must be finite and not negative, not {}",
                self.min_scale
            ));
        }
        Ok(())
    }
}

/// Everything a [`GradScaler`] needs to carry on where it stopped: its knobs, the scale, the
/// counters of the schedule and the totals. Saved as JSON by [`GradScaler::state_json`].
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct ScalerState {
    /// The knobs.
    pub config: GradScalerConfig,
    /// The current scale.
    pub scale: f32,
    /// Consecutive steps without overflow (PyTorch's `_growth_tracker`, Paddle's
    /// `InGoodSteps`).
    pub good_steps: u32,
    /// Consecutive steps with overflow (Paddle's `InBadSteps`).
    pub bad_steps: u32,
    /// Iterations completed by [`GradScaler::update`].
    pub steps: u64,
    /// Of those, the ones whose optimizer step was skipped for an overflow.
    pub skipped_steps: u64,
}

/// The next `(scale, good_steps, bad_steps)` after an iteration: the schedule of the
/// [module docs](self), as a pure function. The schedule itself is
/// [`lowp_tensor::ops::next_loss_scaling_with_floor`] (Paddle's `update_loss_scaling` with
/// `min_scale` as the floor); this maps the knobs onto it and keeps a static scale still.
pub fn next_scale(state: &ScalerState, found_inf: bool) -> (f32, u32, u32) {
    let c = &state.config;
    if !c.dynamic {
        return (state.scale, state.good_steps, state.bad_steps);
    }
    let next = next_loss_scaling_with_floor(
        LossScaling {
            scale: state.scale,
            good_steps: state.good_steps,
            bad_steps: state.bad_steps,
        },
        found_inf,
        &LossScalingConfig {
            incr_every_n_steps: c.growth_interval,
            decr_every_n_nan_or_inf: c.decr_every_n_nan_or_inf,
            incr_ratio: c.growth_factor,
            decr_ratio: c.backoff_factor,
        },
        c.min_scale,
    );
    (next.scale, next.good_steps, next.bad_steps)
}

/// Dynamic (or static) loss scaling, used once per iteration as PyTorch's is:
///
/// ```
/// use lowp_amp::GradScaler;
/// use lowp_tensor::{DType, Tensor};
///
/// let mut scaler = GradScaler::default(); // scale 2^16
/// let loss = Tensor::full(&[], 0.5, DType::F32).unwrap();
/// assert_eq!(scaler.scale(&loss).unwrap().item().unwrap(), 32768.0);
/// // ... backward of the scaled loss gives f16 gradients ...
/// let mut grads = vec![Tensor::full(&[2], 1.0, DType::F16).unwrap()];
/// let applied = scaler.step(&mut grads, |g| {
///     assert_eq!(g[0].to_f64_vec(), [1.0 / 65536.0; 2]); // unscaled, in f32
///     Ok(())
/// }).unwrap();
/// assert!(applied);
/// scaler.update().unwrap();
///
/// let mut grads = vec![Tensor::full(&[2], f64::INFINITY, DType::F16).unwrap()];
/// assert!(!scaler.step(&mut grads, |_| unreachable!()).unwrap()); // skipped
/// scaler.update().unwrap();
/// assert_eq!(scaler.loss_scale(), 32768.0); // backed off
/// assert_eq!(scaler.state().skipped_steps, 1);
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct GradScaler {
    state: ScalerState,
    /// This iteration's overflow check, once [`GradScaler::unscale`] has run.
    found_inf: Option<bool>,
}

impl Default for GradScaler {
    /// PyTorch's defaults.
    fn default() -> Self {
        GradScaler::new(GradScalerConfig::default()).expect("the defaults are valid")
    }
}

impl GradScaler {
    /// A scaler with these knobs, at `init_scale`.
    pub fn new(config: GradScalerConfig) -> Result<GradScaler> {
        config.validate()?;
        Ok(GradScaler {
            state: ScalerState {
                config,
                scale: config.init_scale,
                good_steps: 0,
                bad_steps: 0,
                steps: 0,
                skipped_steps: 0,
            },
            found_inf: None,
        })
    }

    /// A static scale (see [`GradScalerConfig::fixed`]); `fixed(1.0)` is no loss scaling
    /// with the overflow check kept.
    pub fn fixed(scale: f32) -> Result<GradScaler> {
        GradScaler::new(GradScalerConfig::fixed(scale))
    }

    /// The current scale.
    pub fn loss_scale(&self) -> f32 {
        self.state.scale
    }

    /// The knobs.
    pub fn config(&self) -> &GradScalerConfig {
        &self.state.config
    }

    /// The scale, the counters and the totals.
    pub fn state(&self) -> ScalerState {
        self.state
    }

    /// The loss times the scale, in f32 (whatever the loss's dtype, as PyTorch's
    /// `scale` promotes to the f32 scale).
    pub fn scale(&self, loss: &Tensor) -> Result<Tensor> {
        let loss = loss.cast(DType::F32)?;
        loss.mul(&Tensor::scalar(self.state.scale))
    }

    /// Casts every gradient to f32, multiplies it by `1 / scale` there (Paddle's
    /// `check_finite_and_unscale`: the inverse rounded once, one rounding per element) and
    /// replaces it in `grads`; returns whether any input held an infinity or NaN. Once per
    /// iteration: a second call before [`GradScaler::update`] is an error, as in PyTorch,
    /// because it would divide by the scale twice.
    pub fn unscale(&mut self, grads: &mut [Tensor]) -> Result<bool> {
        if self.found_inf.is_some() {
            return Err(Error::Argument {
                op: "GradScaler::unscale",
                message: "unscale was already called this iteration; call update first".into(),
            });
        }
        let wide = grads
            .iter()
            .map(|g| g.cast(DType::F32))
            .collect::<Result<Vec<_>>>()?;
        let (unscaled, found_inf) = check_finite_and_unscale(&wide, self.state.scale)?;
        for (g, u) in grads.iter_mut().zip(unscaled) {
            *g = u;
        }
        self.found_inf = Some(found_inf);
        Ok(found_inf)
    }

    /// Unscales `grads` if [`GradScaler::unscale`] has not yet this iteration, then calls
    /// `apply` with them (the optimizer step) unless an infinity or NaN was found. Returns
    /// whether the step was applied; a skipped step leaves the master weights untouched.
    pub fn step(
        &mut self,
        grads: &mut [Tensor],
        apply: impl FnOnce(&[Tensor]) -> Result<()>,
    ) -> Result<bool> {
        let found_inf = match self.found_inf {
            Some(f) => f,
            None => self.unscale(grads)?,
        };
        if found_inf {
            return Ok(false);
        }
        apply(grads)?;
        Ok(true)
    }

    /// Ends the iteration: moves the scale by the schedule with this iteration's overflow
    /// check, and counts the step (and whether it was skipped). An error when nothing was
    /// unscaled this iteration (PyTorch: "No inf checks were recorded prior to update").
    pub fn update(&mut self) -> Result<()> {
        let Some(found_inf) = self.found_inf.take() else {
            return Err(Error::Argument {
                op: "GradScaler::update",
                message: "no overflow check was recorded this iteration; call unscale or \
                          step first"
                    .into(),
            });
        };
        let (scale, good, bad) = next_scale(&self.state, found_inf);
        self.state.scale = scale;
        self.state.good_steps = good;
        self.state.bad_steps = bad;
        // Saturating: a restored state may hold any count.
        self.state.steps = self.state.steps.saturating_add(1);
        self.state.skipped_steps = self
            .state
            .skipped_steps
            .saturating_add(u64::from(found_inf));
        Ok(())
    }

    /// A scaler that carries on from a saved state (its knobs are checked again).
    pub fn from_state(state: ScalerState) -> Result<GradScaler> {
        state.config.validate()?;
        if !(state.scale.is_finite() && state.scale > 0.0) {
            return Err(Error::Argument {
                op: "GradScaler::from_state",
                message: format!("the scale must be finite and positive, not {}", state.scale),
            });
        }
        Ok(GradScaler {
            state,
            found_inf: None,
        })
    }

    /// The state as JSON (the fields of [`ScalerState`]); an iteration in progress is not
    /// part of it, so save between [`GradScaler::update`] and the next backward pass.
    pub fn state_json(&self) -> String {
        serde_json::to_string_pretty(&self.state)
            .expect("the state is numbers and bools, which serde_json always writes")
    }

    /// A scaler restored from [`GradScaler::state_json`].
    pub fn from_state_json(json: &str) -> Result<GradScaler> {
        let state: ScalerState = serde_json::from_str(json).map_err(|e| Error::Argument {
            op: "GradScaler::from_state_json",
            message: e.to_string(),
        })?;
        GradScaler::from_state(state)
    }
}
