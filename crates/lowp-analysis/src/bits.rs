//! Bit patterns: reading them from the command line, spelling them in hex and splitting them
//! into sign, exponent and mantissa fields.

use lowp::Format;

/// `bits` in hex with as many digits as the format's width needs (`0x7e00`, `0x7f`, `0x3f`,
/// `0x6`).
pub fn hex(bits: u32, total_bits: u32) -> String {
    let width = total_bits.div_ceil(4).max(1) as usize;
    format!("0x{bits:0width$x}")
}

/// The sign, exponent and mantissa fields of `bits` in binary. A field the format lacks (the
/// sign of E8M0, its mantissa) is empty.
pub fn fields(format: &Format, bits: u32) -> [String; 3] {
    let field = |value: u32, width: u32| -> String {
        (0..width)
            .rev()
            .map(|i| if value >> i & 1 == 1 { '1' } else { '0' })
            .collect()
    };
    let (e, m) = (format.exponent_bits, format.mantissa_bits);
    [
        field(bits >> (e + m), u32::from(format.signed)),
        field(bits >> m & ((1 << e) - 1), e),
        field(bits & format.mantissa_mask(), m),
    ]
}

/// The fields joined as `0|01111|0000000000`, `-` standing for a missing field.
pub fn fields_joined(format: &Format, bits: u32) -> String {
    fields(format, bits)
        .iter()
        .map(|f| if f.is_empty() { "-" } else { f.as_str() })
        .collect::<Vec<_>>()
        .join("|")
}

/// Whether a command-line value is written as a bit pattern (`0x…` or `0b…`).
pub fn looks_like_bits(text: &str) -> bool {
    let lower = text.to_ascii_lowercase();
    lower.starts_with("0x") || lower.starts_with("0b")
}

/// Reads `0x3c00` (hex) or `0b0011110000000000` (binary), underscores allowed between digits,
/// as a bit pattern of `format`; errors say why and name the format's largest pattern.
pub fn parse(text: &str, format: &Format) -> Result<u32, String> {
    let (radix, digits) = match text.get(..2).map(str::to_ascii_lowercase).as_deref() {
        Some("0x") => (16, &text[2..]),
        Some("0b") => (2, &text[2..]),
        _ => {
            return Err(format!(
                "'{text}' is not a bit pattern (expected 0x… or 0b…)"
            ));
        }
    };
    let digits: String = digits.chars().filter(|&c| c != '_').collect();
    if digits.is_empty() || digits.starts_with(['+', '-']) {
        return Err(format!("'{text}' has no digits after its prefix"));
    }
    let too_wide = || {
        format!(
            "{text} does not fit in {} ({} bits, largest pattern {})",
            format.name,
            format.total_bits(),
            hex(format.bits_mask(), format.total_bits())
        )
    };
    match u128::from_str_radix(&digits, radix) {
        Ok(v) if v <= u128::from(format.bits_mask()) => Ok(v as u32),
        Ok(_) => Err(too_wide()),
        Err(e) if *e.kind() == std::num::IntErrorKind::PosOverflow => Err(too_wide()),
        Err(_) => Err(format!(
            "'{text}' is not a valid {} number",
            if radix == 16 { "hexadecimal" } else { "binary" }
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use lowp::format::formats::{F4E2M1FN, F8E8M0FNU, F16};

    #[test]
    fn hex_width_follows_the_format() {
        assert_eq!(hex(0x7e00, 16), "0x7e00");
        assert_eq!(hex(0x3, 8), "0x03");
        assert_eq!(hex(0x3, 6), "0x03");
        assert_eq!(hex(0x3, 4), "0x3");
    }

    #[test]
    fn fields_split() {
        assert_eq!(fields_joined(&F16, 0x2e66), "0|01011|1001100110");
        assert_eq!(fields_joined(&F8E8M0FNU, 0x7f), "-|01111111|-");
        assert_eq!(fields_joined(&F4E2M1FN, 0xf), "1|11|1");
    }

    #[test]
    fn parsing() {
        assert_eq!(parse("0x3c00", &F16), Ok(0x3c00));
        assert_eq!(parse("0X3C_00", &F16), Ok(0x3c00));
        assert_eq!(parse("0b0011110000000000", &F16), Ok(0x3c00));
        assert!(parse("0x1ffff", &F16).unwrap_err().contains("0xffff"));
        assert!(parse("0x10", &F4E2M1FN).unwrap_err().contains("4 bits"));
        assert!(parse("0xffffffffffffffffffffffffffffffffffff", &F16).is_err());
        assert!(parse("0x", &F16).is_err());
        assert!(parse("0x-1", &F16).is_err());
        assert!(parse("0xg", &F16).is_err());
        assert!(parse("0b2", &F16).is_err());
        assert!(parse("12", &F16).is_err());
        assert!(parse("0\u{e9}", &F16).is_err());
    }
}
