//! Why a string is not a number: the error of every type's `FromStr`, apart from the parser
//! so that the trait every type implements can name it.

use core::fmt;

/// Why a string is not a number ([`core::str::FromStr`] for every type of this crate).
///
/// The types accept exactly the syntax of `f32::from_str`: an optional sign, then decimal digits
/// with an optional `.` (digits on at least one side of it) and an optional exponent (`e` or
/// `E`, optional sign, digits), or `inf`, `infinity` or `nan` in any case. No whitespace, no
/// underscores, no hexadecimal.
///
/// Parsing rounds the exact decimal once, into the target format; printing gives the shortest
/// decimal that parses back:
///
/// ```
/// use lowp::{ParseErrorKind, bf16, f16, f8e8m0fnu};
///
/// // Just above the midpoint between 1 and the next f16: up. (Through f32 or f64 this string
/// // becomes the midpoint itself, which would round to even: down.)
/// assert_eq!("1.00048828125000001".parse::<f16>().unwrap().to_bits(), 0x3c01);
/// assert_eq!("1.00048828125".parse::<f16>().unwrap().to_bits(), 0x3c00);
/// assert_eq!("1.00390625000001".parse::<bf16>().unwrap().to_bits(), 0x3f81);
/// assert_eq!("-1e-99999".parse::<f16>().unwrap().to_bits(), 0x8000);
/// assert_eq!("1e-400".parse::<f8e8m0fnu>().unwrap().to_bits(), 0x00); // no zero: 2^-127
/// assert!("-INFINITY".parse::<f16>().unwrap().is_infinite());
///
/// let x: f16 = "0.1".parse().unwrap();
/// assert_eq!(x.to_f32(), 0.099975586);
/// let s = x.shortest();
/// assert_eq!(format!("{s} {s:e} {s:?} {s:.5}"), "0.1 1e-1 0.1 0.09998");
///
/// assert_eq!("".parse::<f16>().unwrap_err().kind(), ParseErrorKind::Empty);
/// assert_eq!(" 1".parse::<f16>().unwrap_err().kind(), ParseErrorKind::Invalid);
/// assert_eq!("1e".parse::<f16>().unwrap_err().kind(), ParseErrorKind::Invalid);
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParseFloatError {
    kind: ParseErrorKind,
}

/// The reasons a parse can fail.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ParseErrorKind {
    /// The string is empty.
    Empty,
    /// The string is not a decimal number, `inf`, `infinity` or `nan` (the syntax of
    /// `f32::from_str`).
    Invalid,
}

impl ParseFloatError {
    /// An error of the given kind.
    pub(crate) const fn new(kind: ParseErrorKind) -> Self {
        Self { kind }
    }

    /// Why the parse failed.
    pub fn kind(&self) -> ParseErrorKind {
        self.kind
    }
}

impl fmt::Display for ParseFloatError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self.kind {
            ParseErrorKind::Empty => "cannot parse a float from an empty string",
            ParseErrorKind::Invalid => "invalid float literal",
        })
    }
}

impl core::error::Error for ParseFloatError {}
