//! The VALUE of `lowp inspect`: a decimal read as an f64, or a bit pattern of a format.

use crate::bits;
use crate::error::Error;
use lowp::Format;

/// What the user gave to inspect.
#[derive(Clone, Copy)]
pub enum Input {
    /// A decimal number, rounded to the nearest f64 (`"0.1"`, `"-2.5e3"`, `"inf"`, `"nan"`).
    Decimal(f64),
    /// A bit pattern of a format (`0x3c00 --as f16`); `bits` fits the format.
    Bits {
        /// The format the bits belong to.
        ops: &'static Format,
        /// The pattern.
        bits: u32,
    },
}

impl Input {
    /// Reads the VALUE. Bit patterns (`0x…`, `0b…`) need `as_format`; decimals are read with
    /// Rust's f64 parser (which also takes `inf`, `infinity` and `nan`). `as_arg` is how the
    /// caller's user gives `as_format` (`"--as FORMAT"` on the command line,
    /// `"source='FORMAT'"` in Python), for the error messages; its example replaces FORMAT
    /// with f16.
    pub fn parse(
        text: &str,
        as_format: Option<&'static Format>,
        as_arg: &str,
    ) -> Result<Self, Error> {
        if bits::looks_like_bits(text) {
            let Some(ops) = as_format else {
                let example = as_arg.replace("FORMAT", "f16");
                return Err(Error::invalid(format!(
                    "'{text}' looks like a bit pattern; say which format it belongs to with {as_arg} (e.g. {example})"
                )));
            };
            return bits::parse(text, ops)
                .map(|bits| Input::Bits { ops, bits })
                .map_err(Error::invalid);
        }
        text.parse::<f64>().map(Input::Decimal).map_err(|_| {
            Error::invalid(format!(
                "invalid value '{text}': expected a decimal number (0.1, -2.5e3, 1e-8, inf, nan) or, with {as_arg}, a bit pattern (0x3c00, 0b0011110000000000)"
            ))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::lookup;

    /// The command line's spelling.
    const AS: &str = "--as FORMAT";

    #[test]
    fn decimals() {
        assert!(matches!(Input::parse("0.1", None, AS), Ok(Input::Decimal(x)) if x == 0.1));
        assert!(
            matches!(Input::parse("-inf", None, AS), Ok(Input::Decimal(x)) if x == f64::NEG_INFINITY)
        );
        assert!(
            matches!(Input::parse("1e400", None, AS), Ok(Input::Decimal(x)) if x == f64::INFINITY)
        );
        assert!(Input::parse("abc", None, AS).is_err());
        assert!(Input::parse("", None, AS).is_err());
        assert!(Input::parse(" 1", None, AS).is_err());
    }

    #[test]
    fn bit_patterns() {
        let f16 = lookup("f16").unwrap();
        assert!(matches!(
            Input::parse("0x3c00", Some(f16), AS),
            Ok(Input::Bits { bits: 0x3c00, .. })
        ));
        let err = Input::parse("0x3c00", None, AS).err().unwrap();
        assert!(err.to_string().contains("--as FORMAT (e.g. --as f16)"));
        let err = Input::parse("0x3c00", None, "source='FORMAT'")
            .err()
            .unwrap();
        let message = err.to_string();
        assert!(
            message.contains("with source='FORMAT' (e.g. source='f16')"),
            "{message}"
        );
        assert!(!message.contains("--"), "{message}");
        let err = Input::parse("0x1ffff", Some(f16), AS).err().unwrap();
        assert!(matches!(err, Error::Invalid(_)));
        assert!(err.to_string().contains("16 bits"), "{}", err.to_string());
    }
}
