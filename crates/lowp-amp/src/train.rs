//! The trainer: the mixed-precision recipe, run on the digits data.
//!
//! One iteration, for every precision:
//!
//! 1. forward pass of a batch through the working copies of the weights (f32, f16, bf16 or
//!    FP8, as [`Precision`] says), the loss in f32;
//! 2. backward pass of `loss * loss_multiplier * loss_scale` (the gradient at the logits is
//!    computed in f32 and enters the layers in their dtype);
//! 3. the gradients cast to f32, divided by the loss scale and checked for infinities and
//!    NaNs ([`GradScaler::unscale`]);
//! 4. unless an overflow was found, SGD with momentum on the f32 master weights, with the
//!    learning rate divided by `loss_multiplier`;
//! 5. the loss scale and the FP8 scales updated, the working copies refreshed.
//!
//! `loss_multiplier` stands for a model whose gradients are tiny, as the mixed-precision
//! paper found in real networks (most activation gradients of its SSD detector were below
//! 2^-24). It is a power of two, and the learning rate is divided by it, so in f32 and bf16
//! (f32's exponent range) the training is the same as without it, bit for bit; in f16 it
//! pushes the gradients toward and below f16's smallest subnormal, 2^-24, which is what loss
//! scaling exists to undo.

use crate::autocast::{Autocast, AutocastPolicy};
use crate::data::{Split, permutation};
use crate::fp8::{DelayedScaling, ScalingMeta};
use crate::master::{CopyFormat, MasterWeights};
use crate::mlp::{Mlp, Numerics, accuracy, loss_and_grad};
use crate::scaler::{GradScaler, GradScalerConfig};
use lowp_tensor::{DType, Error, Result, Tensor};
use std::fmt;
use std::str::FromStr;
use std::time::Instant;

/// How a run computes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Precision {
    /// Everything in f32: the reference.
    F32,
    /// Linear layers in f16 (autocast), f32 master weights, dynamic loss scaling.
    F16,
    /// As [`Precision::F16`] but with no loss scaling (a static scale of 1): the gradients
    /// of the scaled-down loss underflow.
    F16NoScale,
    /// Linear layers in bf16 (autocast), f32 master weights, no loss scaling (bf16 has f32's
    /// range).
    Bf16,
    /// Matrix products in FP8 with delayed scaling (E4M3 forward, E5M2 gradients), f32
    /// master weights, no loss scaling.
    Fp8,
}

impl Precision {
    /// Every precision, in the order the comparison lists them.
    pub const ALL: [Precision; 5] = [
        Precision::F32,
        Precision::F16,
        Precision::F16NoScale,
        Precision::Bf16,
        Precision::Fp8,
    ];

    /// The name on the command line: `f32`, `f16`, `f16-noscale`, `bf16`, `fp8`.
    pub fn name(self) -> &'static str {
        match self {
            Precision::F32 => "f32",
            Precision::F16 => "f16",
            Precision::F16NoScale => "f16-noscale",
            Precision::Bf16 => "bf16",
            Precision::Fp8 => "fp8",
        }
    }

    /// What the run does, in a few words.
    pub fn description(self) -> &'static str {
        match self {
            Precision::F32 => "all f32",
            Precision::F16 => "f16 linear layers, f32 master weights, dynamic loss scaling",
            Precision::F16NoScale => "f16 linear layers, f32 master weights, no loss scaling",
            Precision::Bf16 => "bf16 linear layers, f32 master weights, no loss scaling",
            Precision::Fp8 => "FP8 matmuls (E4M3 fwd, E5M2 grads), delayed scaling",
        }
    }
}

impl fmt::Display for Precision {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad(self.name())
    }
}

impl FromStr for Precision {
    type Err = Error;

    fn from_str(s: &str) -> Result<Precision> {
        Precision::ALL
            .into_iter()
            .find(|p| p.name().eq_ignore_ascii_case(s))
            .ok_or_else(|| Error::Argument {
                op: "Precision",
                message: format!(
                    "unknown precision '{s}'; valid precisions: {}",
                    Precision::ALL.map(Precision::name).join(", ")
                ),
            })
    }
}

/// The hyper-parameters of a run.
#[derive(Clone, Debug, PartialEq)]
pub struct TrainConfig {
    /// Hidden layer sizes (the input is 64 pixels, the output 10 classes).
    pub hidden: Vec<usize>,
    /// Passes over the training set.
    pub epochs: usize,
    /// Images per step.
    pub batch_size: usize,
    /// SGD learning rate, for the gradient of the mean cross entropy.
    pub learning_rate: f32,
    /// SGD momentum (PyTorch's form: `v = momentum * v + g; w -= lr * v`).
    pub momentum: f32,
    /// The loss is multiplied by this before the backward pass and the learning rate divided
    /// by it (see the [module docs](self)); a power of two.
    pub loss_multiplier: f32,
    /// Seeds the split, the initial weights and the order of the batches.
    pub seed: u64,
    /// The share of the images held out for testing.
    pub test_fraction: f64,
    /// Loss scaling for [`Precision::F16`] (the other precisions use a static scale of 1).
    pub scaler: GradScalerConfig,
    /// The FP8 recipe for [`Precision::Fp8`].
    pub fp8: DelayedScaling,
    /// Which ops run in f16 or bf16 under autocast.
    pub policy: AutocastPolicy,
}

impl Default for TrainConfig {
    /// The configuration of the demonstration: hidden layers of 128 and 64, 20 epochs of
    /// batches of 32, SGD at 0.05 with momentum 0.9, the loss multiplied by 2^-20, a 20% test
    /// split, seed 0, PyTorch's GradScaler defaults but for a growth interval of 100 steps
    /// (2000 is longer than a run), TE's default recipe.
    fn default() -> Self {
        TrainConfig {
            hidden: vec![128, 64],
            epochs: 20,
            batch_size: 32,
            learning_rate: 0.05,
            momentum: 0.9,
            loss_multiplier: 2f32.powi(-20),
            seed: 0,
            test_fraction: 0.2,
            scaler: GradScalerConfig {
                growth_interval: 100,
                ..GradScalerConfig::default()
            },
            fp8: DelayedScaling::default(),
            policy: AutocastPolicy::default(),
        }
    }
}

impl TrainConfig {
    /// Checks the knobs.
    pub fn validate(&self) -> Result<()> {
        let bad = |message: String| {
            Err(Error::Argument {
                op: "TrainConfig",
                message,
            })
        };
        if self.epochs == 0 {
            return bad("epochs must be at least 1, not 0".into());
        }
        if self.batch_size == 0 {
            return bad("batch_size must be at least 1, not 0".into());
        }
        if !(self.learning_rate.is_finite() && self.learning_rate > 0.0) {
            return bad(format!(
                "the learning rate must be positive, not {}",
                self.learning_rate
            ));
        }
        if !(0.0..1.0).contains(&self.momentum) {
            return bad(format!("momentum must be in [0, 1), not {}", self.momentum));
        }
        let m = self.loss_multiplier;
        if !(m.is_normal() && m > 0.0 && m.to_bits() & 0x007f_ffff == 0) {
            return bad(format!(
                "the loss multiplier must be a positive power of two, not {m}"
            ));
        }
        self.scaler.validate()?;
        self.fp8.validate()
    }
}

/// What one epoch did.
#[derive(Clone, Debug, PartialEq)]
pub struct EpochStats {
    /// 1 for the first.
    pub epoch: usize,
    /// The mean over the epoch's steps of the cross entropy (unscaled, not multiplied).
    pub train_loss: f64,
    /// The cross entropy on the test set.
    pub test_loss: f64,
    /// The share of test images classified right.
    pub test_accuracy: f64,
    /// The loss scale at the end of the epoch.
    pub loss_scale: f32,
    /// Steps skipped for overflow so far.
    pub skipped_steps: u64,
    /// Steps taken so far (skipped ones included).
    pub steps: u64,
}

/// What a run did.
#[derive(Clone, Debug, PartialEq)]
pub struct RunResult {
    /// The precision.
    pub precision: Precision,
    /// One entry per epoch.
    pub epochs: Vec<EpochStats>,
    /// The test accuracy after the last epoch.
    pub test_accuracy: f64,
    /// Steps skipped for overflow.
    pub skipped_steps: u64,
    /// The loss scale at the end.
    pub final_loss_scale: f32,
    /// Wall-clock seconds of the training and evaluation.
    pub seconds: f64,
}

/// Trains the model of `config` on `data` in `precision`. `on_step(done, total)` is called
/// after every step, `on_epoch` after every epoch (for progress reports).
pub fn train(
    precision: Precision,
    config: &TrainConfig,
    data: &Split,
    mut on_step: impl FnMut(u64, u64),
    mut on_epoch: impl FnMut(&EpochStats),
) -> Result<RunResult> {
    config.validate()?;
    let start = Instant::now();
    let mut sizes = vec![crate::data::FEATURES];
    sizes.extend(&config.hidden);
    sizes.push(crate::data::CLASSES);
    let mlp = Mlp::new(&sizes)?;

    let (mut numerics, copy_format) = setup(precision, config, mlp.layers())?;
    let init = mlp.init(config.seed, DType::F32)?;
    let params = mlp
        .param_names()
        .into_iter()
        .zip(init)
        .enumerate()
        .map(|(i, (name, value))| {
            // Biases are not matrix-product operands: under FP8 they stay f32.
            let format = if i % 2 == 1 && matches!(copy_format, CopyFormat::Fp8(_)) {
                CopyFormat::Master
            } else {
                copy_format.clone()
            };
            (name, value, format)
        })
        .collect();
    let mut params = MasterWeights::new(params)?;
    let mut scaler = match precision {
        Precision::F16 => GradScaler::new(config.scaler)?,
        _ => GradScaler::fixed(1.0)?,
    };
    let mut velocity: Vec<Vec<f32>> = (0..params.len())
        .map(|i| params.master(i).map(|m| vec![0.0; m.numel()]))
        .collect::<Result<_>>()?;

    let n = data.train.len();
    let steps_per_epoch = n.div_ceil(config.batch_size) as u64;
    let total_steps = steps_per_epoch * config.epochs as u64;
    let (test_x, test_y) = data.test.batch(&(0..data.test.len()).collect::<Vec<_>>())?;
    let lr = config.learning_rate / config.loss_multiplier;
    let mut epochs = Vec::with_capacity(config.epochs);
    for epoch in 1..=config.epochs {
        let order = permutation(n, config.seed ^ (epoch as u64).wrapping_mul(0x5851_f42d));
        let mut loss_sum = 0.0;
        for batch in order.chunks(config.batch_size) {
            let (x, y) = data.train.batch(batch)?;
            let copies: Vec<_> = (0..params.len())
                .map(|i| params.copy(i).cloned())
                .collect::<Result<_>>()?;
            let fwd = mlp.forward(&copies, &x, &mut numerics, true)?;
            let grad_scale = f64::from(config.loss_multiplier) * f64::from(scaler.loss_scale());
            let (loss, dlogits) = loss_and_grad(&numerics, &fwd.logits, &y, grad_scale)?;
            loss_sum += loss;
            let mut grads = mlp.backward(&fwd, &dlogits, &mut numerics)?;
            // FP8 scales are updated every iteration, whether or not the step is skipped.
            numerics.update_scales();
            params.update_scales(&config.fp8);
            let mut new_velocity = None;
            let applied = scaler.step(&mut grads, |g| {
                new_velocity = Some(sgd_velocity(&velocity, g, config.momentum)?);
                Ok(())
            })?;
            if let (true, Some(v)) = (applied, new_velocity) {
                velocity = v;
                params.update(|i, w| {
                    for (w, v) in w.iter_mut().zip(&velocity[i]) {
                        *w -= lr * v;
                    }
                })?;
            } else {
                // The FP8 copies take the new scales even when the weights stay.
                params.refresh()?;
            }
            scaler.update()?;
            on_step(scaler.state().steps, total_steps);
        }
        let copies: Vec<_> = (0..params.len())
            .map(|i| params.copy(i).cloned())
            .collect::<Result<_>>()?;
        let fwd = mlp.forward(&copies, &test_x, &mut numerics, false)?;
        let (test_loss, _) = loss_and_grad(&numerics, &fwd.logits, &test_y, 1.0)?;
        let state = scaler.state();
        let stats = EpochStats {
            epoch,
            train_loss: loss_sum / steps_per_epoch as f64,
            test_loss,
            test_accuracy: accuracy(&fwd.logits, &test_y)?,
            loss_scale: state.scale,
            skipped_steps: state.skipped_steps,
            steps: state.steps,
        };
        on_epoch(&stats);
        epochs.push(stats);
    }
    let last = epochs
        .last()
        .expect("config.validate() above keeps epochs at 1 or more");
    Ok(RunResult {
        precision,
        test_accuracy: last.test_accuracy,
        skipped_steps: last.skipped_steps,
        final_loss_scale: last.loss_scale,
        seconds: start.elapsed().as_secs_f64(),
        epochs,
    })
}

/// The numerics and the weights' copy format of a precision.
fn setup(
    precision: Precision,
    config: &TrainConfig,
    layers: usize,
) -> Result<(Numerics, CopyFormat)> {
    let autocast = |dtype| Numerics::Autocast(Autocast::new(dtype, config.policy.clone()));
    Ok(match precision {
        Precision::F32 => (Numerics::Autocast(Autocast::disabled()), CopyFormat::Master),
        Precision::F16 | Precision::F16NoScale => {
            (autocast(DType::F16), CopyFormat::Cast(DType::F16))
        }
        Precision::Bf16 => (autocast(DType::BF16), CopyFormat::Cast(DType::BF16)),
        Precision::Fp8 => (
            Numerics::fp8(config.fp8, layers)?,
            CopyFormat::Fp8(ScalingMeta::new(
                config.fp8.forward_dtype(),
                config.fp8.amax_history_len,
            )?),
        ),
    })
}

/// The new momentum buffers, `momentum * v + g`, from f32 gradients.
fn sgd_velocity(velocity: &[Vec<f32>], grads: &[Tensor], momentum: f32) -> Result<Vec<Vec<f32>>> {
    velocity
        .iter()
        .zip(grads)
        .map(|(v, g)| {
            let g = g.as_slice::<f32>()?;
            Ok(v.iter().zip(g).map(|(&v, &g)| momentum * v + g).collect())
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bad_knob_is_named_alone() {
        let epochs = TrainConfig {
            epochs: 0,
            ..TrainConfig::default()
        };
        let message = epochs.validate().unwrap_err().to_string();
        assert!(
            message.contains("epochs must be at least 1, not 0"),
            "{message}"
        );
        assert!(!message.contains("batch_size"), "{message}");
        let batch = TrainConfig {
            batch_size: 0,
            ..TrainConfig::default()
        };
        let message = batch.validate().unwrap_err().to_string();
        assert!(
            message.contains("batch_size must be at least 1"),
            "{message}"
        );
        assert!(!message.contains("epochs"), "{message}");
        assert!(TrainConfig::default().validate().is_ok());
    }

    #[test]
    fn precisions_parse_by_name_and_list_the_valid_ones() {
        assert_eq!(
            "F16-NoScale".parse::<Precision>().unwrap(),
            Precision::F16NoScale
        );
        let message = "f12".parse::<Precision>().unwrap_err().to_string();
        assert!(
            message.contains("'f12'") && message.contains("f32, f16, f16-noscale, bf16, fp8"),
            "{message}"
        );
    }
}
