//! Classification, sign functions, comparisons and min/max, checked on every value (every pair
//! for the 8-bit-or-narrower formats) against the same operation on the exact f64 value.

use core::cmp::Ordering;
use core::num::FpCategory;
use lowp::{
    LowpFloat, bf16, f4e2m1fn, f6e2m3fn, f6e3m2fn, f8e3m4, f8e4m3, f8e4m3fn, f8e4m3fnuz, f8e5m2,
    f8e5m2fnuz, f8e8m0fnu, f16,
};

/// The operations under test, gathered so one generic checker serves every type.
struct Ops<T> {
    classify: fn(T) -> FpCategory,
    abs: fn(T) -> T,
    signum: fn(T) -> T,
    copysign: fn(T, T) -> T,
    ulp: fn(T) -> T,
    min: fn(T, T) -> T,
    max: fn(T, T) -> T,
    minimum: fn(T, T) -> T,
    maximum: fn(T, T) -> T,
    total_cmp: fn(&T, &T) -> Ordering,
    clamp: fn(T, T, T) -> T,
    infinite_sign: fn(T) -> i32,
}

macro_rules! ops {
    ($t:ty) => {
        Ops::<$t> {
            classify: <$t>::classify,
            abs: <$t>::abs,
            signum: <$t>::signum,
            copysign: <$t>::copysign,
            ulp: <$t>::ulp,
            min: <$t>::min,
            max: <$t>::max,
            minimum: <$t>::minimum,
            maximum: <$t>::maximum,
            total_cmp: <$t>::total_cmp,
            clamp: <$t>::clamp,
            infinite_sign: <$t>::infinite_sign,
        }
    };
}

fn value<T: LowpFloat>(x: T) -> f64 {
    x.to_f64()
}

/// Same value, both NaN, or same zero sign where the format has -0.
fn same<T: LowpFloat>(got: T, want: f64) -> bool {
    let g = got.to_f64();
    if want.is_nan() {
        return g.is_nan();
    }
    g == want && (!T::FORMAT.has_negative_zero() || g.is_sign_negative() == want.is_sign_negative())
}

fn unary<T: LowpFloat>(ops: &Ops<T>) {
    let fmt = T::FORMAT;
    let min_normal = T::from_bits_u32(fmt.min_positive_normal_bits()).to_f64();
    for bits in 0..1u32 << fmt.total_bits() {
        let x = T::from_bits_u32(bits);
        let v = value(x);
        let want = if v.is_nan() {
            FpCategory::Nan
        } else if v.is_infinite() {
            FpCategory::Infinite
        } else if v == 0.0 {
            FpCategory::Zero
        } else if v.abs() < min_normal {
            FpCategory::Subnormal
        } else {
            FpCategory::Normal
        };
        assert_eq!((ops.classify)(x), want, "{} {bits:#x}", fmt.name);
        let sign = if v.is_infinite() {
            v.signum() as i32
        } else {
            0
        };
        assert_eq!((ops.infinite_sign)(x), sign);
        assert!(same((ops.abs)(x), v.abs()), "{} abs {bits:#x}", fmt.name);
        let signum = if v.is_nan() { f64::NAN } else { v.signum() };
        assert!(
            same((ops.signum)(x), signum),
            "{} signum {bits:#x}",
            fmt.name
        );
        // The quantum: 2^(max(e, emin) - mantissa_bits), e the exponent of |x|.
        if v.is_finite() {
            let e = if v == 0.0 {
                i32::MIN
            } else {
                v.abs().log2().floor() as i32
            };
            let q = e.max(fmt.min_exponent()) - fmt.mantissa_bits as i32;
            assert_eq!(
                value((ops.ulp)(x)),
                2f64.powi(q),
                "{} ulp {bits:#x}",
                fmt.name
            );
        }
    }
}

fn binary<T: LowpFloat>(ops: &Ops<T>, step: u32) {
    let fmt = T::FORMAT;
    let n = 1u32 << fmt.total_bits();
    for a in (0..n).step_by(step as usize) {
        let x = T::from_bits_u32(a);
        let v = value(x);
        for b in 0..n {
            let y = T::from_bits_u32(b);
            let w = value(y);
            let ctx = || format!("{} {a:#x} {b:#x}", fmt.name);
            assert_eq!(x == y, v == w, "{} ==", ctx());
            assert_eq!(
                x.partial_cmp(&y),
                v.partial_cmp(&w),
                "{} partial_cmp",
                ctx()
            );
            if !v.is_nan() && !w.is_nan() && (v != 0.0 || w != 0.0) {
                assert_eq!(
                    (ops.total_cmp)(&x, &y),
                    v.total_cmp(&w),
                    "{} total_cmp",
                    ctx()
                );
            }
            if v == 0.0 && w == 0.0 && fmt.has_negative_zero() {
                assert_eq!(
                    (ops.total_cmp)(&x, &y),
                    v.total_cmp(&w),
                    "{} total_cmp zeros",
                    ctx()
                );
            }
            // minNum/maxNum ignore NaN; -0 and +0 may come out either way.
            let (min, max) = if v.is_nan() {
                (w, w)
            } else if w.is_nan() {
                (v, v)
            } else {
                (v.min(w), v.max(w))
            };
            let (gmin, gmax) = (value((ops.min)(x, y)), value((ops.max)(x, y)));
            assert!(
                gmin == min || (gmin.is_nan() && min.is_nan()),
                "{} min",
                ctx()
            );
            assert!(
                gmax == max || (gmax.is_nan() && max.is_nan()),
                "{} max",
                ctx()
            );
            // minimum/maximum propagate NaN and order -0 below +0.
            let (minimum, maximum) = if v.is_nan() || w.is_nan() {
                (f64::NAN, f64::NAN)
            } else if v.total_cmp(&w).is_le() {
                (v, w)
            } else {
                (w, v)
            };
            assert!(same((ops.minimum)(x, y), minimum), "{} minimum", ctx());
            assert!(same((ops.maximum)(x, y), maximum), "{} maximum", ctx());
            // copysign: the magnitude of x with the sign bit of y (FNUZ: zero stays +0, NaN
            // stays NaN; unsigned formats are unchanged).
            let negative = y.to_bits_u32() & fmt.sign_mask() != 0;
            let want = if !fmt.signed || v.is_nan() {
                v
            } else if negative {
                -v.abs()
            } else {
                v.abs()
            };
            assert!(same((ops.copysign)(x, y), want), "{} copysign", ctx());
            // clamp(x, min(x, y), max(x, y)) is x; clamp with crossed or NaN bounds is NaN.
            if !v.is_nan() && !w.is_nan() {
                let (lo, hi) = if v <= w { (x, y) } else { (y, x) };
                assert_eq!(value((ops.clamp)(x, lo, hi)), v, "{} clamp", ctx());
                if v < w {
                    let crossed = (ops.clamp)(x, y, x);
                    if fmt.has_nan() {
                        assert!(value(crossed).is_nan(), "{} crossed clamp", ctx());
                    } else {
                        assert_eq!(crossed.to_bits_u32(), a, "{} crossed clamp", ctx());
                    }
                }
            }
        }
    }
    // NaN sorts at the ends of the total order.
    if let Some(nan) = fmt.nan_bits() {
        let nan = T::from_bits_u32(nan);
        let max = T::from_bits_u32(fmt.max_finite_bits());
        assert_eq!(
            (ops.total_cmp)(&nan, &max),
            Ordering::Greater,
            "{}",
            fmt.name
        );
    }
}

macro_rules! check_all {
    ($($name:ident: $t:ty, $step:expr);* $(;)?) => {$(
        #[test]
        fn $name() {
            let ops = ops!($t);
            unary(&ops);
            binary(&ops, $step);
        }
    )*};
}

check_all! {
    f16_every_value_against_a_spread: f16, 257;
    bf16_every_value_against_a_spread: bf16, 257;
    f8e4m3fn_every_pair: f8e4m3fn, 1;
    f8e5m2_every_pair: f8e5m2, 1;
    f8e4m3fnuz_every_pair: f8e4m3fnuz, 1;
    f8e5m2fnuz_every_pair: f8e5m2fnuz, 1;
    f8e4m3_every_pair: f8e4m3, 1;
    f8e3m4_every_pair: f8e3m4, 1;
    f8e8m0fnu_every_pair: f8e8m0fnu, 1;
    f6e2m3fn_every_pair: f6e2m3fn, 1;
    f6e3m2fn_every_pair: f6e3m2fn, 1;
    f4e2m1fn_every_pair: f4e2m1fn, 1;
}

#[test]
fn sign_helpers_on_the_special_encodings() {
    // FNUZ's NaN is the negative-zero pattern: abs and negation must not turn it into zero.
    assert!(f8e4m3fnuz::NAN.abs().is_nan());
    assert!(f8e4m3fnuz::NAN.is_sign_negative());
    assert_eq!(f8e4m3fnuz::ZERO.copysign(f8e4m3fnuz::NEG_ONE).to_bits(), 0);
    assert_eq!(f16::NEG_ZERO.signum().to_f32(), -1.0);
    assert_eq!(f8e8m0fnu::MIN.signum().to_f32(), 1.0);
    assert_eq!(
        f8e8m0fnu::MAX.copysign(f8e8m0fnu::MIN).to_bits(),
        f8e8m0fnu::MAX.to_bits()
    );
    assert!(f16::from_f32(-0.0).is_sign_negative() && f16::ZERO.is_sign_positive());
    assert!(f16::from_bits(0x3ff).is_subnormal() && !f16::from_bits(0x400).is_subnormal());
    assert!(f8e8m0fnu::MIN.is_normal(), "E8M0 has no subnormals");
    assert_eq!(f16::ZERO.ulp().to_bits(), 1);
    assert!(f16::NAN.ulp().is_nan());
    assert_eq!(f16::NEG_INFINITY.ulp().to_bits(), f16::INFINITY.to_bits());
}
