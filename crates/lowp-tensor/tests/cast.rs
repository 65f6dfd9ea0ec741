//! `cast` between every pair of dtypes, against the scalar conversions of the `lowp` crate
//! and Rust's `as`.

mod common;

use common::*;
use lowp::LowpFloat;
use lowp_tensor::{DType, Element, FloatElement, Tensor};

/// Every value of `S` cast to `D` is `D::from_f32(x.to_f32())` (one rounding from the exact
/// value), saturating or not.
fn format_to_format<S: LowpFloat + FloatElement, D: LowpFloat + FloatElement>() {
    let xs = every_value::<S>();
    let t = tensor(&xs);
    let plain = t.cast(D::DTYPE).unwrap().to_vec::<D>().unwrap();
    let sat = t.cast_saturating(D::DTYPE).unwrap().to_vec::<D>().unwrap();
    for (i, &x) in xs.iter().enumerate() {
        let v = LowpFloat::to_f32(x);
        assert!(
            same(plain[i], <D as LowpFloat>::from_f32(v)),
            "{} {x:?} -> {}",
            S::FORMAT.name,
            D::FORMAT.name
        );
        assert!(same(sat[i], D::from_f32_saturating(v)), "{x:?} saturating");
    }
}

#[test]
fn every_value_of_every_format_to_every_format() {
    macro_rules! to_all {
        ($s:ty) => {{
            macro_rules! pair {
                ($d:ty) => {
                    format_to_format::<$s, $d>();
                };
            }
            for_each_lowp!(pair);
        }};
    }
    for_each_lowp!(to_all);
}

#[test]
fn formats_widen_exactly_to_f32_and_f64() {
    macro_rules! widen {
        ($t:ty) => {{
            let xs = every_value::<$t>();
            let t = tensor(&xs);
            let f = t.cast(DType::F32).unwrap().to_vec::<f32>().unwrap();
            let d = t.cast(DType::F64).unwrap().to_vec::<f64>().unwrap();
            for (i, &x) in xs.iter().enumerate() {
                let want = LowpFloat::to_f64(x);
                assert!(f[i] as f64 == want || (want.is_nan() && f[i].is_nan()));
                assert!(d[i] == want || (want.is_nan() && d[i].is_nan()));
            }
        }};
    }
    for_each_lowp!(widen);
}

#[test]
fn f32_and_f64_sources_round_once() {
    let xs = f32_samples(20_000);
    let ds: Vec<f64> = xs
        .iter()
        .map(|&x| x as f64 * (1.0 + 2f64.powi(-40)))
        .collect();
    let (t32, t64) = (tensor(&xs), tensor(&ds));
    macro_rules! check {
        ($t:ty) => {{
            let a = t32.cast(<$t>::DTYPE).unwrap().to_vec::<$t>().unwrap();
            let b = t64.cast(<$t>::DTYPE).unwrap().to_vec::<$t>().unwrap();
            for i in 0..xs.len() {
                assert!(same(a[i], <$t as LowpFloat>::from_f32(xs[i])));
                assert!(same(b[i], <$t as LowpFloat>::from_f64(ds[i])), "{}", ds[i]);
            }
        }};
    }
    for_each_lowp!(check);
    // The double-rounding cases: rounded once from f64, not through f32.
    let x = tensor(&[1.0 + 2f64.powi(-8) + 2f64.powi(-40)]);
    let bf = x.cast(DType::BF16).unwrap().to_vec::<lowp::bf16>().unwrap();
    assert_eq!(bf[0].to_bits(), 0x3f81);
    let x = tensor(&[1.0625 + 2f64.powi(-40)]);
    let e4 = x
        .cast(DType::F8E4M3FN)
        .unwrap()
        .to_vec::<lowp::f8e4m3fn>()
        .unwrap();
    assert_eq!(e4[0].to_bits(), 0x39);
    // f64 to f32 is Rust's `as`; saturating turns overflow and infinity into ±MAX.
    let big = tensor(&[1e300f64, -f64::INFINITY, f64::NAN]);
    let plain = big.cast(DType::F32).unwrap().to_vec::<f32>().unwrap();
    assert_eq!(plain[..2], [f32::INFINITY, f32::NEG_INFINITY]);
    let sat = big
        .cast_saturating(DType::F32)
        .unwrap()
        .to_vec::<f32>()
        .unwrap();
    assert_eq!(sat[..2], [f32::MAX, f32::MIN]);
    assert!(sat[2].is_nan());
}

#[test]
fn integers_and_bools() {
    let ints = tensor(&[-200i64, -1, 0, 1, 127, 128, 300, (1 << 60) + (1 << 52) + 1]);
    assert_eq!(
        ints.cast(DType::I8).unwrap().to_vec::<i8>().unwrap(),
        [56, -1, 0, 1, 127, -128, 44, 1] // wrapping, like `as`
    );
    assert_eq!(
        ints.cast_saturating(DType::I8)
            .unwrap()
            .to_vec::<i8>()
            .unwrap(),
        [-128, -1, 0, 1, 127, 127, 127, 127]
    );
    assert_eq!(
        ints.cast_saturating(DType::U8)
            .unwrap()
            .to_vec::<u8>()
            .unwrap(),
        [0, 0, 0, 1, 127, 128, 255, 255]
    );
    assert_eq!(
        ints.cast(DType::Bool).unwrap().to_vec::<bool>().unwrap(),
        [true, true, false, true, true, true, true, true]
    );
    // Integer to float rounds once from the exact integer.
    let bf = ints.cast(DType::BF16).unwrap().to_f64_vec();
    assert_eq!(bf[7], 2f64.powi(60) + 2f64.powi(53));
    let h = ints.cast(DType::F16).unwrap().to_f64_vec();
    assert_eq!(h[6], 300.0);
    assert_eq!(h[7], f64::INFINITY);
    let hs = ints.cast_saturating(DType::F16).unwrap().to_f64_vec();
    assert_eq!(hs[7], 65504.0);
    let e4 = ints.cast(DType::F8E4M3FN).unwrap().to_f64_vec();
    assert_eq!(e4[6], 288.0); // 300 lies between 288 and 320, nearer 288
    assert!(e4[7].is_nan()); // E4M3FN has no infinity
    let e4 = Tensor::from_vec(vec![1000i32], &[1]).unwrap();
    assert!(e4.cast(DType::F8E4M3FN).unwrap().to_f64_vec()[0].is_nan());
    assert_eq!(
        e4.cast_saturating(DType::F8E4M3FN).unwrap().to_f64_vec()[0],
        448.0
    );
    // Float to integer: toward zero, saturating at the bounds, NaN to 0; to bool: x != 0.
    let f = tensor(&[-2.75f32, 2.75, 1e10, -1e10, f32::NAN, 0.5, -0.0]);
    let h = f.cast(DType::F16).unwrap();
    assert_eq!(
        f.cast(DType::I32).unwrap().to_vec::<i32>().unwrap(),
        [-2, 2, i32::MAX, i32::MIN, 0, 0, 0]
    );
    assert_eq!(
        h.cast(DType::I8).unwrap().to_vec::<i8>().unwrap(),
        [-2, 2, 127, -128, 0, 0, 0]
    );
    assert_eq!(
        h.cast(DType::U8).unwrap().to_vec::<u8>().unwrap(),
        [0, 2, 255, 0, 0, 0, 0]
    );
    assert_eq!(
        h.cast(DType::Bool).unwrap().to_vec::<bool>().unwrap(),
        [true, true, true, true, true, true, false]
    );
    let b = tensor(&[true, false]);
    assert_eq!(
        b.cast(DType::F32).unwrap().to_vec::<f32>().unwrap(),
        [1.0, 0.0]
    );
    assert!(b.cast(DType::F8E8M0FNU).unwrap().to_f64_vec()[1].is_nan()); // no zero
    assert_eq!(b.cast(DType::I64).unwrap().to_vec::<i64>().unwrap(), [1, 0]);
}

#[test]
fn every_pair_of_dtypes_casts_and_keeps_the_shape() {
    let src = Tensor::arange(-3.0, 3.0, 1.0, DType::F64)
        .unwrap()
        .reshape(&[2, 3])
        .unwrap();
    for &from in DType::ALL {
        let x = src.cast(from).unwrap();
        assert_eq!(x.dtype(), from);
        for &to in DType::ALL {
            let y = x.cast(to).unwrap();
            assert_eq!(
                (y.dtype(), y.shape()),
                (to, &[2usize, 3][..]),
                "{from} -> {to}"
            );
            let z = x.cast_saturating(to).unwrap();
            assert_eq!(z.dtype(), to);
        }
    }
    // Small integers survive every round trip through a signed type that holds them.
    let x = src.cast(DType::I32).unwrap();
    for to in [
        DType::F16,
        DType::BF16,
        DType::F8E4M3FN,
        DType::F32,
        DType::I8,
        DType::I64,
    ] {
        assert_eq!(
            x.cast(to).unwrap().cast(DType::I32).unwrap(),
            x,
            "through {to}"
        );
    }
}

#[test]
fn large_casts_use_every_block_and_thread() {
    let n = (1 << 17) + 77;
    let x = Tensor::rand_normal(&[n], 0.0, 100.0, DType::F32, 3).unwrap();
    let h = x.cast(DType::F16).unwrap().to_vec::<lowp::f16>().unwrap();
    let xs = x.to_vec::<f32>().unwrap();
    for (a, &b) in h.iter().zip(&xs) {
        assert_eq!(a.to_bits(), lowp::f16::from_f32(b).to_bits());
    }
    assert_eq!(
        Element::to_f64(h[n - 1]),
        lowp::f16::from_f32(xs[n - 1]).to_f64()
    );
}
