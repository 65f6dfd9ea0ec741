//! `Format` used as a value: every run-time operation against the number type's own method,
//! on every bit pattern of every format, and the rows of `for_each_format!` against the
//! formats they describe.

use lowp::prelude::*;
use lowp::{Format, LowpFloat};

/// Checks one type: every bit pattern through the descriptor and through the type agree.
fn check_type<T: LowpFloat + std::fmt::Display + std::str::FromStr>(
    next_up: fn(T) -> T,
    next_down: fn(T) -> T,
    classify: fn(T) -> std::num::FpCategory,
) {
    let f = T::FORMAT;
    assert_eq!(Format::from_name(f.name), Ok(f));
    let same = |a: f64, b: f64| a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan());
    for bits in 0..1u32 << f.total_bits() {
        let x = T::from_bits_u32(bits);
        assert!(same(f.to_f64(bits), x.to_f64()), "{} {bits:#x}", f.name);
        assert!(same(f.to_f32(bits) as f64, x.to_f32() as f64));
        assert_eq!(
            f.next_up(bits),
            next_up(x).to_bits_u32(),
            "{} {bits:#x}",
            f.name
        );
        assert_eq!(f.next_down(bits), next_down(x).to_bits_u32());
        assert_eq!(f.classify(bits), classify(x));
        let shown = f.display(bits).to_string();
        assert_eq!(shown, lowp::Shortest(x).to_string());
        let parsed = f.parse(&shown).ok();
        let typed = shown.parse::<T>().ok().map(|v| v.to_bits_u32());
        assert_eq!(parsed, typed, "{} {shown}", f.name);
    }
    // Rounding from f64 and f32 on values around every representable one.
    let mut values = vec![0.0, -0.0, f64::INFINITY, f64::NAN, 1e300, 1e-300];
    for bits in 0..1u32 << f.total_bits() {
        let v = f.to_f64(bits);
        values.extend([v, v * (1.0 + 1e-3), v * (1.0 - 3e-4), v / 3.0]);
    }
    for v in values {
        assert_eq!(
            f.from_f64(v),
            T::from_f64(v).to_bits_u32(),
            "{} {v}",
            f.name
        );
        assert_eq!(f.from_f32(v as f32), T::from_f32(v as f32).to_bits_u32());
    }
    // Slices by descriptor equal the typed bulk conversion.
    let src: Vec<f32> = (0..3000).map(|i| (i as f32 - 1500.0) * 0.37).collect();
    let typed = Vec::<T>::from_f32_slice(&src);
    let mut bytes = vec![0u8; src.len() * f.storage_bytes()];
    f.from_f32_slice(&src, &mut bytes).unwrap();
    for (v, b) in typed.iter().zip(bytes.chunks_exact(f.storage_bytes())) {
        let mut w = [0u8; 4];
        w[..b.len()].copy_from_slice(b);
        assert_eq!(u32::from_le_bytes(w), v.to_bits_u32());
    }
    let mut back = vec![0f32; src.len()];
    f.to_f32_slice(&bytes, &mut back).unwrap();
    let mut expected = vec![0f32; src.len()];
    typed.convert_to_f32_slice(&mut expected);
    assert!(
        back.iter()
            .zip(&expected)
            .all(|(a, b)| a.to_bits() == b.to_bits())
    );
    let err = f.from_f32_slice(&src, &mut bytes[1..]).unwrap_err();
    assert_eq!(err.expected, src.len() * f.storage_bytes());
}

macro_rules! check_all {
    ($($t:ident),*) => {$(
        check_type::<lowp::$t>(lowp::$t::next_up, lowp::$t::next_down, lowp::$t::classify);
    )*};
}

#[test]
fn every_operation_by_descriptor_equals_the_type_on_every_bit_pattern() {
    macro_rules! run {
        ($t:ident) => {
            check_all!($t);
        };
    }
    lowp::for_each_format!(run);
}

#[test]
fn the_list_is_format_all_in_order() {
    macro_rules! formats {
        ($(($t:ident, $($rest:tt)*))*) => { [$(<lowp::$t as LowpFloat>::FORMAT),*] };
    }
    assert_eq!(
        lowp::for_each_format!(formats, list).as_slice(),
        Format::ALL
    );
    let names: Vec<String> = Format::ALL.iter().map(|f| f.to_string()).collect();
    assert_eq!(names[0], "f16");
    assert_eq!(names.len(), 12);
}

#[test]
fn each_row_describes_its_format() {
    macro_rules! check_row {
        ($t:ident, $variant:ident, $storage:ty, $compute:ty, $sign:ident, $values:ident, $width:ident) => {{
            let f = <lowp::$t as LowpFloat>::FORMAT;
            assert_eq!(stringify!($t), f.name);
            assert_eq!(stringify!($variant), f.name.to_uppercase());
            assert_eq!(std::mem::size_of::<$storage>(), f.storage_bytes());
            assert_eq!(stringify!($sign) == "signed", f.signed, "{}", f.name);
            let values = match f.nan {
                lowp::format::NanEncoding::Ieee => "ieee",
                lowp::format::NanEncoding::AllOnes => "finite_nan",
                lowp::format::NanEncoding::NegativeZero => "fnuz",
                lowp::format::NanEncoding::None => "finite",
            };
            assert_eq!(stringify!($values), values, "{}", f.name);
            let all_bits = f.total_bits() as usize == 8 * std::mem::size_of::<$storage>();
            assert_eq!(stringify!($width) == "all_bits", all_bits, "{}", f.name);
            // Only E8M0 (no zero, no subnormals) computes in f64: its products and quotients
            // reach 2^±254, far outside f32.
            let compute = if f.subnormals { "f32" } else { "f64" };
            assert_eq!(stringify!($compute), compute, "{}", f.name);
        }};
    }
    lowp::for_each_format!(check_row, rows);
}

#[test]
fn names_and_limits() {
    assert_eq!("float8_e4m3fn".parse::<Format>().unwrap().name, "f8e4m3fn");
    assert_eq!(Format::from_name("HALF").unwrap(), lowp::f16::FORMAT);
    let err = Format::from_name("int8").unwrap_err().to_string();
    assert!(
        err.starts_with("unknown format; valid formats: f16, bf16, f8e4m3fn"),
        "{err}"
    );
    let e4m3 = Format::from_name("f8e4m3fn").unwrap();
    assert_eq!(e4m3.max_value(), 448.0);
    assert_eq!(e4m3.min_positive_value(), 2f64.powi(-6));
    assert_eq!(e4m3.min_positive_subnormal_value(), 2f64.powi(-9));
    assert_eq!(e4m3.epsilon(), 0.125);
    assert_eq!(lowp::f16::FORMAT.epsilon(), 2f64.powi(-10));
    assert_eq!(lowp::f8e8m0fnu::FORMAT.epsilon(), 1.0);
    assert_eq!(lowp::bf16::FORMAT.max_value(), lowp::bf16::MAX.to_f64());
    assert_eq!(format!("{:>6}", lowp::f16::FORMAT), "   f16");
}
