//! Delayed scaling: the scale TE's recipe gives from a known amax history, and the FP8
//! casts and products that use it.

use lowp_amp::fp8::{dtype_max, fp8_matmul};
use lowp_amp::{AmaxComputeAlgo, DelayedScaling, Fp8Format, ScalingMeta};
use lowp_tensor::{DType, Tensor};

fn recipe(len: usize, algo: AmaxComputeAlgo, margin: i32) -> DelayedScaling {
    DelayedScaling {
        margin,
        fp8_format: Fp8Format::Hybrid,
        amax_history_len: len,
        amax_compute_algo: algo,
    }
}

/// A slot fed one amax per iteration; the scales after each update.
fn scales(r: &DelayedScaling, dtype: DType, amaxes: &[f32]) -> Vec<f32> {
    let mut m = ScalingMeta::new(dtype, r.amax_history_len).unwrap();
    amaxes
        .iter()
        .map(|&a| {
            m.record(a);
            m.update(r);
            m.scale()
        })
        .collect()
}

#[test]
fn te_defaults_and_hybrid_formats() {
    let r = DelayedScaling::default();
    assert_eq!(r.margin, 0);
    assert_eq!(r.amax_history_len, 1024);
    assert_eq!(r.amax_compute_algo, AmaxComputeAlgo::Max);
    assert_eq!(r.forward_dtype(), DType::F8E4M3FN);
    assert_eq!(r.backward_dtype(), DType::F8E5M2);
    assert_eq!(dtype_max(DType::F8E4M3FN).unwrap(), 448.0);
    assert_eq!(dtype_max(DType::F8E5M2).unwrap(), 57344.0);
}

#[test]
fn max_over_the_window() {
    // History of 3: the 8 stays in the window for three updates, then drops out.
    let r = recipe(3, AmaxComputeAlgo::Max, 0);
    let got = scales(&r, DType::F8E4M3FN, &[2.0, 8.0, 0.5, 1.0, 4.0, 0.25]);
    assert_eq!(got, [224.0, 56.0, 56.0, 56.0, 112.0, 112.0]);
}

#[test]
fn most_recent_and_margin() {
    let r = recipe(3, AmaxComputeAlgo::MostRecent, 0);
    let got = scales(&r, DType::F8E4M3FN, &[2.0, 8.0, 0.5]);
    assert_eq!(got, [224.0, 56.0, 896.0]);
    // margin 2: scale = 448 / amax / 4.
    let r = recipe(3, AmaxComputeAlgo::MostRecent, 2);
    let got = scales(&r, DType::F8E4M3FN, &[2.0, 8.0, 0.5]);
    assert_eq!(got, [56.0, 14.0, 224.0]);
    // E5M2 gradients: 57344 / amax.
    let r = recipe(1, AmaxComputeAlgo::Max, 0);
    assert_eq!(
        scales(&r, DType::F8E5M2, &[1.0 / 1024.0]),
        [57344.0 * 1024.0]
    );
}

#[test]
fn zero_and_non_finite_amax_keep_the_previous_scale() {
    let r = recipe(1, AmaxComputeAlgo::Max, 0);
    let got = scales(
        &r,
        DType::F8E4M3FN,
        &[0.0, 4.0, 0.0, f32::INFINITY, f32::NAN, 2.0],
    );
    assert_eq!(got, [1.0, 112.0, 112.0, 112.0, 112.0, 224.0]);
}

#[test]
fn history_is_newest_first_and_rolls() {
    let r = recipe(3, AmaxComputeAlgo::Max, 0);
    let mut m = ScalingMeta::new(DType::F8E4M3FN, 3).unwrap();
    m.record(1.0);
    m.record(3.0);
    m.record(2.0); // the largest of an iteration counts
    assert_eq!(m.history(), [3.0, 0.0, 0.0]);
    m.update(&r);
    m.record(5.0);
    assert_eq!(m.history(), [5.0, 3.0, 0.0]);
    assert!(ScalingMeta::new(DType::F32, 3).is_err());
    assert!(recipe(0, AmaxComputeAlgo::Max, 0).validate().is_err());
}

#[test]
fn quantize_uses_the_delayed_scale_and_saturates() {
    let r = recipe(2, AmaxComputeAlgo::Max, 0);
    let mut m = ScalingMeta::new(DType::F8E4M3FN, 2).unwrap();
    let x = Tensor::from_vec(vec![0.5f32, -2.0, 0.0, 1.75], &[4]).unwrap();
    // First iteration: scale 1, amax 2 recorded.
    let q = m.quantize(&x).unwrap();
    assert_eq!(q.scale_inv, 1.0);
    assert_eq!(m.history()[0], 2.0);
    m.update(&r);
    assert_eq!(m.scale(), 224.0);
    // Now 2 maps to 448 exactly; a value twice the recorded amax saturates at 448.
    let y = Tensor::from_vec(vec![0.5f32, -2.0, 4.0], &[3]).unwrap();
    let q = m.quantize_frozen(&y).unwrap();
    assert_eq!(q.data.to_f64_vec(), [112.0, -448.0, 448.0]);
    assert_eq!(q.dequantize().unwrap().to_f64_vec(), [0.5, -2.0, 2.0]);
    assert_eq!(m.history()[0], 0.0, "quantize_frozen records nothing");
}

#[test]
fn fp8_matmul_divides_both_scales_out() {
    let mut ma = ScalingMeta::new(DType::F8E4M3FN, 1).unwrap();
    let mut mb = ScalingMeta::new(DType::F8E5M2, 1).unwrap();
    let r = recipe(1, AmaxComputeAlgo::Max, 0);
    let a = Tensor::from_vec(vec![0.25f32, 0.5, -0.125, 1.0], &[2, 2]).unwrap();
    let b = Tensor::from_vec(vec![1e-3f32, 2e-3, -4e-3, 8e-3], &[2, 2]).unwrap();
    ma.quantize(&a).unwrap();
    mb.quantize(&b).unwrap();
    ma.update(&r);
    mb.update(&r);
    let (qa, qb) = (ma.quantize(&a).unwrap(), mb.quantize(&b).unwrap());
    let want = a.matmul(&b).unwrap().to_f64_vec();
    let got = fp8_matmul(&qa, false, &qb, false).unwrap().to_f64_vec();
    for (g, w) in got.iter().zip(&want) {
        // E5M2 holds 2 mantissa bits: each operand within 2^-3 relative.
        assert!(
            (g - w).abs() <= 0.3 * w.abs().max(1e-3),
            "{got:?} vs {want:?}"
        );
    }
    // Without scaling, the E5M2 cast of b would lose most of it to the subnormal range.
    let got_t = fp8_matmul(&qb, true, &qa, true).unwrap().to_f64_vec();
    let want_t = b
        .transpose()
        .unwrap()
        .matmul(&a.transpose().unwrap())
        .unwrap()
        .to_f64_vec();
    for (g, w) in got_t.iter().zip(&want_t) {
        assert!(
            (g - w).abs() <= 0.3 * w.abs().max(1e-3),
            "{got_t:?} vs {want_t:?}"
        );
    }
}
