//! Mixed-precision training that works: loss scaling, FP32 master weights, an autocast
//! policy, FP8 delayed scaling, and a trainer that shows them on a real data set.
//!
//! The mixed-precision training recipe, as a library:
//!
//! 1. forward pass in the low-precision format ([`autocast`]: matrix products in f16 or
//!    bf16, softmax, losses and sums in f32; or [`fp8`]: matrix products on FP8 operands with
//!    per-tensor scales from an amax history);
//! 2. backward pass in the low-precision format, of a loss multiplied by a loss scale
//!    ([`GradScaler::scale`]);
//! 3. unscale and overflow check in f32 ([`GradScaler::unscale`]);
//! 4. update of the f32 master weights, skipped on overflow ([`GradScaler::step`],
//!    [`MasterWeights::update`]);
//! 5. the low-precision copies refreshed from the masters, the loss scale moved
//!    ([`GradScaler::update`]).
//!
//! [`train::train`] runs it on scikit-learn's handwritten digits ([`data`]) with a
//! perceptron of two hidden layers whose backward pass is written out on the tensor ops
//! ([`mlp`]), in f32, f16 with and without loss scaling, bf16 and FP8, so the claims of the
//! article can be checked: f16 needs loss scaling, bf16 does not, FP8 needs per-tensor
//! scales.
//!
//! ```
//! use lowp_amp::data::Digits;
//! use lowp_amp::train::{Precision, TrainConfig, train};
//!
//! let data = Digits::load().unwrap().split(0.2, 0).unwrap();
//! let config = TrainConfig { epochs: 1, ..TrainConfig::default() };
//! let run = train(Precision::Bf16, &config, &data, |_, _| {}, |_| {}).unwrap();
//! assert!(run.test_accuracy > 0.5);
//! ```
#![forbid(unsafe_code)]

pub mod autocast;
pub mod data;
pub mod fp8;
pub mod master;
pub mod mlp;
pub mod scaler;
pub mod train;

pub use autocast::{Autocast, AutocastPolicy, OpPrecision};
pub use fp8::{AmaxComputeAlgo, DelayedScaling, Fp8Format, Fp8Tensor, ScalingMeta};
pub use master::{CopyFormat, MasterWeights, WorkingCopy};
pub use scaler::{GradScaler, GradScalerConfig, ScalerState};
pub use train::{EpochStats, Precision, RunResult, TrainConfig, train};
