//! Helpers shared by the integration tests: every value of a format, and the checks of
//! rounding against an f64 reference.
#![allow(dead_code)]

use lowp::{LowpFloat, Rounding};
use lowp_tensor::{DType, Tensor};

/// Every bit pattern of a format, as values.
pub fn every_value<T: LowpFloat>() -> Vec<T> {
    (0..1u32 << T::FORMAT.total_bits())
        .map(T::from_bits_u32)
        .collect()
}

/// A rank-1 tensor of `xs`.
pub fn tensor<T: lowp_tensor::Element>(xs: &[T]) -> Tensor {
    Tensor::from_slice(xs, &[xs.len()]).unwrap()
}

/// Whether two values are the same: equal bits, or both NaN.
pub fn same<T: LowpFloat>(a: T, b: T) -> bool {
    a.to_bits() == b.to_bits() || (a.to_f64().is_nan() && b.to_f64().is_nan())
}

/// Whether `r` is `exact` rounded to nearest even in `T`. A NaN `exact`, of any sign, wants
/// what the format makes of the negative NaN that lowp's functions and x86's arithmetic give:
/// its NaN, or +0 in FP6 and FP4.
pub fn correctly_rounded<T: LowpFloat>(r: T, exact: f64) -> bool {
    same(
        r,
        T::from_f64(if exact.is_nan() { -f64::NAN } else { exact }),
    )
}

/// Whether `r` is within one ulp of `exact`: the nearest value of `T` or one of the two
/// values of `T` that bracket `exact` (its directed roundings), so `|r - exact| < ulp`.
pub fn faithful<T: LowpFloat>(r: T, exact: f64) -> bool {
    correctly_rounded(r, exact)
        || same(r, T::from_f64_round(exact, Rounding::TowardNegative))
        || same(r, T::from_f64_round(exact, Rounding::TowardPositive))
}

/// The same checks for f32 results.
pub fn correctly_rounded_f32(r: f32, exact: f64) -> bool {
    let want = exact as f32;
    r.to_bits() == want.to_bits() || (r.is_nan() && want.is_nan())
}

/// `r` is `exact` rounded up or down to an f32 (or to nearest).
pub fn faithful_f32(r: f32, exact: f64) -> bool {
    if correctly_rounded_f32(r, exact) {
        return true;
    }
    let near = exact as f32;
    let (down, up) = if (near as f64) < exact {
        (near, near.next_up())
    } else {
        (near.next_down(), near)
    };
    r == down || r == up
}

/// How many f64 ulps apart two finite f64s are (0 when equal, or both NaN).
pub fn ulps_f64(a: f64, b: f64) -> u64 {
    if a == b || (a.is_nan() && b.is_nan()) {
        return 0;
    }
    if a.is_nan() || b.is_nan() || a.is_infinite() || b.is_infinite() {
        return u64::MAX;
    }
    let key = |x: f64| {
        let bits = x.to_bits() as i64;
        if bits < 0 { i64::MIN - bits } else { bits }
    };
    key(a).abs_diff(key(b))
}

/// f32 inputs worth testing: the special values, values around the integers and ties, and
/// `n` more from a fixed sequence of random bit patterns and of values in [-10, 10].
pub fn f32_samples(n: usize) -> Vec<f32> {
    let mut xs = vec![
        0.0,
        -0.0,
        1.0,
        -1.0,
        0.5,
        -0.5,
        1.5,
        2.5,
        -2.5,
        3.0,
        1e-3,
        100.0,
        88.7,
        -88.7,
        89.0,
        1e30,
        -1e30,
        f32::MAX,
        f32::MIN,
        f32::MIN_POSITIVE,
        f32::EPSILON,
        1e-45,
        -1e-45,
        f32::INFINITY,
        f32::NEG_INFINITY,
        f32::NAN,
    ];
    let mut state = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = || {
        state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (state >> 32) as u32
    };
    for _ in 0..n / 2 {
        xs.push(f32::from_bits(next()));
        xs.push((next() as f64 / u32::MAX as f64 * 20.0 - 10.0) as f32);
    }
    xs
}

/// The dtype of every lowp format, with its Rust type, for tests that loop over them.
#[macro_export]
macro_rules! for_each_lowp {
    ($m:ident) => {
        $m!(lowp::f16);
        $m!(lowp::bf16);
        $m!(lowp::f8e4m3fn);
        $m!(lowp::f8e5m2);
        $m!(lowp::f8e4m3fnuz);
        $m!(lowp::f8e5m2fnuz);
        $m!(lowp::f8e4m3);
        $m!(lowp::f8e3m4);
        $m!(lowp::f8e8m0fnu);
        $m!(lowp::f6e2m3fn);
        $m!(lowp::f6e3m2fn);
        $m!(lowp::f4e2m1fn);
    };
}

/// The dtype of a lowp type.
pub fn dtype_of<T: lowp_tensor::Element>() -> DType {
    T::DTYPE
}
