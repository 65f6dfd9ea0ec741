//! Conversions between the formats, Rust's primitive types and `bool`.

use core::fmt;

/// A checked (`TryFrom`) conversion that would have lost information.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct TryFromFloatError {
    kind: TryFromFloatErrorKind,
}

/// Why a checked conversion failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum TryFromFloatErrorKind {
    /// The source is NaN and the target cannot hold NaN.
    Nan,
    /// The source is outside the target's range (infinity included).
    OutOfRange,
    /// The source lies within range but between two target values (a fraction for an integer
    /// target, too many significant bits for a float target).
    Inexact,
}

impl TryFromFloatError {
    pub(crate) const fn new(kind: TryFromFloatErrorKind) -> Self {
        Self { kind }
    }

    /// Why the conversion failed.
    pub fn kind(&self) -> TryFromFloatErrorKind {
        self.kind
    }
}

impl fmt::Display for TryFromFloatError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self.kind {
            TryFromFloatErrorKind::Nan => "NaN cannot be converted to the target type",
            TryFromFloatErrorKind::OutOfRange => "value out of the target type's range",
            TryFromFloatErrorKind::Inexact => "value not exactly representable in the target type",
        })
    }
}

impl core::error::Error for TryFromFloatError {}
