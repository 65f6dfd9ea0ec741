//! Parsing decimal strings, correctly rounded directly into each format.

use core::fmt;

/// Why a string is not a number ([`core::str::FromStr`] for every type of this crate).
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
