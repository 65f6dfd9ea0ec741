//! Conversions to and from integers, bool, f32/f64 (checked) and between formats.

use lowp::{LowpFloat, TryFromFloatErrorKind, bf16, f4e2m1fn, f8e4m3fn, f8e8m0fnu, f16};

/// Every u16 is exact in f64, so rounding it from f64 is an independent reference for the
/// integer path (which never goes through a float).
fn check_all_u16<T: LowpFloat>() {
    for v in 0..=u16::MAX {
        let via_int = T::from_f64(v as f64).to_bits_u32();
        let expected = T::from_f64(v as f64).to_bits_u32();
        assert_eq!(via_int, expected, "{} from {v}", T::FORMAT.name);
    }
}

#[test]
fn sixteen_bit_integers_round_like_their_f64_value() {
    for v in 0..=u16::MAX {
        assert_eq!(
            f16::from_int::<u16>(v).to_bits(),
            f16::from_f64(v as f64).to_bits(),
            "{v}"
        );
        assert_eq!(
            bf16::from_int::<u16>(v).to_bits(),
            bf16::from_f64(v as f64).to_bits(),
            "{v}"
        );
        assert_eq!(
            f8e4m3fn::from_int::<u16>(v).to_bits(),
            f8e4m3fn::from_f64(v as f64).to_bits()
        );
        let s = v as i16;
        assert_eq!(
            f16::from_int::<i16>(s).to_bits(),
            f16::from_f64(s as f64).to_bits(),
            "{s}"
        );
        assert_eq!(
            f8e8m0fnu::from_int::<i16>(s).to_bits(),
            f8e8m0fnu::from_f64(s as f64).to_bits()
        );
    }
    check_all_u16::<f4e2m1fn>();
}

#[test]
fn wide_integers_keep_the_bits_below_the_kept_ones() {
    // 2^100 + 2^92 is the midpoint between two bf16 values: ties to even goes down...
    let tie = (1u128 << 100) + (1u128 << 92);
    assert_eq!(bf16::from_int::<u128>(tie).to_f64(), 2f64.powi(100));
    // ...and one more unit, 92 bits below, must go up: a rounding that dropped the low bits
    // first (as `as f64` would) gets this wrong.
    assert_eq!(
        bf16::from_int::<u128>(tie + 1).to_f64(),
        2f64.powi(100) + 2f64.powi(93)
    );
    assert_eq!(
        bf16::from_int::<i128>(-(tie as i128) - 1).to_f64(),
        -(2f64.powi(100) + 2f64.powi(93))
    );
    // f16 from 2^64 + 1: beyond f16 range.
    assert!(f16::from_int::<u128>((1 << 64) + 1).is_infinite());
    assert_eq!(f16::from_int::<u128>(u128::MAX).infinite_sign(), 1);
    assert_eq!(f16::from_int::<i128>(i128::MIN).infinite_sign(), -1);
    // The largest u128 rounds to 2^128, just above bf16::MAX: infinity.
    assert!(bf16::from_int::<u128>(u128::MAX).is_infinite());
    assert_eq!(
        f8e8m0fnu::from_int::<u128>(1 << 127).to_f64(),
        2f64.powi(127)
    );
    // FP4 saturates.
    assert_eq!(f4e2m1fn::from_int::<i64>(-1_000_000), f4e2m1fn::MIN);
    // Zero: +0, or NaN where there is no zero.
    assert!(f16::from_int::<i32>(0).is_sign_positive());
    assert!(f8e8m0fnu::from_int::<u8>(0).is_nan());
    assert!(f8e8m0fnu::from_int::<i8>(-4).is_nan());
}

#[test]
fn float_to_integer_truncates_and_saturates_like_as() {
    assert_eq!(f16::from_f32(-2.75).to_int::<i32>(), -2);
    assert_eq!(f16::from_f32(300.0).to_int::<i8>(), 127);
    assert_eq!(f16::from_f32(-300.0).to_int::<u8>(), 0);
    assert_eq!(f16::from_f32(-300.0).to_int::<i8>(), -128);
    assert_eq!(f16::from_f32(f32::NAN).to_int::<i64>(), 0);
    assert_eq!(f16::from_f32(f32::INFINITY).to_int::<u16>(), u16::MAX);
    assert_eq!(f16::MAX.to_int::<u16>(), 65504);
    assert_eq!(bf16::MAX.to_int::<u128>(), bf16::MAX.to_f64() as u128);
    assert_eq!(bf16::MAX.to_int::<i128>(), i128::MAX);
    assert_eq!(f8e8m0fnu::MAX.to_int::<u128>(), 1 << 127);
    assert_eq!(f8e4m3fn::MAX.to_int::<isize>(), 448);
}

#[test]
fn checked_float_to_integer_names_the_reason() {
    assert_eq!(i32::try_from(f16::from_f32(-7.0)), Ok(-7));
    assert_eq!(u8::try_from(f16::from_f32(255.0)), Ok(255));
    let kind = |r: Result<i64, lowp::TryFromFloatError>| r.unwrap_err().kind();
    assert_eq!(
        kind(i64::try_from(f16::from_f32(0.5))),
        TryFromFloatErrorKind::Inexact
    );
    assert_eq!(kind(i64::try_from(f16::NAN)), TryFromFloatErrorKind::Nan);
    assert_eq!(
        kind(i64::try_from(f16::INFINITY)),
        TryFromFloatErrorKind::OutOfRange
    );
    assert_eq!(
        u8::try_from(f16::from_f32(256.0)).unwrap_err().kind(),
        TryFromFloatErrorKind::OutOfRange
    );
    assert_eq!(
        u8::try_from(f16::from_f32(-1.0)).unwrap_err().kind(),
        TryFromFloatErrorKind::OutOfRange
    );
    assert_eq!(i8::try_from(f16::from_f32(-128.0)), Ok(-128));
    assert!(i8::try_from(f16::from_f32(128.0)).is_err());
    // 2^127 is not an i128 (i128::MAX = 2^127 - 1) but is a u128.
    assert!(i128::try_from(f8e8m0fnu::MAX).is_err());
    assert_eq!(u128::try_from(f8e8m0fnu::MAX), Ok(1 << 127));
    assert_eq!(u64::try_from(f16::from_f32(-0.0)), Ok(0));
}

#[test]
fn checked_integer_to_float_accepts_exact_values_only() {
    assert_eq!(f16::try_from(2048i32).unwrap().to_f32(), 2048.0);
    assert_eq!(
        f16::try_from(2049i32).unwrap_err().kind(),
        TryFromFloatErrorKind::Inexact
    );
    assert_eq!(f16::try_from(65504u32).unwrap(), f16::MAX);
    assert_eq!(
        f16::try_from(65505u32).unwrap_err().kind(),
        TryFromFloatErrorKind::OutOfRange
    );
    assert_eq!(
        f16::try_from(1u128 << 100).unwrap_err().kind(),
        TryFromFloatErrorKind::OutOfRange
    );
    assert_eq!(
        bf16::try_from(u128::MAX).unwrap_err().kind(),
        TryFromFloatErrorKind::OutOfRange
    );
    assert_eq!(
        f4e2m1fn::try_from(7u8).unwrap_err().kind(),
        TryFromFloatErrorKind::OutOfRange
    );
    assert_eq!(f4e2m1fn::try_from(-6i8).unwrap(), f4e2m1fn::MIN);
    assert_eq!(
        f8e8m0fnu::try_from(0u8).unwrap_err().kind(),
        TryFromFloatErrorKind::OutOfRange
    );
    assert_eq!(
        f8e8m0fnu::try_from(-2i8).unwrap_err().kind(),
        TryFromFloatErrorKind::OutOfRange
    );
    assert_eq!(f8e8m0fnu::try_from(1u128 << 127).unwrap(), f8e8m0fnu::MAX);
    assert_eq!(f16::from(-128i8).to_f32(), -128.0);
    assert_eq!(bf16::from(255u8).to_f32(), 255.0);
    // Every i8 and u8 is exact in f16 and bf16 (the `From` impls promise it).
    for v in i8::MIN..=i8::MAX {
        assert_eq!(f16::from(v).to_f64(), v as f64);
        assert_eq!(bf16::from(v).to_f64(), v as f64);
    }
    for v in 0..=u8::MAX {
        assert_eq!(f16::from(v).to_f64(), v as f64);
        assert_eq!(bf16::from(v).to_f64(), v as f64);
    }
}

#[test]
fn checked_float_conversion_accepts_exact_values_only() {
    assert_eq!(f16::try_from(0.5f32).unwrap().to_f32(), 0.5);
    assert_eq!(
        f16::try_from(0.1f32).unwrap_err().kind(),
        TryFromFloatErrorKind::Inexact
    );
    assert_eq!(
        f16::try_from(1e6f64).unwrap_err().kind(),
        TryFromFloatErrorKind::OutOfRange
    );
    assert_eq!(
        f16::try_from(1e-10f64).unwrap_err().kind(),
        TryFromFloatErrorKind::Inexact
    );
    assert!(f16::try_from(f32::INFINITY).unwrap().is_infinite());
    assert!(f16::try_from(f64::NAN).unwrap().is_nan());
    assert_eq!(
        f8e4m3fn::try_from(f32::INFINITY).unwrap_err().kind(),
        TryFromFloatErrorKind::OutOfRange
    );
    assert_eq!(
        f4e2m1fn::try_from(f32::NAN).unwrap_err().kind(),
        TryFromFloatErrorKind::Nan
    );
    assert_eq!(
        f8e8m0fnu::try_from(0.0f32).unwrap_err().kind(),
        TryFromFloatErrorKind::OutOfRange
    );
    assert_eq!(
        f8e8m0fnu::try_from(1e-40f32).unwrap_err().kind(),
        TryFromFloatErrorKind::OutOfRange
    );
    assert_eq!(
        f8e8m0fnu::try_from(-1.0f64).unwrap_err().kind(),
        TryFromFloatErrorKind::OutOfRange
    );
    assert_eq!(f8e8m0fnu::try_from(0.25f64).unwrap().to_f32(), 0.25);
    assert!(
        lowp::f8e4m3fnuz::try_from(-0.0f32)
            .unwrap()
            .is_sign_positive()
    );
    assert!(f16::try_from(-0.0f32).unwrap().is_sign_negative());
    assert_eq!(f32::from(f16::MAX), 65504.0);
    assert_eq!(f64::from(f8e8m0fnu::MIN), 2f64.powi(-127));
}

#[test]
fn bool_conversions() {
    assert_eq!(f16::from(true), f16::ONE);
    assert!(f16::from(false) == f16::from_f32(0.0) && f16::from(false).is_sign_positive());
    assert!(!bool::from(f16::from_f32(-0.0)));
    assert!(bool::from(f16::NAN));
    assert!(bool::from(f4e2m1fn::MIN_POSITIVE_SUBNORMAL));
    assert_eq!(f8e8m0fnu::try_from(true).unwrap(), f8e8m0fnu::ONE);
    assert!(f8e8m0fnu::try_from(false).is_err());
    assert!(f8e8m0fnu::from_bool(false).is_nan());
    assert!(f8e8m0fnu::MIN.to_bool());
}

#[test]
fn lossless_format_conversions_keep_every_value() {
    for bits in 0..=u8::MAX {
        let x = f8e4m3fn::from_bits(bits);
        let y: f16 = x.into();
        assert!(
            x.is_nan() && y.is_nan() || x.to_f64() == y.to_f64(),
            "{bits:#x}"
        );
        assert_eq!(x.is_sign_negative(), y.is_sign_negative());
    }
    let x: bf16 = f8e8m0fnu::MIN.into();
    assert_eq!(x.to_f64(), 2f64.powi(-127));
    let y: f6e2m3fn_alias = f4e2m1fn::MAX.into();
    assert_eq!(y.to_f32(), 6.0);
}

#[allow(non_camel_case_types)]
type f6e2m3fn_alias = lowp::f6e2m3fn;

#[test]
fn convert_goes_between_any_two_formats_with_one_rounding() {
    // 300 in f16 is exact; in E4M3 it lies between 288 and 320, nearer 288.
    assert_eq!(f16::from_f32(300.0).convert::<f8e4m3fn>().to_f32(), 288.0);
    // 304 is the midpoint: ties to even gives 320 (mantissa 0b010 even? 288 = 1.001b*2^8 is odd).
    assert_eq!(f16::from_f32(304.0).convert::<f8e4m3fn>().to_f32(), 320.0);
    assert_eq!(bf16::MAX.convert::<f16>().infinite_sign(), 1);
    assert_eq!(bf16::MAX.convert_saturating::<f16>(), f16::MAX);
    assert!(f16::NAN.convert::<f8e8m0fnu>().is_nan());
    assert_eq!(
        f16::from_f32(0.3)
            .convert_round::<f4e2m1fn>(lowp::Rounding::TowardPositive)
            .to_f32(),
        0.5
    );
}
