//! The demonstration of the formats article on the digits data, with fixed seeds: f16 with
//! loss scaling and bf16 within 1 point of f32, f16 without loss scaling measurably worse,
//! FP8 with delayed scaling within 2 points.
//!
//! How f16-noscale is made to fail: [`TrainConfig::default`] multiplies the loss by
//! `loss_multiplier = 2^-20` before the backward pass (and divides the learning rate by
//! 2^20, so f32 and bf16, which have f32's exponent range, train exactly as without it).
//! The gradients at the logits, `(softmax - onehot) / n * 2^-20` for a batch of `n`, are
//! then below `2^-20 / n` in magnitude: below 2^-25, half of f16's smallest subnormal 2^-24,
//! for the batches of 32, so with a static loss scale of 1 every one of them rounds to zero
//! when the backward pass casts it to f16 and the step changes nothing. Only the last, short
//! batch of each epoch (1,438 training images = 44 x 32 + 30) has gradients that can round
//! up to 2^-24, so f16-noscale gets one crude update per epoch and stays near chance. The
//! dynamic scaler (from 2^16) lifts the same gradients back into f16's normal range.

use lowp_amp::data::Digits;
use lowp_amp::{Precision, RunResult, TrainConfig, train};

#[test]
fn the_seed_recipe_on_digits() {
    let config = TrainConfig {
        epochs: 20,
        ..TrainConfig::default()
    };
    let data = Digits::load()
        .unwrap()
        .split(config.test_fraction, config.seed)
        .unwrap();
    assert_eq!((data.train.len(), data.test.len()), (1438, 359));
    let run = |p| -> RunResult {
        let r = train(p, &config, &data, |_, _| {}, |_| {}).unwrap();
        eprintln!(
            "{:12} accuracy {:.4} skipped {} scale {} loss {:.4} {:.2}s",
            p.name(),
            r.test_accuracy,
            r.skipped_steps,
            r.final_loss_scale,
            r.epochs.last().unwrap().train_loss,
            r.seconds
        );
        r
    };
    let f32 = run(Precision::F32);
    let f16 = run(Precision::F16);
    let noscale = run(Precision::F16NoScale);
    let bf16 = run(Precision::Bf16);
    let fp8 = run(Precision::Fp8);

    // The reference actually learns the task.
    assert!(f32.test_accuracy > 0.95, "f32 {}", f32.test_accuracy);
    assert_eq!(f32.epochs.len(), 20);
    assert!((f16.test_accuracy - f32.test_accuracy).abs() <= 0.01);
    assert!((bf16.test_accuracy - f32.test_accuracy).abs() <= 0.01);
    assert!((fp8.test_accuracy - f32.test_accuracy).abs() <= 0.02);
    // Without loss scaling the updates underflow: far worse, and not through overflows.
    assert!(
        noscale.test_accuracy < f32.test_accuracy - 0.2,
        "f16-noscale {}",
        noscale.test_accuracy
    );
    assert_eq!(noscale.skipped_steps, 0);
    assert_eq!(noscale.final_loss_scale, 1.0);
    // The dynamic scaler grew from 2^16 (growth interval 100, 900 steps).
    assert!(f16.final_loss_scale > 65536.0, "{}", f16.final_loss_scale);
    // bf16 and fp8 run without loss scaling.
    assert_eq!(bf16.final_loss_scale, 1.0);
    assert_eq!(fp8.final_loss_scale, 1.0);
}
