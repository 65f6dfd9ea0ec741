//! The constants of every type against the seeds' tables, the `half` crate and ml_dtypes'
//! `finfo`; and every bit pattern of every format widened to f32/f64 and back.

// Bit literals are grouped sign_exponent_mantissa, as the seed's tables write them.
#![allow(clippy::unusual_byte_groupings)]

use lowp::format::{NanEncoding, formats};
use lowp::{
    LowpFloat, bf16, f4e2m1fn, f6e2m3fn, f6e3m2fn, f8e3m4, f8e4m3, f8e4m3fn, f8e4m3fnuz, f8e5m2,
    f8e5m2fnuz, f8e8m0fnu, f16,
};

/// The seed's tables 1-1 and 1-2 print these to 8 significant figures or fewer.
#[test]
fn seed_tables_1_1_and_1_2() {
    assert_eq!(format!("{:.8}", f16::EPSILON.to_f64()), "0.00097656");
    assert_eq!(format!("{:.8}", bf16::EPSILON.to_f64()), "0.00781250");
    assert_eq!(
        format!("{:.2e}", f16::MIN_POSITIVE_SUBNORMAL.to_f64()),
        "5.96e-8"
    );
    assert_eq!(f16::MAX.to_f64(), 65504.0);
    assert_eq!(
        format!("{:.1e}", bf16::MIN_POSITIVE_SUBNORMAL.to_f64()),
        "9.2e-41"
    );
    assert_eq!(format!("{:.2e}", bf16::MAX.to_f64()), "3.39e38");
}

/// Tables 1-4 and 1-5: the special bit patterns. (Table 1-4 writes the largest f16 as
/// `0 11110 0000000000`, which is 32768; the pattern of 65504 is `0 11110 1111111111`.)
#[test]
fn seed_tables_1_4_and_1_5() {
    assert_eq!(f16::from_bits(0b0_00000_0000000000).to_f64(), 0.0);
    assert!(f16::from_bits(0b1_00000_0000000000).is_sign_negative());
    assert_eq!(f16::from_bits(0b0_11111_0000000000).infinite_sign(), 1);
    assert_eq!(f16::from_bits(0b1_11111_0000000000).infinite_sign(), -1);
    for m in 1..1 << 10 {
        assert!(f16::from_bits(0b0_11111 << 10 | m).is_nan());
        assert!(f16::from_bits(0b1_11111 << 10 | m).is_nan());
    }
    assert_eq!(
        format!("{:.15}", f16::from_bits(1).to_f64()),
        "0.000000059604645"
    );
    assert_eq!(f16::MIN_POSITIVE_SUBNORMAL.to_bits(), 1);
    assert_eq!(f16::MAX.to_bits(), 0b0_11110_1111111111);
    assert_eq!(f16::from_bits(0b0_11110_0000000000).to_f64(), 32768.0);
    assert_eq!(bf16::MAX.to_bits(), 0b0_11111110_1111111);
    assert_eq!(format!("{:.8e}", bf16::MAX.to_f64()), "3.38953139e38");
    assert_eq!(bf16::MIN_POSITIVE_SUBNORMAL.to_bits(), 0b0_00000000_0000001);
    for m in 1..1 << 7 {
        assert!(bf16::from_bits(0b0_11111111 << 7 | m).is_nan());
    }
    // "FP16 carries three significant decimal digits, BF16 two."
    assert_eq!((f16::DIGITS, bf16::DIGITS), (3, 2));
}

macro_rules! same_as_half {
    ($ours:ty, $theirs:ty: $($c:ident),*) => {$(
        assert_eq!(<$ours>::$c.to_bits(), <$theirs>::$c.to_bits(), stringify!($c));
    )*};
}

macro_rules! same_integers_as_half {
    ($ours:ty, $theirs:ty: $($c:ident),*) => {$(
        assert_eq!(<$ours>::$c, <$theirs>::$c, stringify!($c));
    )*};
}

#[test]
fn constants_agree_with_the_half_crate() {
    same_as_half!(f16, half::f16: EPSILON, MIN_POSITIVE, MIN_POSITIVE_SUBNORMAL, MAX, MIN, ONE,
        NEG_ONE, ZERO, NEG_ZERO, INFINITY, NEG_INFINITY, NAN);
    same_as_half!(bf16, half::bf16: EPSILON, MIN_POSITIVE, MIN_POSITIVE_SUBNORMAL, MAX, MIN, ONE,
        NEG_ONE, ZERO, NEG_ZERO, INFINITY, NEG_INFINITY, NAN);
    same_integers_as_half!(f16, half::f16: RADIX, MANTISSA_DIGITS, DIGITS, MIN_EXP, MAX_EXP,
        MIN_10_EXP, MAX_10_EXP);
    same_integers_as_half!(bf16, half::bf16: RADIX, MANTISSA_DIGITS, DIGITS, MIN_EXP, MAX_EXP,
        MIN_10_EXP, MAX_10_EXP);
}

/// Rust's definitions of the integer constants, recomputed in f64 for every format.
fn rust_conventions<T: LowpFloat>(
    max: T,
    min_positive: T,
    digits: u32,
    min_exp: i32,
    max_exp: i32,
    min_10: i32,
    max_10: i32,
) {
    let name = T::FORMAT.name;
    let p = T::FORMAT.precision();
    assert_eq!(
        digits,
        ((p - 1) as f64 * 2f64.log10()).floor() as u32,
        "{name} DIGITS"
    );
    assert_eq!(
        2f64.powi(min_exp - 1),
        min_positive.to_f64(),
        "{name} MIN_EXP"
    );
    assert!(
        2f64.powi(max_exp - 1) <= max.to_f64() && max.to_f64() < 2f64.powi(max_exp),
        "{name}"
    );
    assert_eq!(
        min_10,
        min_positive.to_f64().log10().ceil() as i32,
        "{name} MIN_10_EXP"
    );
    assert_eq!(
        max_10,
        max.to_f64().log10().floor() as i32,
        "{name} MAX_10_EXP"
    );
}

macro_rules! conventions {
    ($($t:ty),*) => {$(
        rust_conventions(<$t>::MAX, <$t>::MIN_POSITIVE, <$t>::DIGITS, <$t>::MIN_EXP,
            <$t>::MAX_EXP, <$t>::MIN_10_EXP, <$t>::MAX_10_EXP);
        assert_eq!(<$t>::MANTISSA_DIGITS, <$t>::FORMAT.mantissa_bits + 1);
        assert_eq!(<$t>::RADIX, 2);
    )*};
}

#[test]
fn integer_constants_follow_rusts_definitions() {
    conventions!(
        f16, bf16, f8e4m3fn, f8e5m2, f8e4m3fnuz, f8e5m2fnuz, f8e4m3, f8e3m4, f8e8m0fnu, f6e2m3fn,
        f6e3m2fn, f4e2m1fn
    );
}

/// `ml_dtypes.finfo` of each format (0.6.0): max, smallest normal, smallest subnormal, eps.
#[test]
fn constants_agree_with_ml_dtypes_finfo() {
    macro_rules! finfo {
        ($($t:ty: $max:expr, $normal:expr, $sub:expr, $eps:expr);* $(;)?) => {$(
            let name = <$t>::FORMAT.name;
            assert_eq!(<$t>::MAX.to_f64(), $max, "{name} max");
            assert_eq!(<$t>::MIN_POSITIVE.to_f64(), $normal, "{name} smallest_normal");
            assert_eq!(<$t>::MIN_POSITIVE_SUBNORMAL.to_f64(), $sub, "{name} smallest_subnormal");
            assert_eq!(<$t>::EPSILON.to_f64(), $eps, "{name} eps");
        )*};
    }
    let p = |e: i32| 2f64.powi(e);
    finfo! {
        f8e4m3fn: 448.0, p(-6), p(-9), 0.125;
        f8e5m2: 57344.0, p(-14), p(-16), 0.25;
        f8e4m3fnuz: 240.0, p(-7), p(-10), 0.125;
        f8e5m2fnuz: 57344.0, p(-15), p(-17), 0.25;
        f8e4m3: 240.0, p(-6), p(-9), 0.125;
        f8e3m4: 15.5, 0.25, p(-6), 0.0625;
        f8e8m0fnu: p(127), p(-127), p(-127), 1.0;
        f6e2m3fn: 7.5, 1.0, 0.125, 0.125;
        f6e3m2fn: 28.0, 0.25, 0.0625, 0.25;
        f4e2m1fn: 6.0, 1.0, 0.5, 0.5;
    }
    assert_eq!(f8e8m0fnu::MIN.to_f64(), p(-127));
    assert_eq!(f8e4m3fn::MIN.to_f64(), -448.0);
}

/// The types with INFINITY, NAN, ZERO, NEG_ZERO and NEG_ONE are exactly those whose format has
/// them (the lists in types.rs are typed by hand; this keeps them honest).
#[test]
fn optional_constants_match_the_format_descriptions() {
    let with_infinity = ["f16", "bf16", "f8e5m2", "f8e4m3", "f8e3m4"];
    let without_nan = ["f6e2m3fn", "f6e3m2fn", "f4e2m1fn"];
    let without_negative_zero = ["f8e4m3fnuz", "f8e5m2fnuz", "f8e8m0fnu"];
    for f in formats::ALL {
        assert_eq!(
            f.has_infinity(),
            with_infinity.contains(&f.name),
            "{}",
            f.name
        );
        assert_eq!(f.has_nan(), !without_nan.contains(&f.name), "{}", f.name);
        assert_eq!(f.has_zero(), f.name != "f8e8m0fnu", "{}", f.name);
        assert_eq!(
            f.has_negative_zero(),
            !without_negative_zero.contains(&f.name),
            "{}",
            f.name
        );
        assert_eq!(f.signed, f.name != "f8e8m0fnu", "{}", f.name);
    }
    assert!(f16::INFINITY.is_infinite() && f8e3m4::NEG_INFINITY.infinite_sign() == -1);
    assert!(f8e4m3fnuz::NAN.is_nan() && f8e8m0fnu::NAN.is_nan() && f8e4m3fn::NAN.is_nan());
    assert!(f6e2m3fn::NEG_ZERO.is_sign_negative() && f6e2m3fn::NEG_ZERO.to_f64() == 0.0);
    assert_eq!(f8e5m2fnuz::NEG_ONE.to_f64(), -1.0);
    assert_eq!(formats::F8E4M3FNUZ.nan, NanEncoding::NegativeZero);
}

#[test]
fn formats_are_found_by_their_names() {
    use lowp::format::format_by_name;
    for f in formats::ALL {
        assert_eq!(format_by_name(f.name), Some(&f));
        assert_eq!(format_by_name(&f.name.to_uppercase()), Some(&f));
    }
    assert_eq!(
        format_by_name("float8_e4m3fn").map(|f| f.name),
        Some("f8e4m3fn")
    );
    assert_eq!(
        format_by_name("float8_e4m3").map(|f| f.name),
        Some("f8e4m3")
    );
    assert_eq!(
        format_by_name("float8_e8m0fnu").map(|f| f.name),
        Some("f8e8m0fnu")
    );
    assert_eq!(
        format_by_name("float4_e2m1fn").map(|f| f.name),
        Some("f4e2m1fn")
    );
    assert_eq!(format_by_name("bfloat16").map(|f| f.name), Some("bf16"));
    assert_eq!(format_by_name("float16").map(|f| f.name), Some("f16"));
    assert_eq!(format_by_name("half").map(|f| f.name), Some("f16"));
    for bad in [
        "", "f", "f32", "float32", "f8", "e4m3", "f16x", "ff16", "bf16_e",
    ] {
        assert_eq!(format_by_name(bad), None, "{bad}");
    }
}

/// Every pattern widens exactly and consistently (table, F16C or shift against the software
/// engine, f32 against f64), and comes back unchanged.
fn widening<T: LowpFloat>() {
    let fmt = T::FORMAT;
    for bits in 0..1u32 << fmt.total_bits() {
        let x = T::from_bits_u32(bits);
        let wide = x.to_f32();
        let double = x.to_f64();
        assert_eq!(
            (wide as f64).to_bits(),
            double.to_bits(),
            "{} {bits:#x}",
            fmt.name
        );
        let back = T::from_f32(wide).to_bits_u32();
        let back64 = T::from_f64(double).to_bits_u32();
        if fmt.is_nan_bits(bits) {
            assert!(wide.is_nan() && double.is_nan());
            assert!(
                fmt.is_nan_bits(back) && fmt.is_nan_bits(back64),
                "{} {bits:#x}",
                fmt.name
            );
            if matches!(fmt.nan, NanEncoding::Ieee) {
                // f16 NaNs come back quiet with their sign and payload; bf16 and FP8 ones as
                // the canonical NaN of their sign, as ml_dtypes converts them.
                let quiet = 1 << (fmt.mantissa_bits - 1);
                let want = if fmt.name == "f16" {
                    bits | quiet
                } else {
                    bits & fmt.sign_mask() | fmt.nan_bits().unwrap()
                };
                assert_eq!(back, want, "{} {bits:#x}", fmt.name);
                assert_eq!(back64, want, "{} {bits:#x}", fmt.name);
            }
            // Every NaN widens with its sign bit (FNUZ's one NaN is negative).
            assert_eq!(
                wide.is_sign_negative(),
                bits & fmt.sign_mask() != 0,
                "{} {bits:#x}",
                fmt.name
            );
        } else {
            assert_eq!(back, bits, "{} {bits:#x}", fmt.name);
            assert_eq!(back64, bits, "{} {bits:#x}", fmt.name);
            assert_eq!(wide.is_sign_negative(), bits & fmt.sign_mask() != 0);
        }
    }
}

macro_rules! software_matches_runtime {
    ($($t:ty),*) => {$(
        for bits in 0..1u32 << <$t>::FORMAT.total_bits() {
            let x = <$t as LowpFloat>::from_bits_u32(bits);
            assert_eq!(x.to_f32().to_bits(), x.to_f32_const().to_bits(), "{bits:#x}");
            assert_eq!(x.to_f64().to_bits(), x.to_f64_const().to_bits(), "{bits:#x}");
        }
    )*};
}

#[test]
fn every_pattern_widens_exactly_and_comes_back() {
    widening::<f16>();
    widening::<bf16>();
    widening::<f8e4m3fn>();
    widening::<f8e5m2>();
    widening::<f8e4m3fnuz>();
    widening::<f8e5m2fnuz>();
    widening::<f8e4m3>();
    widening::<f8e3m4>();
    widening::<f8e8m0fnu>();
    widening::<f6e2m3fn>();
    widening::<f6e3m2fn>();
    widening::<f4e2m1fn>();
    // F16C (where the CPU has it), shifts and tables against the engine, NaN bits included.
    software_matches_runtime!(
        f16, bf16, f8e4m3fn, f8e5m2, f8e4m3fnuz, f8e5m2fnuz, f8e4m3, f8e3m4, f8e8m0fnu, f6e2m3fn,
        f6e3m2fn, f4e2m1fn
    );
}

#[test]
fn bytes_in_every_order() {
    let x = f16::from_f32(1.5);
    assert_eq!(x.to_le_bytes(), [0x00, 0x3e]);
    assert_eq!(x.to_be_bytes(), [0x3e, 0x00]);
    assert_eq!(f16::from_le_bytes([0x00, 0x3e]).to_bits(), 0x3e00);
    assert_eq!(f16::from_be_bytes([0x3e, 0x00]).to_bits(), 0x3e00);
    assert_eq!(f16::from_ne_bytes(x.to_ne_bytes()).to_bits(), 0x3e00);
    assert_eq!(f8e4m3fn::from_be_bytes([0x7e]).to_f32(), 448.0);
    // FP4 keeps only its four bits.
    assert_eq!(f4e2m1fn::from_le_bytes([0xf7]).to_bits(), 0x7);
    assert_eq!(f4e2m1fn::from_bits(0xff).to_bits(), 0xf);
    assert_eq!(f6e3m2fn::from_bits(0xc1).to_bits(), 0x01);
}

#[test]
fn const_conversions_work_in_constants() {
    const HALF: f16 = f16::from_f32_const(0.5);
    const THIRD: bf16 = bf16::from_f64_const(1.0 / 3.0);
    const BACK: f32 = HALF.to_f32_const();
    const ROUNDED: f8e4m3fn = f8e4m3fn::from_f32_toward_zero(0.3);
    assert_eq!(HALF.to_bits(), 0x3800);
    assert_eq!(THIRD.to_bits(), 0x3eab);
    assert_eq!(BACK, 0.5);
    assert_eq!(ROUNDED.to_f32(), 0.28125);
}

/// `next_up`/`next_down` against the sorted list of all values, for every pattern of every
/// format: the neighbour is the adjacent entry (infinities stay, NaN stays, and past the end
/// there is NaN, or the value itself in formats without NaN).
fn stepping<T: LowpFloat>(up: fn(T) -> T, down: fn(T) -> T) {
    let fmt = T::FORMAT;
    let mut sorted: Vec<(f64, u32)> = (0..1u32 << fmt.total_bits())
        .map(|b| (T::from_bits_u32(b).to_f64(), b))
        .filter(|(v, _)| !v.is_nan())
        .collect();
    sorted.sort_by(|a, b| a.0.total_cmp(&b.0));
    let past_end = |x: T| {
        if fmt.has_nan() {
            None
        } else {
            Some(x.to_bits_u32())
        }
    };
    for (k, &(v, b)) in sorted.iter().enumerate() {
        let x = T::from_bits_u32(b);
        let (got_up, got_down) = (up(x).to_bits_u32(), down(x).to_bits_u32());
        let want_up = if v == f64::INFINITY {
            Some(b)
        } else {
            // Skip the other zero: next_up(-0) is the smallest subnormal, not +0.
            sorted[k + 1..]
                .iter()
                .find(|e| e.0 > v)
                .map(|e| e.1)
                .or_else(|| past_end(x))
        };
        let want_down = if v == f64::NEG_INFINITY {
            Some(b)
        } else {
            sorted[..k]
                .iter()
                .rev()
                .find(|e| e.0 < v)
                .map(|e| e.1)
                .or_else(|| past_end(x))
        };
        // Stepping onto zero from below gives -0 and from above +0, as IEEE says.
        let zero_fix = |w: Option<u32>, negative: bool| {
            w.map(|w| {
                if T::from_bits_u32(w).to_f64() == 0.0 && fmt.has_negative_zero() {
                    if negative { fmt.sign_mask() } else { 0 }
                } else {
                    w
                }
            })
        };
        let check = |got: u32, want: Option<u32>, what: &str| match want {
            Some(w) => assert_eq!(got, w, "{} {what}({b:#x})", fmt.name),
            None => assert!(
                fmt.is_nan_bits(got),
                "{} {what}({b:#x}) = {got:#x}",
                fmt.name
            ),
        };
        check(got_up, zero_fix(want_up, true), "next_up");
        check(got_down, zero_fix(want_down, false), "next_down");
    }
}

#[test]
fn next_up_and_next_down_walk_the_sorted_values() {
    macro_rules! all {
        ($($t:ty),*) => {$( stepping::<$t>(<$t>::next_up, <$t>::next_down); )*};
    }
    all!(
        f16, bf16, f8e4m3fn, f8e5m2, f8e4m3fnuz, f8e5m2fnuz, f8e4m3, f8e3m4, f8e8m0fnu, f6e2m3fn,
        f6e3m2fn, f4e2m1fn
    );
    assert!(f16::NAN.next_up().is_nan());
    assert_eq!(f16::INFINITY.next_up().to_bits(), f16::INFINITY.to_bits());
    assert_eq!(f16::NEG_INFINITY.next_up().to_bits(), f16::MIN.to_bits());
    assert_eq!(f16::MAX.next_up().to_bits(), f16::INFINITY.to_bits());
}
