//! softmax, log_softmax, layer_norm and cross_entropy against f64 references computed on the
//! same rounded inputs, and the loss-scaling kernels.
//!
//! These ops compute in f32 for the lowp formats: a handful of roundings of f32 (exp, a
//! pairwise sum of `n` terms, a division or a logarithm), each at most 2^-24 relative, before
//! the one rounding to the output. So each result must lie within half an ulp of the output
//! format plus `(8 + log2 n) * 2^-24` of the reference's magnitude (plus the same absolute
//! amount where a logarithm or a subtraction works on values near 1).

mod common;

use lowp::{LowpFloat, Rounding};
use lowp_tensor::ops::{LossScaling, LossScalingConfig, next_loss_scaling};
use lowp_tensor::{
    DType, Error, FloatElement, Tensor, check_finite_and_unscale, update_loss_scaling,
};

/// The distance between the values of `T` below and above `x`.
fn spacing<T: LowpFloat>(x: f64) -> f64 {
    let up = T::from_f64_round(x.next_up(), Rounding::TowardPositive);
    let down = T::from_f64_round(x.next_down(), Rounding::TowardNegative);
    LowpFloat::to_f64(up) - LowpFloat::to_f64(down)
}

/// Whether `got` is within the f32 computation's error and half an ulp of `T` of `want`.
fn close<T: LowpFloat>(got: f64, want: f64, n: usize) -> bool {
    let f32_error = (8.0 + (n as f64).log2()) * 2f64.powi(-24) * (want.abs() + 1.0);
    (got - want).abs() <= f32_error + spacing::<T>(want.abs() + f32_error) / 2.0
}

/// f64 softmax and log-softmax of a row.
fn softmax_row(row: &[f64]) -> (Vec<f64>, Vec<f64>) {
    let m = row.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let s: f64 = row.iter().map(|x| (x - m).exp()).sum();
    (
        row.iter().map(|x| (x - m).exp() / s).collect(),
        row.iter().map(|x| x - m - s.ln()).collect(),
    )
}

fn softmax_against_f64<T: LowpFloat + FloatElement>() {
    let (rows, cols) = (37, 129);
    let x = Tensor::rand_normal(&[rows, cols], 0.0, 4.0, T::DTYPE, 1).unwrap();
    let v = x.to_f64_vec();
    let (p, lp) = (x.softmax(1).unwrap(), x.log_softmax(1).unwrap());
    assert_eq!((p.dtype(), p.shape()), (T::DTYPE, x.shape()));
    let (p, lp) = (p.to_f64_vec(), lp.to_f64_vec());
    for r in 0..rows {
        let (want_p, want_lp) = softmax_row(&v[r * cols..(r + 1) * cols]);
        for c in 0..cols {
            let i = r * cols + c;
            assert!(
                close::<T>(p[i], want_p[c], cols),
                "{} softmax {} vs {}",
                T::FORMAT.name,
                p[i],
                want_p[c]
            );
            assert!(
                close::<T>(lp[i], want_lp[c], cols),
                "{} log_softmax {} vs {}",
                T::FORMAT.name,
                lp[i],
                want_lp[c]
            );
        }
    }
    // Along the first axis: the same as along the last of the transpose.
    let t = x.transpose().unwrap();
    let by_rows = t.softmax(1).unwrap().transpose().unwrap();
    assert_eq!(x.softmax(0).unwrap(), by_rows);
}

#[test]
fn softmax_and_log_softmax_match_f64() {
    softmax_against_f64::<lowp::f16>();
    softmax_against_f64::<lowp::bf16>();
    softmax_against_f64::<lowp::f8e4m3fn>();
    softmax_against_f64::<lowp::f8e5m2>();
}

#[test]
fn softmax_sums_to_one_in_f32_even_for_long_rows() {
    let x = Tensor::rand_normal(&[2, 100_000], 0.0, 1.0, DType::BF16, 4).unwrap();
    let p = x.softmax(1).unwrap().cast(DType::F64).unwrap();
    for s in p.sum(Some(1)).unwrap().to_f64_vec() {
        // 100,000 bf16 roundings of relative size 2^-9 at most, in sum: far below 2^-9 * n.
        assert!((s - 1.0).abs() < 5e-3, "{s}");
    }
}

#[test]
fn layer_norm_matches_f64() {
    let (rows, cols) = (11, 300);
    for dtype in [DType::F16, DType::BF16, DType::F32] {
        let x = Tensor::rand_normal(&[rows, cols], 3.0, 2.0, dtype, 2).unwrap();
        let w = Tensor::rand_uniform(&[cols], 0.5, 1.5, dtype, 3).unwrap();
        let b = Tensor::rand_uniform(&[cols], -1.0, 1.0, dtype, 4).unwrap();
        let eps = 1e-5;
        let y = x.layer_norm(Some(&w), Some(&b), eps).unwrap();
        let plain = x.layer_norm(None, None, eps).unwrap().to_f64_vec();
        let (xv, wv, bv, yv) = (
            x.to_f64_vec(),
            w.to_f64_vec(),
            b.to_f64_vec(),
            y.to_f64_vec(),
        );
        for r in 0..rows {
            let row = &xv[r * cols..(r + 1) * cols];
            let mean = row.iter().sum::<f64>() / cols as f64;
            let var = row.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / cols as f64;
            let inv = 1.0 / (var + eps).sqrt();
            for c in 0..cols {
                let norm = (row[c] - mean) * inv;
                let want = norm * wv[c] + bv[c];
                let i = r * cols + c;
                let ok = match dtype {
                    DType::F16 => {
                        close::<lowp::f16>(yv[i], want, cols)
                            && close::<lowp::f16>(plain[i], norm, cols)
                    }
                    DType::BF16 => {
                        close::<lowp::bf16>(yv[i], want, cols)
                            && close::<lowp::bf16>(plain[i], norm, cols)
                    }
                    _ => (yv[i] - want).abs() <= 1e-5 * (want.abs() + 1.0),
                };
                assert!(ok, "{dtype}: {} vs {want}", yv[i]);
            }
        }
    }
}

#[test]
fn cross_entropy_matches_f64() {
    let (n, classes) = (64, 10);
    let logits = Tensor::rand_normal(&[n, classes], 0.0, 3.0, DType::BF16, 5).unwrap();
    let labels: Vec<i64> = (0..n as i64).map(|i| (i * 7) % classes as i64).collect();
    let labels = Tensor::from_vec(labels.clone(), &[n]).unwrap();
    let loss = logits.cross_entropy(&labels).unwrap();
    assert_eq!((loss.dtype(), loss.shape()), (DType::BF16, &[][..]));
    let v = logits.to_f64_vec();
    let l = labels.to_vec::<i64>().unwrap();
    let want: f64 = (0..n)
        .map(|r| -softmax_row(&v[r * classes..(r + 1) * classes]).1[l[r] as usize])
        .sum::<f64>()
        / n as f64;
    assert!(
        close::<lowp::bf16>(loss.item().unwrap(), want, classes * n),
        "{} vs {want}",
        loss.item().unwrap()
    );
}

#[test]
fn nan_and_infinity_in_a_row() {
    let x = Tensor::from_vec(vec![1.0f32, f32::NAN, 2.0, 1.0, 2.0, 3.0], &[2, 3])
        .unwrap()
        .cast(DType::F16)
        .unwrap();
    let p = x.softmax(1).unwrap().to_f64_vec();
    assert!(p[..3].iter().all(|v| v.is_nan()));
    assert!(p[3..].iter().all(|v| v.is_finite()));
    let inf = Tensor::from_vec(vec![f32::NEG_INFINITY, 0.0], &[1, 2]).unwrap();
    assert_eq!(inf.softmax(1).unwrap().to_f64_vec(), [0.0, 1.0]);
    assert_eq!(
        inf.log_softmax(1).unwrap().to_f64_vec(),
        [f64::NEG_INFINITY, 0.0]
    );
}

#[test]
fn bad_arguments_are_errors() {
    let x = Tensor::zeros(&[2, 3], DType::F16).unwrap();
    assert_eq!(
        x.softmax(2).unwrap_err(),
        Error::Axis {
            op: "softmax",
            axis: 2,
            rank: 2
        }
    );
    let w = Tensor::zeros(&[2], DType::F16).unwrap();
    let err = x.layer_norm(Some(&w), None, 1e-5).unwrap_err().to_string();
    assert!(err.contains("[3]") && err.contains("[2]"), "{err}");
    let wb = Tensor::zeros(&[3], DType::BF16).unwrap();
    let err = x.layer_norm(Some(&wb), None, 1e-5).unwrap_err().to_string();
    assert!(err.contains("f16, bf16"), "{err}");
    assert!(x.layer_norm(None, None, -1.0).is_err());
    assert!(x.layer_norm(None, None, f64::NAN).is_err());
    let labels = Tensor::from_vec(vec![0i64, 3], &[2]).unwrap();
    let err = x.cross_entropy(&labels).unwrap_err().to_string();
    assert!(err.contains("label 3 of row 1"), "{err}");
    let labels = Tensor::from_vec(vec![0i32, 1], &[2]).unwrap();
    let err = x.cross_entropy(&labels).unwrap_err().to_string();
    assert!(err.contains("i64") && err.contains("i32"), "{err}");
    let labels = Tensor::from_vec(vec![0i64], &[1]).unwrap();
    assert!(x.cross_entropy(&labels).is_err());
    let empty = Tensor::zeros(&[0, 3], DType::F16).unwrap();
    let none = Tensor::from_vec(Vec::<i64>::new(), &[0]).unwrap();
    assert_eq!(
        empty.cross_entropy(&none).unwrap_err(),
        Error::Empty {
            op: "cross_entropy"
        }
    );
    assert_eq!(empty.softmax(1).unwrap().shape(), &[0, 3]);
}

#[test]
fn finiteness_tests_agree_with_the_scalar_ones_on_every_value() {
    macro_rules! check {
        ($t:ty) => {{
            let xs = common::every_value::<$t>();
            let t = common::tensor(&xs);
            let fin = t.isfinite().unwrap().to_vec::<bool>().unwrap();
            let nan = t.isnan().unwrap().to_vec::<bool>().unwrap();
            let inf = t.isinf().unwrap().to_vec::<bool>().unwrap();
            for (i, x) in xs.iter().enumerate() {
                assert_eq!(fin[i], x.is_finite());
                assert_eq!(nan[i], x.is_nan());
                assert_eq!(inf[i], x.is_infinite());
            }
        }};
    }
    for_each_lowp!(check);
}

#[test]
fn check_finite_and_unscale_multiplies_by_the_inverse_and_reports_overflow() {
    let g = Tensor::from_vec(vec![1024.0f32, -3.0, 0.5], &[3])
        .unwrap()
        .cast(DType::F16)
        .unwrap();
    let (out, found) = check_finite_and_unscale(std::slice::from_ref(&g), 1024.0).unwrap();
    assert!(!found);
    assert_eq!(out[0].to_f64_vec(), [1.0, -3.0 / 1024.0, 0.5 / 1024.0]);
    assert_eq!(out[0].dtype(), DType::F16);
    let bad = Tensor::from_vec(vec![1.0f32, f32::INFINITY], &[2])
        .unwrap()
        .cast(DType::BF16)
        .unwrap();
    let nan = Tensor::from_vec(vec![f32::NAN], &[1]).unwrap();
    let (_, found) = check_finite_and_unscale(&[g.clone(), bad], 2.0).unwrap();
    assert!(found);
    let (_, found) = check_finite_and_unscale(&[nan], 2.0).unwrap();
    assert!(found);
    // A non-power-of-two scale: one rounding of x * (1/scale), the inverse rounded in f32.
    let (out, _) = check_finite_and_unscale(std::slice::from_ref(&g), 3.0).unwrap();
    let inv = 1.0f32 / 3.0;
    let want: Vec<f64> = g
        .to_f64_vec()
        .iter()
        .map(|&x| lowp::f16::from_f32(x as f32 * inv).to_f64())
        .collect();
    assert_eq!(out[0].to_f64_vec(), want);
    for bad_scale in [0.0, -1.0, f32::NAN, f32::INFINITY] {
        assert!(check_finite_and_unscale(std::slice::from_ref(&g), bad_scale).is_err());
    }
}

#[test]
fn update_loss_scaling_follows_paddles_schedule() {
    let config = LossScalingConfig {
        incr_every_n_steps: 3,
        decr_every_n_nan_or_inf: 2,
        incr_ratio: 2.0,
        decr_ratio: 0.5,
    };
    let mut s = LossScaling {
        scale: 1024.0,
        good_steps: 0,
        bad_steps: 0,
    };
    // Three good steps double the scale and reset the count.
    for (found, scale, good, bad) in [
        (false, 1024.0, 1, 0),
        (false, 1024.0, 2, 0),
        (false, 2048.0, 0, 0),
        // One overflow: the good count resets, the scale waits for a second.
        (true, 2048.0, 0, 1),
        (false, 2048.0, 1, 0),
        (true, 2048.0, 0, 1),
        (true, 1024.0, 0, 0),
    ] {
        s = next_loss_scaling(s, found, &config);
        assert_eq!(
            s,
            LossScaling {
                scale,
                good_steps: good,
                bad_steps: bad
            }
        );
    }
    // Never below 1; never grown to infinity.
    let low = LossScaling {
        scale: 1.5,
        good_steps: 0,
        bad_steps: 1,
    };
    assert_eq!(next_loss_scaling(low, true, &config).scale, 1.0);
    let high = LossScaling {
        scale: f32::MAX,
        good_steps: 2,
        bad_steps: 0,
    };
    assert_eq!(next_loss_scaling(high, false, &config).scale, f32::MAX);

    // The kernel zeroes the gradients of an overflowing step, for every dtype.
    let g = Tensor::full(&[4], 3.0, DType::BF16).unwrap();
    let (out, next) = update_loss_scaling(std::slice::from_ref(&g), true, s, &config).unwrap();
    assert_eq!(out[0].to_f64_vec(), [0.0; 4]);
    assert_eq!(next.bad_steps, 1);
    let (out, _) = update_loss_scaling(std::slice::from_ref(&g), false, s, &config).unwrap();
    assert_eq!(out[0], g);
    let bad = LossScalingConfig {
        decr_ratio: 1.5,
        ..config
    };
    assert!(
        update_loss_scaling(&[g], false, s, &bad)
            .unwrap_err()
            .to_string()
            .contains("decr_ratio")
    );
    assert_eq!(LossScalingConfig::default().incr_every_n_steps, 1000);
}
