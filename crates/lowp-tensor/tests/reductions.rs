//! Reductions against f64 references, within the error bound the `reduce` module derives,
//! and the seeds' "truncation ceiling" that f32 accumulation removes.

mod common;

use common::*;
use lowp::{LowpFloat, Rounding};
use lowp_tensor::ops::reduce::sum_rounding_depth;
use lowp_tensor::{DType, Error, Tensor, add_n};

/// `gamma_k = k u / (1 - k u)`.
fn gamma(k: u32, u: f64) -> f64 {
    let ku = k as f64 * u;
    ku / (1.0 - ku)
}

/// The f64 sum and the sum of magnitudes of `xs` (exact enough: f64 adds 29 bits to f32).
fn reference(xs: &[f64]) -> (f64, f64) {
    let sum = xs.iter().sum::<f64>();
    let abs = xs.iter().map(|x| x.abs()).sum::<f64>();
    (sum, abs)
}

/// The distance between the values of `T` just below and just above `x` (one ulp of `T`
/// around `x`, two when `x` is a value of `T`): twice the most that rounding near `x` moves
/// a value.
fn spacing<T: LowpFloat>(x: f64) -> f64 {
    let up = T::from_f64_round(x.next_up(), Rounding::TowardPositive);
    let down = T::from_f64_round(x.next_down(), Rounding::TowardNegative);
    LowpFloat::to_f64(up) - LowpFloat::to_f64(down)
}

/// The whole-tensor sum of `n` normal values in `T` is within the bound.
fn sum_within_bound<T: LowpFloat + lowp_tensor::FloatElement>(n: usize, seed: u64) {
    let x = Tensor::rand_normal(&[n], 0.0, 2.0, T::DTYPE, seed).unwrap();
    let values = x.to_f64_vec();
    let (exact, abs) = reference(&values);
    let got = x.sum(None).unwrap();
    assert_eq!(got.dtype(), T::DTYPE);
    let got = got.item().unwrap();
    let k = sum_rounding_depth(n);
    let accumulation = gamma(k, 2f64.powi(-24)) * abs + gamma(n as u32, 2f64.powi(-53)) * abs;
    let bound = accumulation + spacing::<T>(exact.abs() + accumulation) / 2.0;
    assert!(
        (got - exact).abs() <= bound,
        "{} n={n}: {got} vs {exact}, bound {bound}",
        T::FORMAT.name
    );
}

#[test]
fn sums_are_within_the_derived_bound() {
    for (n, seed) in [
        (1, 1),
        (31, 2),
        (1000, 3),
        (1025, 4),
        (100_000, 5),
        (1 << 20, 6),
    ] {
        sum_within_bound::<lowp::f16>(n, seed);
        sum_within_bound::<lowp::bf16>(n, seed);
    }
    // The 8-bit formats overflow beyond a few hundred (E4M3FN) or thousand values.
    for (n, seed) in [(1, 1), (31, 2), (200, 3), (1025, 4)] {
        sum_within_bound::<lowp::f8e5m2>(n, seed);
        sum_within_bound::<lowp::f8e4m3fnuz>(n, seed);
    }
    for (n, seed) in [(1, 1), (31, 2), (40, 3)] {
        sum_within_bound::<lowp::f8e4m3fn>(n, seed);
    }
}

#[test]
fn f32_sums_are_within_the_bound_and_f64_sums_nearly_exact() {
    let n = 1 << 20;
    let x = Tensor::rand_normal(&[n], 1.0, 3.0, DType::F32, 11).unwrap();
    let values = x.to_f64_vec();
    let (exact, abs) = reference(&values);
    let got = x.sum(None).unwrap().item().unwrap();
    let bound = gamma(sum_rounding_depth(n), 2f64.powi(-24)) * abs
        + gamma(n as u32, 2f64.powi(-53)) * abs
        + exact.abs() * 2f64.powi(-24);
    assert!((got - exact).abs() <= bound, "{got} {exact} {bound}");

    let y = x.cast(DType::F64).unwrap();
    let got = y.sum(None).unwrap().item().unwrap();
    let bound = gamma(sum_rounding_depth(n), 2f64.powi(-53)) * abs * 2.0;
    assert!((got - exact).abs() <= bound, "{got} {exact} {bound}");
}

/// The seeds' section 1.4.2: once the running sum is 2^11 times the addend, an f16 sum
/// stops growing. 100,000 values of 0.1 summed in f16 stall at 256; accumulated in f32 the
/// sum is right to the last bit of f16.
#[test]
fn f32_accumulation_removes_the_truncation_ceiling() {
    let tenth = lowp::f16::from_f32(0.1);
    let n = 100_000;
    let stalled = (0..n).fold(lowp::f16::ZERO, |s, _| s + tenth);
    assert_eq!(stalled.to_f32(), 256.0);

    let x = Tensor::full(&[n], 0.1, DType::F16).unwrap();
    let ours = x.sum(None).unwrap().to_vec::<lowp::f16>().unwrap()[0];
    assert_eq!(ours, lowp::f16::from_f64(tenth.to_f64() * n as f64));
    assert_eq!(ours.to_f32(), 10000.0);

    // add_n reduces in f32 too: 2048 + 1 + 1 is 2050, where f16 steps would stay at 2048.
    let big = Tensor::full(&[3], 2048.0, DType::F16).unwrap();
    let one = Tensor::full(&[3], 1.0, DType::F16).unwrap();
    let total = add_n(&[&big, &one, &one]).unwrap();
    assert_eq!(total.to_f64_vec(), [2050.0; 3]);
    let f16_steps = lowp::f16::from_f32(2048.0) + lowp::f16::ONE + lowp::f16::ONE;
    assert_eq!(f16_steps.to_f32(), 2048.0);
}

/// Axis sums against the f64 sums of the same rows and columns, within the axis bound.
#[test]
fn axis_sums_and_means() {
    let shape = [7, 300, 5];
    let x = Tensor::rand_uniform(&shape, -4.0, 4.0, DType::BF16, 3).unwrap();
    let v = x.to_f64_vec();
    let at = |i: usize, j: usize, k: usize| v[(i * 300 + j) * 5 + k];
    for axis in 0..3 {
        let s = x.sum(Some(axis)).unwrap();
        let m = x.mean(Some(axis)).unwrap();
        let mut out_shape = shape.to_vec();
        let len = out_shape.remove(axis);
        assert_eq!(s.shape(), out_shape);
        let (sv, mv) = (s.to_f64_vec(), m.to_f64_vec());
        let mut idx = 0;
        for a in 0..out_shape[0] {
            for b in 0..out_shape[1] {
                let terms: Vec<f64> = (0..len)
                    .map(|t| match axis {
                        0 => at(t, a, b),
                        1 => at(a, t, b),
                        _ => at(a, b, t),
                    })
                    .collect();
                let (exact, abs) = reference(&terms);
                let k = 36 + (len as f64 / 8.0).log2().ceil().max(0.0) as u32;
                let accumulation = gamma(k, 2f64.powi(-24)) * abs;
                let bound = accumulation + spacing::<lowp::bf16>(exact.abs() + accumulation) / 2.0;
                assert!(
                    (sv[idx] - exact).abs() <= bound,
                    "axis {axis}: {} vs {exact}",
                    sv[idx]
                );
                // The mean: the accumulated sum divided in f32 (one more rounding), then bf16.
                let mean = exact / len as f64;
                let before = accumulation / len as f64 + (mean.abs() + 1.0) * 2f64.powi(-24);
                let mbound = before + spacing::<lowp::bf16>(mean.abs() + before) / 2.0;
                assert!(
                    (mv[idx] - mean).abs() <= mbound,
                    "axis {axis}: {} vs {mean}",
                    mv[idx]
                );
                idx += 1;
            }
        }
    }
}

#[test]
fn max_min_argmax() {
    let x = Tensor::from_vec(vec![3.0f32, -1.0, 7.5, 7.5, 2.0, -9.0], &[2, 3])
        .unwrap()
        .cast(DType::F16)
        .unwrap();
    assert_eq!(x.max(None).unwrap().item().unwrap(), 7.5);
    assert_eq!(x.min(None).unwrap().item().unwrap(), -9.0);
    assert_eq!(x.argmax(None).unwrap().to_vec::<i64>().unwrap(), [2]);
    assert_eq!(x.argmax(Some(1)).unwrap().to_vec::<i64>().unwrap(), [2, 0]);
    assert_eq!(
        x.argmax(Some(0)).unwrap().to_vec::<i64>().unwrap(),
        [1, 1, 0]
    );
    assert_eq!(x.max(Some(0)).unwrap().to_f64_vec(), [7.5, 2.0, 7.5]);
    assert_eq!(x.min(Some(1)).unwrap().to_f64_vec(), [-1.0, -9.0]);
}

#[test]
fn nan_and_infinity_propagate_as_ieee_says() {
    let x = tensor(&[1.0f32, f32::NAN, 3.0, f32::INFINITY]);
    let h = x.cast(DType::BF16).unwrap();
    assert!(h.sum(None).unwrap().item().unwrap().is_nan());
    assert!(h.max(None).unwrap().item().unwrap().is_nan());
    assert!(h.min(None).unwrap().item().unwrap().is_nan());
    assert_eq!(h.argmax(None).unwrap().to_vec::<i64>().unwrap(), [1]);
    let inf = tensor(&[1.0f32, f32::INFINITY, -2.0])
        .cast(DType::F16)
        .unwrap();
    assert_eq!(inf.sum(None).unwrap().item().unwrap(), f64::INFINITY);
    assert_eq!(inf.max(None).unwrap().item().unwrap(), f64::INFINITY);
    let both = tensor(&[f32::INFINITY, f32::NEG_INFINITY])
        .cast(DType::F16)
        .unwrap();
    assert!(both.sum(None).unwrap().item().unwrap().is_nan());
    // Overflow of the f16 result, not of the f32 accumulator.
    let big = Tensor::full(&[4], 60000.0, DType::F16).unwrap();
    assert_eq!(big.sum(None).unwrap().item().unwrap(), f64::INFINITY);
    assert_eq!(big.mean(None).unwrap().item().unwrap(), 60000.0);
}

#[test]
fn empty_tensors() {
    let e = Tensor::zeros(&[0], DType::F16).unwrap();
    assert_eq!(e.sum(None).unwrap().item().unwrap(), 0.0);
    for (op, err) in [
        ("mean", e.mean(None).unwrap_err()),
        ("max", e.max(None).unwrap_err()),
        ("min", e.min(None).unwrap_err()),
        ("argmax", e.argmax(None).unwrap_err()),
    ] {
        assert_eq!(err, Error::Empty { op });
        assert!(err.to_string().contains("empty"), "{err}");
    }
    let rows = Tensor::zeros(&[0, 3], DType::F32).unwrap();
    assert_eq!(rows.sum(Some(0)).unwrap().to_f64_vec(), [0.0; 3]);
    assert_eq!(rows.sum(Some(1)).unwrap().shape(), &[0]);
    assert!(rows.max(Some(0)).is_err());
    assert_eq!(rows.max(Some(1)).unwrap().shape(), &[0]);
}

#[test]
fn bad_axes_and_dtypes() {
    let x = Tensor::zeros(&[2, 3], DType::BF16).unwrap();
    let err = x.sum(Some(2)).unwrap_err().to_string();
    assert_eq!(err, "sum: axis 2 is out of range for a tensor of rank 2");
    let ints = Tensor::zeros(&[2], DType::I32).unwrap();
    let err = ints.sum(None).unwrap_err().to_string();
    assert!(
        err.starts_with("op 'sum' has no cpu kernel for dtype i32; registered dtypes: f16, bf16"),
        "{err}"
    );
    let a = Tensor::zeros(&[2], DType::F16).unwrap();
    let b = Tensor::zeros(&[3], DType::F16).unwrap();
    let err = add_n(&[&a, &b]).unwrap_err().to_string();
    assert!(err.contains("[2]") && err.contains("[3]"), "{err}");
    let c = Tensor::zeros(&[2], DType::BF16).unwrap();
    let err = add_n(&[&a, &c]).unwrap_err().to_string();
    assert!(err.contains("f16, bf16"), "{err}");
    assert!(add_n(&[]).is_err());
}
