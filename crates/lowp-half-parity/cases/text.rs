use subject::{bf16, f16};

#[test]
fn display_and_debug() {
    // Both print the value's f32 (lowp's `shortest` prints the shortest decimal instead).
    let tenth = f16::from_f32(0.1);
    assert_eq!(format!("{tenth}"), "0.099975586");
    assert_eq!(format!("{tenth:?}"), "0.099975586");
    assert_eq!(format!("{:?}", bf16::from_f32(0.1)), "0.100097656");
    for (x, shown) in [
        (1.5f32, "1.5"),
        (-2.0, "-2"),
        (0.25, "0.25"),
        (1024.0, "1024"),
    ] {
        assert_eq!(f16::from_f32(x).to_string(), shown);
    }
    assert_eq!(f16::MAX.to_string(), "65504");
    assert_eq!(format!("{:?}", f16::ONE), "1.0");
    assert_eq!(f16::INFINITY.to_string(), "inf");
    assert_eq!(f16::NEG_INFINITY.to_string(), "-inf");
    assert_eq!(f16::NAN.to_string(), "NaN");
    // A precision, width and sign apply as to the f32.
    assert_eq!(format!("{:.3}", tenth), "0.100");
    assert_eq!(format!("{:.6}", tenth), "0.099976");
    assert_eq!(
        format!("{:>8.2}|{:<6}|{:+}", f16::ONE, f16::from_f32(1.5), f16::ONE),
        "    1.00|1.5   |+1"
    );
}

#[test]
fn exponent_notation() {
    assert_eq!(format!("{:e}", f16::from_f32(1500.0)), "1.5e3");
    assert_eq!(format!("{:E}", bf16::from_f32(0.125)), "1.25E-1");
    assert_eq!(format!("{:e}", f16::from_f32(0.1)), "9.9975586e-2");
    // Both drop the precision and width in exponent notation.
    assert_eq!(format!("{:.2e}", f16::from_f32(0.1)), "9.9975586e-2");
    assert_eq!(format!("{:>8e}", f16::ONE), "1e0");
}

#[test]
fn bits_in_hex_binary_and_octal() {
    assert_eq!(format!("{:x}", f16::ONE), "3c00");
    assert_eq!(format!("{:X}", bf16::NEG_ONE), "BF80");
    assert_eq!(format!("{:b}", f16::from_bits(5)), "101");
    assert_eq!(format!("{:o}", f16::from_bits(8)), "10");
    // Both drop the flags.
    assert_eq!(format!("{:#x}", f16::ONE), "3c00");
    assert_eq!(format!("{:08b}", f16::from_bits(5)), "101");
}

#[test]
fn parsing() {
    assert_eq!("1.5".parse::<f16>().unwrap().to_f32(), 1.5);
    assert_eq!("-0.1".parse::<bf16>().unwrap(), bf16::from_f32(-0.1));
    assert_eq!("1e4".parse::<f16>().unwrap().to_f32(), 10000.0);
    assert_eq!("inf".parse::<f16>().unwrap(), f16::INFINITY);
    assert_eq!("-infinity".parse::<bf16>().unwrap(), bf16::NEG_INFINITY);
    assert!("NaN".parse::<f16>().unwrap().is_nan());
    assert_eq!("1e6".parse::<f16>().unwrap(), f16::INFINITY);
    assert!("".parse::<f16>().is_err());
    assert!("1.5x".parse::<f16>().is_err());
    assert!("one".parse::<bf16>().is_err());
    // A decimal just above the tie between 1 and the next f16: half parses it as an f32,
    // which lands on the tie, and then rounds the tie to even (1); lowp rounds the decimal once.
    let above_tie = "1.000488281250000001";
    assert_eq!(
        above_tie.parse::<f16>().unwrap().to_bits(),
        differs(0x3c00, 0x3c01)
    );
    // Every value's printed form reads back as the same value.
    for bits in (0..=u16::MAX).step_by(7) {
        let x = f16::from_bits(bits);
        if !x.is_nan() {
            assert_eq!(x.to_string().parse::<f16>().unwrap().to_bits(), bits);
        }
    }
}
