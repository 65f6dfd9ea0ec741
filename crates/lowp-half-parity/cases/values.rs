use subject::{bf16, f16};

#[test]
fn bits_bytes_and_const_conversions() {
    let one = f16::from_bits(0x3c00);
    assert_eq!(one.to_bits(), 0x3c00);
    assert_eq!(one.to_le_bytes(), [0x00, 0x3c]);
    assert_eq!(one.to_be_bytes(), [0x3c, 0x00]);
    assert_eq!(one.to_ne_bytes(), 0x3c00u16.to_ne_bytes());
    assert_eq!(f16::from_le_bytes([0x00, 0x3c]), one);
    assert_eq!(f16::from_be_bytes([0x3c, 0x00]), one);
    assert_eq!(f16::from_ne_bytes(0x3c00u16.to_ne_bytes()), one);
    assert_eq!(bf16::from_be_bytes([0x3f, 0x80]).to_f32(), 1.0);

    const HALF: f16 = f16::from_f32_const(0.5);
    const THIRD: bf16 = bf16::from_f64_const(1.0 / 3.0);
    assert_eq!(HALF.to_bits(), 0x3800);
    assert_eq!(THIRD.to_bits(), 0x3eab);
    const BACK: f32 = HALF.to_f32_const();
    const BACK64: f64 = THIRD.to_f64_const();
    assert_eq!(BACK, 0.5);
    assert_eq!(BACK64, 0.333984375);
}

#[test]
fn rounding_from_f32_and_f64() {
    assert_eq!(f16::from_f32(0.1).to_bits(), 0x2e66);
    assert_eq!(bf16::from_f32(0.1).to_bits(), 0x3dcd);
    assert_eq!(f16::from_f32(65520.0), f16::INFINITY); // the tie above MAX overflows
    assert_eq!(f16::from_f32(65519.0), f16::MAX);
    assert_eq!(f16::from_f32(1e-8), f16::ZERO);
    assert_eq!(f16::from_f32(-1e-8).to_bits(), 0x8000);
    assert_eq!(f16::from_f32(2f32.powi(-24)), f16::MIN_POSITIVE_SUBNORMAL);
    assert!(f16::from_f32(f32::NAN).is_nan());
    assert_eq!(bf16::from_f32(f32::MAX), bf16::INFINITY);
    assert_eq!(bf16::from_f64(1e300), bf16::INFINITY);
    assert_eq!(f16::from_f64(2.0).to_f64(), 2.0);

    // Just above the tie between 1 and the next f16: rounded once it goes up; rounded to f32
    // first (half) the part above the tie is lost and the tie goes to even, 1.
    let above_tie = 1.0 + 2f64.powi(-11) + 2f64.powi(-40);
    assert_eq!(f16::from_f64(above_tie).to_bits(), differs(0x3c00, 0x3c01));
    let above_tie = 1.0 + 2f64.powi(-8) + 2f64.powi(-40);
    assert_eq!(bf16::from_f64(above_tie).to_bits(), differs(0x3f80, 0x3f81));
}

#[test]
fn nan_payloads() {
    // f16 keeps a NaN's top payload bits and quiets it, in both crates (as F16C does).
    let x = f32::from_bits(0x7f81_2345);
    assert_eq!(f16::from_f32(x).to_bits(), 0x7e09);
    assert_eq!(f16::from_bits(0x7d00).to_f32().to_bits(), 0x7fe0_0000);
    // bf16: half keeps the top payload bits; lowp gives the canonical quiet NaN of the sign, as
    // ml_dtypes and TensorFlow do, so that files lowp writes agree with theirs byte for byte.
    assert_eq!(bf16::from_f32(x).to_bits(), differs(0x7fc1, 0x7fc0));
    assert_eq!(bf16::from_f32(-x).to_bits(), differs(0xffc1, 0xffc0));
    // Widening a signalling bf16 NaN: half quiets it; lowp shifts, keeping every bit, as
    // ml_dtypes and PyTorch widen. A quiet NaN widens alike.
    assert_eq!(
        bf16::from_bits(0x7f81).to_f32().to_bits(),
        differs(0x7fc1_0000, 0x7f81_0000)
    );
    assert_eq!(bf16::from_bits(0x7fc1).to_f32().to_bits(), 0x7fc1_0000);
}

#[test]
fn widening_is_exact() {
    assert_eq!(f16::MAX.to_f32(), 65504.0);
    assert_eq!(f16::MIN_POSITIVE_SUBNORMAL.to_f64(), 2f64.powi(-24));
    assert_eq!(bf16::MAX.to_f64(), 3.3895313892515355e38);
    assert_eq!(f32::from(f16::from_f32(1.5)), 1.5);
    assert_eq!(f64::from(bf16::from_f32(-2.5)), -2.5);
    assert_eq!(f16::from(-7i8).to_f32(), -7.0);
    assert_eq!(f16::from(200u8).to_f32(), 200.0);
    assert_eq!(bf16::from(-128i8).to_f32(), -128.0);
    assert_eq!(bf16::from(255u8).to_f32(), 255.0);
}

#[test]
fn constants() {
    assert_eq!(
        [
            f16::ZERO,
            f16::NEG_ZERO,
            f16::ONE,
            f16::NEG_ONE,
            f16::INFINITY,
            f16::NEG_INFINITY
        ]
        .map(f16::to_bits),
        [0x0000, 0x8000, 0x3c00, 0xbc00, 0x7c00, 0xfc00]
    );
    assert_eq!(
        [
            f16::MAX,
            f16::MIN,
            f16::MIN_POSITIVE,
            f16::MIN_POSITIVE_SUBNORMAL,
            f16::MAX_SUBNORMAL
        ]
        .map(f16::to_bits),
        [0x7bff, 0xfbff, 0x0400, 0x0001, 0x03ff]
    );
    assert_eq!(
        [
            bf16::MAX,
            bf16::MIN,
            bf16::MIN_POSITIVE,
            bf16::MIN_POSITIVE_SUBNORMAL,
            bf16::MAX_SUBNORMAL
        ]
        .map(bf16::to_bits),
        [0x7f7f, 0xff7f, 0x0080, 0x0001, 0x007f]
    );
    assert_eq!(f16::EPSILON.to_f32(), 2f32.powi(-10));
    assert_eq!(bf16::EPSILON.to_f32(), 2f32.powi(-7));
    assert!(f16::NAN.is_nan() && bf16::NAN.is_nan());
    assert_eq!((f16::RADIX, f16::MANTISSA_DIGITS, f16::DIGITS), (2, 11, 3));
    assert_eq!(
        (f16::MIN_EXP, f16::MAX_EXP, f16::MIN_10_EXP, f16::MAX_10_EXP),
        (-13, 16, -4, 4)
    );
    assert_eq!(
        (bf16::RADIX, bf16::MANTISSA_DIGITS, bf16::DIGITS),
        (2, 8, 2)
    );
    assert_eq!(
        (
            bf16::MIN_EXP,
            bf16::MAX_EXP,
            bf16::MIN_10_EXP,
            bf16::MAX_10_EXP
        ),
        (-125, 128, -37, 38)
    );
}

#[test]
fn mathematical_constants_are_the_rounded_values() {
    use core::f64::consts as c;
    let f16_pairs = [
        (f16::E, c::E),
        (f16::PI, c::PI),
        (f16::FRAC_1_PI, c::FRAC_1_PI),
        (f16::FRAC_1_SQRT_2, c::FRAC_1_SQRT_2),
        (f16::FRAC_2_PI, c::FRAC_2_PI),
        (f16::FRAC_2_SQRT_PI, c::FRAC_2_SQRT_PI),
        (f16::FRAC_PI_2, c::FRAC_PI_2),
        (f16::FRAC_PI_3, c::FRAC_PI_3),
        (f16::FRAC_PI_4, c::FRAC_PI_4),
        (f16::FRAC_PI_6, c::FRAC_PI_6),
        (f16::FRAC_PI_8, c::FRAC_PI_8),
        (f16::LN_10, c::LN_10),
        (f16::LN_2, c::LN_2),
        (f16::LOG10_E, c::LOG10_E),
        (f16::LOG10_2, c::LOG10_2),
        (f16::LOG2_E, c::LOG2_E),
        (f16::LOG2_10, c::LOG2_10),
        (f16::SQRT_2, c::SQRT_2),
    ];
    for (k, (constant, exact)) in f16_pairs.into_iter().enumerate() {
        assert_eq!(
            constant.to_bits(),
            f16::from_f64(exact).to_bits(),
            "f16 constant {k}"
        );
    }
    let bf16_pairs = [
        (bf16::E, c::E),
        (bf16::PI, c::PI),
        (bf16::FRAC_1_PI, c::FRAC_1_PI),
        (bf16::FRAC_1_SQRT_2, c::FRAC_1_SQRT_2),
        (bf16::FRAC_2_PI, c::FRAC_2_PI),
        (bf16::FRAC_2_SQRT_PI, c::FRAC_2_SQRT_PI),
        (bf16::FRAC_PI_2, c::FRAC_PI_2),
        (bf16::FRAC_PI_3, c::FRAC_PI_3),
        (bf16::FRAC_PI_4, c::FRAC_PI_4),
        (bf16::FRAC_PI_6, c::FRAC_PI_6),
        (bf16::FRAC_PI_8, c::FRAC_PI_8),
        (bf16::LN_10, c::LN_10),
        (bf16::LN_2, c::LN_2),
        (bf16::LOG10_E, c::LOG10_E),
        (bf16::LOG10_2, c::LOG10_2),
        (bf16::LOG2_E, c::LOG2_E),
        (bf16::LOG2_10, c::LOG2_10),
        (bf16::SQRT_2, c::SQRT_2),
    ];
    for (k, (constant, exact)) in bf16_pairs.into_iter().enumerate() {
        assert_eq!(
            constant.to_bits(),
            bf16::from_f64(exact).to_bits(),
            "bf16 constant {k}"
        );
    }
}

#[test]
fn classification() {
    use core::num::FpCategory;
    let sub = f16::from_bits(0x0200);
    assert_eq!(
        [f16::ZERO, sub, f16::ONE, f16::INFINITY, f16::NAN].map(f16::classify),
        [
            FpCategory::Zero,
            FpCategory::Subnormal,
            FpCategory::Normal,
            FpCategory::Infinite,
            FpCategory::Nan
        ]
    );
    assert!(f16::ONE.is_normal() && !sub.is_normal() && !f16::ZERO.is_normal());
    assert!(f16::MAX.is_finite() && !f16::INFINITY.is_finite() && !f16::NAN.is_finite());
    assert!(bf16::NEG_INFINITY.is_infinite() && !bf16::NAN.is_infinite());
    assert!(f16::NEG_ZERO.is_sign_negative() && f16::ZERO.is_sign_positive());
    assert!(bf16::from_bits(0xffc0).is_sign_negative());
    assert_eq!(f16::from_f32(-3.0).signum(), f16::NEG_ONE);
    assert_eq!(f16::from_f32(0.25).signum(), f16::ONE);
    assert!(f16::NAN.signum().is_nan());
    assert_eq!(f16::from_f32(2.0).copysign(f16::NEG_ZERO).to_f32(), -2.0);
    assert_eq!(bf16::from_f32(-2.0).copysign(bf16::ONE).to_f32(), 2.0);
}

#[test]
fn comparison_and_ordering() {
    use core::cmp::Ordering;
    let (one, two) = (f16::ONE, f16::from_f32(2.0));
    assert!(one < two);
    assert!(two > one);
    assert!(one <= two);
    assert!(two >= one);
    assert!(f16::NAN != f16::NAN);
    assert_eq!(f16::ZERO, f16::NEG_ZERO);
    assert_eq!(f16::NAN.partial_cmp(&one), None);
    assert!(!(f16::NAN < one) && !(f16::NAN > one));
    assert_eq!(one.max(two), two);
    assert_eq!(one.min(two), one);
    assert_eq!(f16::NAN.max(two), two);
    assert_eq!(two.min(f16::NAN), two);
    assert_eq!(f16::from_f32(5.0).clamp(one, two), two);
    assert_eq!(f16::from_f32(-5.0).clamp(one, two), one);
    assert_eq!(f16::NEG_ZERO.total_cmp(&f16::ZERO), Ordering::Less);
    assert_eq!(f16::NAN.total_cmp(&f16::INFINITY), Ordering::Greater);
    let mut v = [
        bf16::NAN,
        bf16::ONE,
        bf16::NEG_INFINITY,
        bf16::NEG_ZERO,
        bf16::ZERO,
    ];
    v.sort_by(|a, b| a.total_cmp(b));
    assert_eq!(
        v.map(bf16::to_bits),
        [0xff80, 0x8000, 0x0000, 0x3f80, 0x7fc0]
    );
}

#[test]
fn arithmetic_by_value_by_reference_and_in_place() {
    let (a, b) = (f16::from_f32(1.5), f16::from_f32(0.25));
    assert_eq!((a + b).to_f32(), 1.75);
    assert_eq!((a - b).to_f32(), 1.25);
    assert_eq!((a * b).to_f32(), 0.375);
    assert_eq!((a / b).to_f32(), 6.0);
    assert_eq!((a % b).to_f32(), 0.0);
    assert_eq!((-a).to_f32(), -1.5);
    assert_eq!((&a + &b).to_f32(), 1.75);
    assert_eq!((a + &b).to_f32(), 1.75);
    assert_eq!((&a - b).to_f32(), 1.25);
    assert_eq!((&a * &b).to_f32(), 0.375);
    assert_eq!((&a / b).to_f32(), 6.0);
    assert_eq!((&a % &b).to_f32(), 0.0);
    assert_eq!((-&a).to_f32(), -1.5);
    let mut c = a;
    c += b;
    c -= &b;
    c *= b;
    c /= &b;
    c %= f16::ONE;
    assert_eq!(c.to_f32(), 0.5);
    // Sums and products of iterators, by value and by reference.
    let v = [
        bf16::from_f32(1.0),
        bf16::from_f32(2.0),
        bf16::from_f32(4.0),
    ];
    assert_eq!(v.iter().sum::<bf16>().to_f32(), 7.0);
    assert_eq!(v.into_iter().sum::<bf16>().to_f32(), 7.0);
    assert_eq!(v.iter().product::<bf16>().to_f32(), 8.0);
    assert_eq!(v.into_iter().product::<bf16>().to_f32(), 8.0);
    // Overflow and invalid operations.
    assert_eq!(f16::MAX + f16::MAX, f16::INFINITY);
    assert!((f16::INFINITY - f16::INFINITY).is_nan());
    assert!((bf16::ZERO / bf16::ZERO).is_nan());
}

#[test]
fn default_hash_free_and_copy() {
    let x: f16 = Default::default();
    assert_eq!(x.to_bits(), 0);
    let y: bf16 = bf16::default();
    let z = y;
    assert_eq!(y.to_bits(), z.to_bits());
}
