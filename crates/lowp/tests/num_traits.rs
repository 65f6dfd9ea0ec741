//! The `num-traits` implementations: `cargo test -p lowp --features num-traits --test num_traits`.
#![cfg(feature = "num-traits")]

use lowp::{
    ParseErrorKind, bf16, f4e2m1fn, f6e2m3fn, f6e3m2fn, f8e3m4, f8e4m3, f8e4m3fn, f8e4m3fnuz,
    f8e5m2, f8e5m2fnuz, f8e8m0fnu, f16,
};
use num_traits::float::{FloatCore, TotalOrder};
use num_traits::{
    AsPrimitive, Bounded, ConstOne, ConstZero, Float, FloatConst, FromPrimitive, Inv, MulAdd,
    MulAddAssign, Num, NumCast, One, Signed, ToPrimitive, Zero,
};
use std::cmp::Ordering;

/// Bitwise equality, so that NaN equals itself and -0 differs from +0.
macro_rules! same {
    ($a:expr, $b:expr) => {
        $a.to_bits() == $b.to_bits()
    };
}

// ---------------------------------------------------------------------------------------------
// Generic code over the traits compiles and works.

fn norm<T: Float>(xs: &[T]) -> T {
    xs.iter().fold(T::zero(), |acc, &x| acc.hypot(x))
}

fn mean<T: Num + NumCast + Copy>(xs: &[T]) -> T {
    let sum = xs.iter().fold(T::zero(), |a, &b| a + b);
    sum / T::from(xs.len()).unwrap()
}

fn largest<T: Bounded + PartialOrd + Copy>(xs: &[T]) -> T {
    xs.iter()
        .fold(T::min_value(), |a, &b| if b > a { b } else { a })
}

#[test]
fn generic_code() {
    let xs = [3.0, 4.0].map(f16::from_f64);
    assert_eq!(norm(&xs).to_f64(), 5.0);
    let xs = [1.0, 2.0, 4.5].map(f8e4m3fn::from_f64);
    assert_eq!(mean(&xs).to_f64(), 2.5);
    let xs = [0.5, 16.0, 2.0].map(f8e8m0fnu::from_f64);
    assert_eq!(largest(&xs).to_f64(), 16.0);
    fn unit<T: FloatConst + One + PartialEq + Copy>() -> T {
        T::one()
    }
    assert_eq!(unit::<f8e8m0fnu>().to_f64(), 1.0);
}

// ---------------------------------------------------------------------------------------------
// Float and FloatCore: every method is the inherent one, on every value.

macro_rules! float_unary {
    ($t:ident, $x:ident, $w:ident; $($m:ident),*) => {$(
        assert!(same!(<$t as Float>::$m($x), $x.$m()), "{}", $w(stringify!($m)));
    )*};
}
macro_rules! core_unary {
    ($t:ident, $x:ident, $w:ident; $($m:ident),*) => {$(
        assert!(same!(<$t as FloatCore>::$m($x), $x.$m()), "{}", $w(stringify!($m)));
    )*};
}
macro_rules! predicates {
    ($t:ident, $x:ident, $w:ident; $($m:ident),*) => {$(
        assert_eq!(<$t as Float>::$m($x), $x.$m(), "{}", $w(stringify!($m)));
        assert_eq!(<$t as FloatCore>::$m($x), $x.$m(), "{}", $w(stringify!($m)));
    )*};
}

macro_rules! float_traits {
    ($($t:ident),*) => {$({
        let name = stringify!($t);
        // Constants.
        assert!(<$t as Float>::nan().is_nan());
        assert!(<$t as Float>::infinity().is_infinite() && <$t as Float>::infinity() > $t::MAX);
        assert!(<$t as Float>::neg_infinity() < $t::MIN);
        let nz = <$t as Float>::neg_zero();
        assert!(nz.is_sign_negative() && nz == $t::from_f64(0.0), "{name}: -0");
        assert!(same!(<$t as Float>::max_value(), $t::MAX));
        assert!(same!(<$t as Float>::min_value(), $t::MIN));
        assert!(same!(<$t as Float>::min_positive_value(), $t::MIN_POSITIVE));
        assert!(same!(<$t as Float>::epsilon(), $t::EPSILON));
        assert!(same!(<$t as FloatCore>::nan(), <$t as Float>::nan()));
        assert!(same!(<$t as FloatCore>::infinity(), <$t as Float>::infinity()));
        assert!(same!(<$t as FloatCore>::neg_infinity(), <$t as Float>::neg_infinity()));
        assert!(same!(<$t as FloatCore>::neg_zero(), nz));
        assert!(same!(<$t as FloatCore>::max_value(), $t::MAX));
        assert!(same!(<$t as FloatCore>::min_value(), $t::MIN));
        assert!(same!(<$t as FloatCore>::min_positive_value(), $t::MIN_POSITIVE));
        assert!(same!(<$t as FloatCore>::epsilon(), $t::EPSILON));
        assert_eq!(<$t as Float>::infinity().to_f64(), f64::INFINITY);
        assert!(<$t as Float>::nan().to_f64().is_nan());

        let samples: Vec<$t> = (0..1u32 << $t::FORMAT.total_bits())
            .step_by(if $t::FORMAT.total_bits() > 8 { 61 } else { 1 })
            .map(|b| $t::from_bits(b as _))
            .collect();
        let two = $t::from_f64(2.0);
        for &x in &samples {
            let w = |what: &str| format!("{name}::{what}({:e})", x.to_f64());
            float_unary!($t, x, w; floor, ceil, round, trunc, fract, abs, signum, recip, sqrt,
                exp, exp2, ln, log2, log10, to_degrees, to_radians, cbrt, sin, cos, tan, asin,
                acos, atan, exp_m1, ln_1p, sinh, cosh, tanh, asinh, acosh, atanh);
            core_unary!($t, x, w; floor, ceil, round, trunc, fract, abs, signum, recip,
                to_degrees, to_radians);
            predicates!($t, x, w; is_nan, is_infinite, is_finite, is_normal, is_subnormal,
                is_sign_positive, is_sign_negative, classify);
            let (s, c) = <$t as Float>::sin_cos(x);
            assert!(same!(s, x.sin()) && same!(c, x.cos()), "{}", w("sin_cos"));
            assert!(same!(<$t as Float>::powi(x, 3), x.powi(3)), "{}", w("powi"));
            assert!(same!(<$t as FloatCore>::powi(x, -2), x.powi(-2)), "{}", w("powi"));
            for &y in samples.iter().step_by(7) {
                assert!(same!(<$t as Float>::powf(x, y), x.powf(y)), "{}", w("powf"));
                assert!(same!(<$t as Float>::atan2(x, y), x.atan2(y)), "{}", w("atan2"));
                assert!(same!(<$t as Float>::hypot(x, y), x.hypot(y)), "{}", w("hypot"));
                assert!(same!(<$t as Float>::log(x, y), x.log(y)), "{}", w("log"));
                assert!(same!(<$t as Float>::max(x, y), x.max(y)), "{}", w("max"));
                assert!(same!(<$t as Float>::min(x, y), x.min(y)), "{}", w("min"));
                assert!(same!(<$t as FloatCore>::max(x, y), x.max(y)), "{}", w("max"));
                assert!(same!(<$t as FloatCore>::min(x, y), x.min(y)), "{}", w("min"));
                assert!(same!(<$t as Float>::copysign(x, y), x.copysign(y)), "{}", w("copysign"));
                assert!(same!(<$t as Float>::mul_add(x, y, two), x.mul_add(y, two)), "{}", w("mul_add"));
                #[allow(deprecated)]
                let d = <$t as Float>::abs_sub(x, y);
                let (xf, yf) = (x.to_f64(), y.to_f64());
                if xf.is_nan() || yf.is_nan() {
                    assert!(d.is_nan(), "{}", w("abs_sub"));
                } else if xf <= yf {
                    assert!(same!(d, $t::from_f64(0.0)), "{}", w("abs_sub"));
                } else {
                    assert!(same!(d, x - y), "{}", w("abs_sub"));
                }
            }
            // integer_decode: sign * mantissa * 2^exponent, as num-traits defines it for f32.
            let (m, e, s) = <$t as Float>::integer_decode(x);
            assert_eq!((m, e, s), <$t as FloatCore>::integer_decode(x));
            if x.is_finite() {
                let v = s as f64 * m as f64 * 2f64.powi(e as i32);
                assert_eq!(v, x.to_f64(), "{}", w("integer_decode"));
                assert_eq!(s == -1, x.is_sign_negative());
            }
        }
        // clamp does not panic: a NaN bound or min > max gives NaN.
        let one = $t::from_f64(1.0);
        assert!(<$t as Float>::clamp(one, two, one).is_nan());
        assert!(same!(<$t as Float>::clamp($t::from_f64(3.0), one, two), two));
        assert!(same!(<$t as FloatCore>::clamp($t::from_f64(0.5), one, two), one));
    })*};
}

#[test]
fn float_and_float_core_forward_to_the_inherent_methods() {
    float_traits!(f16, bf16, f8e5m2, f8e4m3, f8e3m4);
}

#[test]
fn integer_decode_of_specials_follows_f32() {
    // num-traits: f32::INFINITY decodes as (1 << 23, 105, 1), the all-ones exponent field.
    assert_eq!(
        <f32 as Float>::integer_decode(f32::INFINITY),
        (1 << 23, 105, 1)
    );
    assert_eq!(
        <f16 as Float>::integer_decode(f16::from_f64(f64::INFINITY)),
        (1 << 10, 6, 1)
    );
    assert_eq!(
        <f16 as Float>::integer_decode(f16::from_f64(f64::NEG_INFINITY)),
        (1 << 10, 6, -1)
    );
    assert_eq!(
        <bf16 as Float>::integer_decode(bf16::from_f64(2.0)),
        (1 << 7, -6, 1)
    );
    // Subnormals are shifted left once, as for f32.
    assert_eq!(
        <f32 as Float>::integer_decode(f32::from_bits(1)),
        (2, -150, 1)
    );
    assert_eq!(
        <f16 as Float>::integer_decode(f16::from_bits(1)),
        (2, -25, 1)
    );
}

// ---------------------------------------------------------------------------------------------
// Identities, bounds, constants, Signed, TotalOrder, MulAdd, Inv: every type.

macro_rules! consts {
    ($t:ident, $name:ident; $($c:ident),*) => {$(
        assert!(same!(<$t as FloatConst>::$c(), $t::$c), "{}::{}", $name, stringify!($c));
        assert!(
            same!($t::$c, $t::from_f64(std::f64::consts::$c)),
            "{}::{}", $name, stringify!($c)
        );
    )*};
}

macro_rules! every_type {
    ($($t:ident),*) => {$({
        let name = stringify!($t);
        assert!(same!(<$t as One>::one(), $t::ONE), "{name}");
        assert!(same!(<$t as ConstOne>::ONE, $t::ONE), "{name}");
        assert!(<$t as One>::one().is_one(), "{name}");
        assert!(same!(<$t as Bounded>::max_value(), $t::MAX), "{name}");
        assert!(same!(<$t as Bounded>::min_value(), $t::MIN), "{name}");
        consts!($t, name; PI, TAU, E, SQRT_2, FRAC_1_SQRT_2, LN_2, LN_10, LOG2_E, LOG10_E,
            LOG2_10, LOG10_2, FRAC_PI_2, FRAC_PI_3, FRAC_PI_4, FRAC_PI_6, FRAC_PI_8, FRAC_1_PI,
            FRAC_2_PI, FRAC_2_SQRT_PI);
        for b in 0..1u32 << $t::FORMAT.total_bits() {
            let x = $t::from_bits(b as _);
            let y = $t::from_bits((b.wrapping_mul(37) + 11) as _ );
            assert_eq!(TotalOrder::total_cmp(&x, &y), x.total_cmp(&y), "{name}");
            assert!(same!(MulAdd::mul_add(x, y, x), x.mul_add(y, x)), "{name}");
            let mut z = x;
            MulAddAssign::mul_add_assign(&mut z, y, y);
            assert!(same!(z, x.mul_add(y, y)), "{name}");
            assert!(same!(Inv::inv(x), x.recip()), "{name}");
        }
    })*};
}

#[test]
fn traits_of_every_type() {
    every_type!(
        f16, bf16, f8e4m3fn, f8e5m2, f8e4m3fnuz, f8e5m2fnuz, f8e4m3, f8e3m4, f8e8m0fnu, f6e2m3fn,
        f6e3m2fn, f4e2m1fn
    );
}

macro_rules! signed_types {
    ($($t:ident),*) => {$({
        let name = stringify!($t);
        assert!(same!(<$t as Zero>::zero(), $t::from_f64(0.0)), "{name}");
        assert!(same!(<$t as ConstZero>::ZERO, $t::from_f64(0.0)), "{name}");
        assert!(<$t as Zero>::zero().is_zero() && !$t::ONE.is_zero(), "{name}");
        assert!($t::from_f64(-0.0).is_zero(), "{name}");
        let zero = $t::from_f64(0.0);
        for b in 0..1u32 << $t::FORMAT.total_bits().min(12) {
            let x = $t::from_bits(b as _);
            let y = $t::from_bits((b.wrapping_mul(29) + 5) as _);
            assert!(same!(Signed::abs(&x), x.abs()), "{name}");
            assert!(same!(Signed::signum(&x), x.signum()), "{name}");
            assert_eq!(Signed::is_positive(&x), x.is_sign_positive(), "{name}");
            assert_eq!(Signed::is_negative(&x), x.is_sign_negative(), "{name}");
            let d = Signed::abs_sub(&x, &y);
            if x.is_nan() || y.is_nan() {
                assert!(d.is_nan() || !$t::FORMAT.has_nan(), "{name}");
            } else if x <= y {
                assert!(same!(d, zero), "{name}");
            } else {
                assert!(same!(d, x - y), "{name}");
            }
        }
    })*};
}

#[test]
fn zero_num_and_signed() {
    signed_types!(
        f16, bf16, f8e4m3fn, f8e5m2, f8e4m3fnuz, f8e5m2fnuz, f8e4m3, f8e3m4, f6e2m3fn, f6e3m2fn,
        f4e2m1fn
    );
}

// ---------------------------------------------------------------------------------------------
// ToPrimitive and AsPrimitive out of the types.

/// num-traits' contract for float to integer: truncate, `None` unless the result fits: within
/// `[-2^(bits-1), 2^(bits-1))` or `[0, 2^bits)`.
fn expected_int(x: f64, bits: u32, signed: bool) -> Option<f64> {
    let t = x.trunc();
    let (min, end) = if signed {
        (-(2f64.powi(bits as i32 - 1)), 2f64.powi(bits as i32 - 1))
    } else {
        (0.0, 2f64.powi(bits as i32))
    };
    (x.is_finite() && t >= min && t < end).then_some(t)
}

macro_rules! ints {
    ($x:ident, $v:ident, $name:ident; $($m:ident $i:ident),*) => {$(
        let got = ToPrimitive::$m(&$x).map(|n| n as f64);
        assert_eq!(
            got,
            expected_int($v, $i::BITS, $i::MIN != 0),
            "{}::{}({:e})", $name, stringify!($m), $v
        );
        // AsPrimitive is `as`: saturating, NaN to 0.
        let a: $i = $x.as_();
        assert_eq!(a, $v as $i, "{} as {}", $name, stringify!($i));
    )*};
}

macro_rules! to_primitive {
    ($($t:ident),*) => {$({
        let name = stringify!($t);
        for b in 0..1u32 << $t::FORMAT.total_bits() {
            let x = $t::from_bits(b as _);
            let v = x.to_f64();
            ints!(x, v, name; to_i8 i8, to_i16 i16, to_i32 i32, to_i64 i64, to_i128 i128,
                to_isize isize, to_u8 u8, to_u16 u16, to_u32 u32, to_u64 u64, to_u128 u128,
                to_usize usize);
            let f: f64 = ToPrimitive::to_f64(&x).unwrap();
            assert!(f.to_bits() == v.to_bits() || (f.is_nan() && v.is_nan()));
            let f: f32 = ToPrimitive::to_f32(&x).unwrap();
            assert!(f as f64 == v || (f.is_nan() && v.is_nan()));
            let a: f64 = x.as_();
            assert!(a == v || (a.is_nan() && v.is_nan()));
        }
    })*};
}

#[test]
fn to_primitive_and_as_primitive_out() {
    to_primitive!(
        f16, bf16, f8e4m3fn, f8e5m2, f8e4m3fnuz, f8e5m2fnuz, f8e4m3, f8e3m4, f8e8m0fnu, f6e2m3fn,
        f6e3m2fn, f4e2m1fn
    );
    // Spot checks of the edges.
    let inf = f16::from_f64(f64::INFINITY);
    assert_eq!(ToPrimitive::to_i32(&inf), None);
    assert_eq!(ToPrimitive::to_i32(&f16::from_f64(f64::NAN)), None);
    assert_eq!(ToPrimitive::to_u8(&f16::from_f64(-0.75)), Some(0));
    assert_eq!(ToPrimitive::to_u8(&f16::from_f64(-1.0)), None);
    assert_eq!(ToPrimitive::to_u8(&f16::from_f64(255.5)), Some(255));
    assert_eq!(ToPrimitive::to_u8(&f16::from_f64(256.0)), None);
    assert_eq!(ToPrimitive::to_i64(&bf16::MAX), None);
    assert_eq!(
        ToPrimitive::to_u128(&bf16::MAX),
        Some(bf16::MAX.to_f64() as u128)
    );
    assert_eq!(AsPrimitive::<i32>::as_(inf), i32::MAX);
    assert_eq!(AsPrimitive::<i32>::as_(f16::from_f64(f64::NAN)), 0);
    assert_eq!(AsPrimitive::<u8>::as_(f16::from_f64(-3.0)), 0);
}

// ---------------------------------------------------------------------------------------------
// FromPrimitive, NumCast and AsPrimitive into the types.

#[test]
fn from_primitive_rounds_once_from_the_exact_integer() {
    // 2^62 + 2^54 + 1 is just above the bf16 midpoint 2^62 (1 + 2^-8); through f64 it would
    // become that midpoint and round to even (down).
    let n: i64 = (1 << 62) + (1 << 54) + 1;
    let up = bf16::from_f64(2f64.powi(62) * (1.0 + 2f64.powi(-7)));
    assert!(same!(<bf16 as FromPrimitive>::from_i64(n).unwrap(), up));
    assert!(same!(
        <bf16 as FromPrimitive>::from_u64(n as u64).unwrap(),
        up
    ));
    assert!(same!(
        <bf16 as FromPrimitive>::from_i128(n as i128).unwrap(),
        up
    ));
    assert!(same!(<bf16 as NumCast>::from(n).unwrap(), up));
    assert!(same!(<bf16 as NumCast>::from(n as u128).unwrap(), up));
    let a: bf16 = n.as_();
    assert!(same!(a, up));
    let down = bf16::from_f64(2f64.powi(62));
    assert!(same!(
        <bf16 as FromPrimitive>::from_i64((1 << 62) + (1 << 54)).unwrap(),
        down
    ));
    assert!(same!(<bf16 as FromPrimitive>::from_i64(-n).unwrap(), -up));
    // Beyond 2^64 as well: 2^100 (1 + 2^-8) + 1 is just above a bf16 tie.
    let n: i128 = (1 << 100) + (1 << 92) + 1;
    let up = bf16::from_f64(2f64.powi(100) * (1.0 + 2f64.powi(-7)));
    assert!(same!(<bf16 as FromPrimitive>::from_i128(n).unwrap(), up));
    assert!(same!(
        <bf16 as FromPrimitive>::from_u128(n as u128).unwrap(),
        up
    ));
    assert!(same!(<bf16 as NumCast>::from(n).unwrap(), up));
    // u128::MAX is beyond bf16's range: infinity, which bf16 has.
    assert!(
        <bf16 as FromPrimitive>::from_u128(u128::MAX)
            .unwrap()
            .is_infinite()
    );
    // Small integers are exact.
    for i in -2048i64..=2048 {
        assert_eq!(
            <f16 as FromPrimitive>::from_i64(i).unwrap().to_f64(),
            i as f64
        );
        assert_eq!(<f16 as NumCast>::from(i as i32).unwrap().to_f64(), i as f64);
    }
}

#[test]
fn from_primitive_refuses_values_it_cannot_stand_for() {
    // Overflow to NaN in the formats without infinity.
    assert!(<f8e4m3fn as FromPrimitive>::from_f64(1e9).is_none());
    assert!(<f8e4m3fnuz as FromPrimitive>::from_i32(100_000).is_none());
    assert!(<f8e4m3fn as FromPrimitive>::from_f64(f64::INFINITY).is_none());
    assert!(
        <f8e4m3fn as FromPrimitive>::from_f64(f64::NAN)
            .unwrap()
            .is_nan()
    );
    // Rounding within range is fine, also up to the largest value.
    assert_eq!(
        <f8e4m3fn as FromPrimitive>::from_f64(450.0)
            .unwrap()
            .to_f64(),
        448.0
    );
    // E8M0 has no zero and no negative values.
    assert!(<f8e8m0fnu as FromPrimitive>::from_i32(0).is_none());
    assert!(<f8e8m0fnu as FromPrimitive>::from_f64(-2.0).is_none());
    assert_eq!(
        <f8e8m0fnu as FromPrimitive>::from_u8(8).unwrap().to_f64(),
        8.0
    );
    assert_eq!(
        <f8e8m0fnu as FromPrimitive>::from_f64(1e-50)
            .unwrap()
            .to_f64(),
        2f64.powi(-127)
    );
    // FP6/FP4 have neither NaN nor infinity: NaN and saturating overflow are refused.
    assert!(<f6e2m3fn as FromPrimitive>::from_f64(f64::NAN).is_none());
    assert!(<f6e2m3fn as FromPrimitive>::from_f64(100.0).is_none());
    assert!(<f6e2m3fn as FromPrimitive>::from_f64(7.75).is_none()); // the tie overflows
    assert_eq!(
        <f6e2m3fn as FromPrimitive>::from_f64(7.7).unwrap().to_f64(),
        7.5
    );
    assert!(<f4e2m1fn as FromPrimitive>::from_i8(7).is_none());
    assert_eq!(
        <f4e2m1fn as FromPrimitive>::from_i8(-6).unwrap().to_f64(),
        -6.0
    );
    assert_eq!(
        <f4e2m1fn as FromPrimitive>::from_f64(6.9).unwrap().to_f64(),
        6.0
    );
    // ... while AsPrimitive, like `as`, always gives the format's result.
    let s: f6e2m3fn = 100.0f64.as_();
    assert_eq!(s.to_f64(), 7.5);
    // NaN gives the zero of the opposite sign, as ml_dtypes does: -0 for f64::NAN.
    let z: f6e2m3fn = f64::NAN.as_();
    assert_eq!(z.to_bits(), 0x20);
    // Formats with infinity overflow to it, as f32 does.
    assert!(<f16 as FromPrimitive>::from_f64(1e9).unwrap().is_infinite());
    assert!(<f16 as FromPrimitive>::from_f64(f64::NAN).unwrap().is_nan());
}

#[test]
fn num_cast_between_types_and_from_floats() {
    let x = bf16::from_f64(1.5);
    assert_eq!(<f16 as NumCast>::from(x).unwrap().to_f64(), 1.5);
    assert_eq!(<f4e2m1fn as NumCast>::from(2.9f32).unwrap().to_f64(), 3.0);
    assert_eq!(<f16 as NumCast>::from(0.1f64).unwrap(), f16::from_f64(0.1));
    // A large float source is exact in f64 already, and so converts directly.
    assert!(<bf16 as NumCast>::from(1e30f64).unwrap() == bf16::from_f64(1e30));
    assert!(<f8e4m3fn as NumCast>::from(1e30f64).is_none());
    // AsPrimitive between the types rounds once.
    let y: f8e4m3fn = f16::from_f64(300.0).as_();
    assert_eq!(y.to_f64(), 288.0);
    for b in 0..=u16::MAX {
        let x = f16::from_bits(b);
        let y: bf16 = x.as_();
        assert!(same!(y, bf16::from_f64(x.to_f64())));
        let z: f8e5m2 = x.as_();
        assert!(same!(z, f8e5m2::from_f64(x.to_f64())));
    }
}

// ---------------------------------------------------------------------------------------------
// Num::from_str_radix.

#[test]
fn from_str_radix_ten_is_from_str() {
    for s in [
        "1",
        "-2.5",
        "0.1",
        "65504",
        "65520",
        "1e-8",
        "inf",
        "-nan",
        "1.00048828125000001",
    ] {
        let a = <f16 as Num>::from_str_radix(s, 10).unwrap();
        let b: f16 = s.parse().unwrap();
        assert!(same!(a, b), "{s}");
    }
    let e = <f16 as Num>::from_str_radix("", 10).unwrap_err();
    assert_eq!(e.kind(), ParseErrorKind::Empty);
    let e = <f16 as Num>::from_str_radix("x", 10).unwrap_err();
    assert_eq!(e.kind(), ParseErrorKind::Invalid);
}

#[test]
fn from_str_radix_rejects_other_radixes_and_bad_syntax() {
    for radix in [3, 5, 7, 9, 12, 36, 0, 1, 37, 64] {
        let e = <f16 as Num>::from_str_radix("1", radix).unwrap_err();
        assert_eq!(e.kind(), ParseErrorKind::Invalid, "radix {radix}");
    }
    assert_eq!(
        <f16 as Num>::from_str_radix("", 16).unwrap_err().kind(),
        ParseErrorKind::Empty
    );
    for s in [
        "-", ".", "1.2.3", "p3", "1p", "1p+", "12g", "1 ", " 1", "0x10", "1e3x",
    ] {
        let e = <f16 as Num>::from_str_radix(s, 16).unwrap_err();
        assert_eq!(e.kind(), ParseErrorKind::Invalid, "{s:?}");
    }
    // 'p' is a digit in radix 32, so there is no exponent there.
    assert_eq!(
        <f16 as Num>::from_str_radix("p", 32).unwrap().to_f64(),
        25.0
    );
    assert!(<f16 as Num>::from_str_radix("1.1", 2).is_ok());
    assert!(<f16 as Num>::from_str_radix("2", 2).is_err());
}

/// The digits of `v` (a non-negative integer times a power of the radix) in `radix`.
fn digits(mut int: u128, radix: u32) -> String {
    if int == 0 {
        return "0".into();
    }
    let mut s = Vec::new();
    while int > 0 {
        s.push(std::char::from_digit((int % radix as u128) as u32, radix).unwrap());
        int /= radix as u128;
    }
    s.iter().rev().collect()
}

/// `v` written exactly in a power-of-two radix: an integer part, a point and fraction digits.
fn write_exact(v: f64, radix: u32) -> String {
    let bits_per_digit = radix.trailing_zeros() as i32;
    let neg = v.is_sign_negative();
    let v = v.abs();
    // v = m * 2^-k with k a multiple of bits_per_digit, m an integer.
    let mut k = 0;
    while (v * 2f64.powi(k)).fract() != 0.0 {
        k += bits_per_digit;
    }
    let m = (v * 2f64.powi(k)) as u128;
    let frac_digits = (k / bits_per_digit) as usize;
    let mut s = digits(m, radix);
    if frac_digits > 0 {
        while s.len() <= frac_digits {
            s.insert(0, '0');
        }
        s.insert(s.len() - frac_digits, '.');
    }
    if neg { format!("-{s}") } else { s }
}

#[test]
fn from_str_radix_power_of_two_radixes_are_exact() {
    // Every finite f16 value written exactly in each radix parses back to itself.
    for radix in [2, 4, 8, 16, 32] {
        for b in 0..=u16::MAX {
            let x = f16::from_bits(b);
            if !x.is_finite() {
                continue;
            }
            let s = write_exact(x.to_f64(), radix);
            let y = <f16 as Num>::from_str_radix(&s, radix).unwrap();
            assert!(same!(x, y), "{s} (radix {radix})");
        }
    }
    // Hexadecimal with a binary exponent, and the special values.
    assert_eq!(
        <f16 as Num>::from_str_radix("1.8p3", 16).unwrap().to_f64(),
        12.0
    );
    assert_eq!(
        <f16 as Num>::from_str_radix("-1P-2", 16).unwrap().to_f64(),
        -0.25
    );
    assert_eq!(
        <f16 as Num>::from_str_radix("ff", 16).unwrap().to_f64(),
        255.0
    );
    assert_eq!(
        <f16 as Num>::from_str_radix("FF.8", 16).unwrap().to_f64(),
        255.5
    );
    assert_eq!(
        <bf16 as Num>::from_str_radix("1p127", 2).unwrap().to_f64(),
        2f64.powi(127)
    );
    assert!(
        <f16 as Num>::from_str_radix("1p99999999999999", 16)
            .unwrap()
            .is_infinite()
    );
    assert_eq!(
        <f16 as Num>::from_str_radix("1p-99999999999999", 16)
            .unwrap()
            .to_bits(),
        0
    );
    assert!(
        <f16 as Num>::from_str_radix("-0", 8)
            .unwrap()
            .is_sign_negative()
    );
    assert!(
        <f16 as Num>::from_str_radix("Infinity", 16)
            .unwrap()
            .is_infinite()
    );
    assert!(<f16 as Num>::from_str_radix("-inf", 2).unwrap() < f16::MIN);
    assert!(<f16 as Num>::from_str_radix("NaN", 4).unwrap().is_nan());
    assert_eq!(
        <f6e2m3fn as Num>::from_str_radix("nan", 2)
            .unwrap()
            .to_bits(),
        0x20,
        "the zero of the opposite sign, as from_f64(NAN) gives"
    );
    assert_eq!(
        <f6e2m3fn as Num>::from_str_radix("1000", 2)
            .unwrap()
            .to_f64(),
        7.5
    );
}

#[test]
fn from_str_radix_rounds_once_with_every_digit() {
    // The f16 tie between 1 and 1 + 2^-10 is 1 + 2^-11: to even (1); any later nonzero digit,
    // however far down, rounds up.
    let tie = format!("1.{}1", "0".repeat(10));
    assert_eq!(<f16 as Num>::from_str_radix(&tie, 2).unwrap().to_f64(), 1.0);
    for zeros in [60, 61, 62, 63, 64, 100, 1000] {
        let above = format!("{tie}{}1", "0".repeat(zeros));
        let v = <f16 as Num>::from_str_radix(&above, 2).unwrap();
        assert_eq!(v.to_f64(), 1.0 + 2f64.powi(-10), "{zeros}");
        let below = format!("0.{}", "1".repeat(11 + zeros));
        let v = <f16 as Num>::from_str_radix(&below, 2).unwrap();
        assert_eq!(v.to_f64(), 1.0, "0.111...1 with {} ones", 11 + zeros);
    }
    // Long integer parts: the position of every digit counts.
    let big = format!("1{}", "0".repeat(200));
    assert!(
        <bf16 as Num>::from_str_radix(&big, 2)
            .unwrap()
            .is_infinite()
    );
    let big = format!("1{}", "0".repeat(100));
    assert_eq!(
        <bf16 as Num>::from_str_radix(&big, 2).unwrap().to_f64(),
        2f64.powi(100)
    );
    let big = format!("{}1", "0".repeat(500));
    assert_eq!(
        <bf16 as Num>::from_str_radix(&big, 2).unwrap().to_f64(),
        1.0
    );
    // Random strings of up to 13 hex digits are exact in f64: compare with from_f64.
    let mut state = 0x9e37_79b9_7f4a_7c15u64;
    for _ in 0..200_000 {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        let m = state >> 12; // 52 bits
        let point = (state % 14) as usize;
        let mut s = format!("{m:x}");
        let frac_digits = if point < s.len() { point } else { 0 };
        if frac_digits > 0 {
            s.insert(s.len() - frac_digits, '.');
        }
        let e = ((state >> 3) % 40) as i32 - 20;
        let s = format!("{s}p{e}");
        let v = (m as f64) * 2f64.powi(e - 4 * frac_digits as i32);
        for (a, b) in [
            (
                <f16 as Num>::from_str_radix(&s, 16).unwrap().to_bits(),
                f16::from_f64(v).to_bits(),
            ),
            (
                <bf16 as Num>::from_str_radix(&s, 16).unwrap().to_bits(),
                bf16::from_f64(v).to_bits(),
            ),
        ] {
            assert_eq!(a, b, "{s}");
        }
        let c = <f8e4m3fn as Num>::from_str_radix(&s, 16).unwrap();
        assert!(same!(c, f8e4m3fn::from_f64(v)), "{s}");
    }
}

// ---------------------------------------------------------------------------------------------
// Which types have which traits (a compile-time matter; this documents it).

#[test]
fn trait_coverage() {
    fn float<T: Float + FloatCore + Signed + Num + NumCast + FloatConst>() {}
    float::<f16>();
    float::<bf16>();
    float::<f8e5m2>();
    float::<f8e4m3>();
    float::<f8e3m4>();
    fn num<T: Num + Signed + NumCast + Bounded + FloatConst + Zero + ConstZero>() {}
    num::<f8e4m3fn>();
    num::<f8e4m3fnuz>();
    num::<f8e5m2fnuz>();
    num::<f6e2m3fn>();
    num::<f6e3m2fn>();
    num::<f4e2m1fn>();
    fn scale<T: NumCast + Bounded + One + ConstOne + FloatConst + TotalOrder + MulAdd + Inv>() {}
    scale::<f8e8m0fnu>();
    assert_eq!(
        TotalOrder::total_cmp(&f8e8m0fnu::from_f64(2.0), &f8e8m0fnu::from_f64(4.0)),
        Ordering::Less
    );
}
