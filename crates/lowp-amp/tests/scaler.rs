//! GradScaler: the documented schedule on scripted overflow sequences, skipped steps leave
//! the master weights alone, and a saved state carries on exactly.

use lowp_amp::master::{CopyFormat, MasterWeights};
use lowp_amp::{GradScaler, GradScalerConfig};
use lowp_tensor::{DType, Tensor};

/// One f16 gradient tensor: finite (1.0 times the scale), or holding `bad` in one element.
fn grads(scale: f32, bad: Option<f64>) -> Vec<Tensor> {
    let mut v = vec![f64::from(scale).min(60000.0); 4];
    if let Some(b) = bad {
        v[2] = b;
    }
    let t = Tensor::from_vec(v, &[4]).unwrap().cast(DType::F16).unwrap();
    vec![t]
}

/// Runs one iteration of the scaler with an overflow (`true`) or not; returns whether the
/// optimizer step ran.
fn iterate(scaler: &mut GradScaler, overflow: bool) -> bool {
    let mut g = grads(scaler.loss_scale(), overflow.then_some(f64::INFINITY));
    let mut ran = false;
    let applied = scaler
        .step(&mut g, |_| {
            ran = true;
            Ok(())
        })
        .unwrap();
    assert_eq!(applied, ran);
    scaler.update().unwrap();
    applied
}

#[test]
fn pytorch_defaults() {
    let c = GradScalerConfig::default();
    assert_eq!(c.init_scale, 65536.0);
    assert_eq!(c.growth_factor, 2.0);
    assert_eq!(c.backoff_factor, 0.5);
    assert_eq!(c.growth_interval, 2000);
    assert_eq!(c.decr_every_n_nan_or_inf, 1);
    assert!(c.dynamic);
    assert_eq!(GradScaler::default().loss_scale(), 65536.0);
}

#[test]
fn pytorch_schedule_on_a_scripted_sequence() {
    let mut s = GradScaler::new(GradScalerConfig {
        growth_interval: 3,
        ..GradScalerConfig::default()
    })
    .unwrap();
    // (overflow, step applied, scale after, good count after)
    let script = [
        (false, true, 65536.0, 1),
        (false, true, 65536.0, 2),
        (false, true, 131072.0, 0), // third good step in a row: doubles, counter resets
        (true, false, 65536.0, 0),  // overflow: halves at once, step skipped
        (false, true, 65536.0, 1),
        (false, true, 65536.0, 2),
        (true, false, 32768.0, 0), // overflow resets the good count before it reaches 3
        (true, false, 16384.0, 0),
        (false, true, 16384.0, 1),
        (false, true, 16384.0, 2),
        (false, true, 32768.0, 0),
    ];
    for (i, &(overflow, applied, scale, good)) in script.iter().enumerate() {
        assert_eq!(iterate(&mut s, overflow), applied, "step {i}");
        assert_eq!(s.loss_scale(), scale, "step {i}");
        assert_eq!(s.state().good_steps, good, "step {i}");
        assert_eq!(s.state().bad_steps, 0, "step {i}");
    }
    assert_eq!(s.state().steps, 11);
    assert_eq!(s.state().skipped_steps, 3);
}

#[test]
fn paddle_knobs_need_two_bad_steps_and_respect_the_floor() {
    let mut s = GradScaler::new(GradScalerConfig {
        init_scale: 4.0,
        growth_interval: 2,
        ..GradScalerConfig::paddle()
    })
    .unwrap();
    // (overflow, scale after, good, bad)
    let script = [
        (true, 4.0, 0, 1), // first bad step: scale kept
        (true, 2.0, 0, 0), // second in a row: halved, bad count resets
        (true, 2.0, 0, 1),
        (false, 2.0, 1, 0), // a good step resets the bad count
        (true, 2.0, 0, 1),
        (true, 1.0, 0, 0),
        (true, 1.0, 0, 1),
        (true, 1.0, 0, 0), // min_scale 1: would be 0.5
        (false, 1.0, 1, 0),
        (false, 2.0, 0, 0),
    ];
    for (i, &(overflow, scale, good, bad)) in script.iter().enumerate() {
        iterate(&mut s, overflow);
        let st = s.state();
        assert_eq!(
            (st.scale, st.good_steps, st.bad_steps),
            (scale, good, bad),
            "step {i}"
        );
    }
}

#[test]
fn static_scale_never_moves_but_still_skips() {
    let mut s = GradScaler::fixed(1024.0).unwrap();
    assert!(!iterate(&mut s, true));
    for _ in 0..5 {
        assert!(iterate(&mut s, false));
    }
    assert_eq!(s.loss_scale(), 1024.0);
    assert_eq!(s.state().skipped_steps, 1);
}

#[test]
fn growth_that_would_overflow_f32_keeps_the_scale() {
    let mut s = GradScaler::new(GradScalerConfig {
        init_scale: f32::MAX,
        growth_interval: 1,
        ..GradScalerConfig::default()
    })
    .unwrap();
    iterate(&mut s, false);
    assert_eq!(s.loss_scale(), f32::MAX);
}

#[test]
fn unscale_divides_in_f32_and_reports_inf_and_nan() {
    for bad in [f64::INFINITY, f64::NEG_INFINITY, f64::NAN] {
        let mut s = GradScaler::default();
        let mut g = grads(1.0, Some(bad));
        assert!(s.unscale(&mut g).unwrap(), "{bad}");
        assert_eq!(g[0].dtype(), DType::F32);
    }
    let mut s = GradScaler::default();
    let mut g = grads(65536.0, None);
    // 65536 is not representable in f16 (max 65504); the helper clamps to 60000.
    assert!(!s.unscale(&mut g).unwrap());
    assert_eq!(g[0].to_f64_vec(), [60000.0 / 65536.0; 4]);
    // A second unscale in the same iteration would divide twice.
    assert!(s.unscale(&mut g).is_err());
    s.update().unwrap();
    // update with no overflow check recorded is an error, as in PyTorch.
    assert!(s.update().is_err());
}

#[test]
fn an_overflow_leaves_the_master_weights_untouched() {
    let w = Tensor::from_vec(vec![0.5f32, -1.25, 3.0, 7.5], &[4]).unwrap();
    let mut params =
        MasterWeights::new(vec![("w".into(), w.clone(), CopyFormat::Cast(DType::F16))]).unwrap();
    let mut s = GradScaler::default();
    for bad in [f64::INFINITY, f64::NAN] {
        let mut g = grads(s.loss_scale(), Some(bad));
        let applied = s
            .step(&mut g, |g| {
                let g = g[0].to_vec::<f32>()?;
                params.update(|_, w| w.iter_mut().zip(&g).for_each(|(w, g)| *w -= g))
            })
            .unwrap();
        assert!(!applied);
        s.update().unwrap();
        assert_eq!(params.master(0).unwrap(), &w, "{bad}");
        assert_eq!(params.copy(0).unwrap().dequantize().unwrap(), w, "{bad}");
    }
    assert_eq!(s.state().skipped_steps, 2);
    assert_eq!(s.loss_scale(), 16384.0);
    // A finite step does move them.
    let mut g = grads(s.loss_scale(), None);
    s.step(&mut g, |g| {
        let g = g[0].to_vec::<f32>()?;
        params.update(|_, w| w.iter_mut().zip(&g).for_each(|(w, g)| *w -= g))
    })
    .unwrap();
    assert_eq!(
        params.master(0).unwrap().to_f64_vec(),
        [-0.5, -2.25, 2.0, 6.5]
    );
}

#[test]
fn a_saved_state_carries_on_exactly() {
    let config = GradScalerConfig {
        growth_interval: 4,
        ..GradScalerConfig::paddle()
    };
    let script = [
        false, true, false, false, true, true, false, false, false, false, true,
    ];
    let mut a = GradScaler::new(config).unwrap();
    for &o in &script[..5] {
        iterate(&mut a, o);
    }
    let json = a.state_json();
    let mut b = GradScaler::from_state_json(&json).unwrap();
    assert_eq!(a, b);
    for &o in &script[5..] {
        iterate(&mut a, o);
        iterate(&mut b, o);
        assert_eq!(a.state(), b.state());
    }
    assert!(GradScaler::from_state_json("{}").is_err());
    let broken = json.replace("\"growth_factor\": 2.0", "\"growth_factor\": 0.5");
    assert_ne!(broken, json);
    assert!(GradScaler::from_state_json(&broken).is_err());
}

#[test]
fn a_restored_state_with_any_counts_moves_on_without_overflow() {
    let mut state = GradScaler::new(GradScalerConfig {
        growth_interval: 3,
        decr_every_n_nan_or_inf: 2,
        ..GradScalerConfig::default()
    })
    .unwrap()
    .state();
    // Counts at or beyond their thresholds (a state saved by other code) count as reached.
    state.good_steps = u32::MAX;
    state.bad_steps = u32::MAX;
    state.steps = u64::MAX;
    state.skipped_steps = u64::MAX;
    let mut s = GradScaler::from_state(state).unwrap();
    iterate(&mut s, false);
    assert_eq!(s.loss_scale(), 131072.0);
    assert_eq!((s.state().good_steps, s.state().bad_steps), (0, 0));
    assert_eq!(s.state().steps, u64::MAX);
    let mut s = GradScaler::from_state(state).unwrap();
    iterate(&mut s, true);
    assert_eq!(s.loss_scale(), 32768.0);
    assert_eq!(s.state().skipped_steps, u64::MAX);
}

#[test]
fn the_scaler_and_paddles_update_loss_scaling_are_one_schedule() {
    use lowp_tensor::ops::{LossScaling, LossScalingConfig, next_loss_scaling};
    let config = GradScalerConfig {
        init_scale: 8.0,
        growth_interval: 2,
        ..GradScalerConfig::paddle()
    };
    let paddle = LossScalingConfig {
        incr_every_n_steps: 2,
        decr_every_n_nan_or_inf: 2,
        incr_ratio: 2.0,
        decr_ratio: 0.5,
    };
    let mut s = GradScaler::new(config).unwrap();
    let mut p = LossScaling {
        scale: 8.0,
        good_steps: 0,
        bad_steps: 0,
    };
    for (i, overflow) in [true, true, true, true, true, true, true, false, false, true]
        .into_iter()
        .enumerate()
    {
        iterate(&mut s, overflow);
        p = next_loss_scaling(p, overflow, &paddle);
        let st = s.state();
        assert_eq!(
            (st.scale, st.good_steps, st.bad_steps),
            (p.scale, p.good_steps, p.bad_steps),
            "step {i}"
        );
    }
}

#[test]
fn a_parameter_index_beyond_the_parameters_is_an_error() {
    let w = Tensor::from_vec(vec![1.0f32; 2], &[2]).unwrap();
    let params = MasterWeights::new(vec![("w".into(), w, CopyFormat::Master)]).unwrap();
    assert_eq!(params.name(0).unwrap(), "w");
    for err in [
        params.master(1).unwrap_err(),
        params.copy(1).map(|_| ()).unwrap_err(),
        params.format(7).map(|_| ()).unwrap_err(),
        params.name(1).map(|_| ()).unwrap_err(),
    ] {
        assert!(err.to_string().contains("there are 1"), "{err}");
    }
}
