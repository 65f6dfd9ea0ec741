//! `serde` support: every type serializes as its exact value, as an `f32`.
//!
//! # Representation
//!
//! * **Serialize.** The value is written with `serialize_f32`: every value of every format is
//!   exactly an f32, so nothing rounds, and JSON shows a plain number (the shortest decimal
//!   that reads back as that f32, e.g. `f16` 0.1 is `0.099975586`). A serialized value can be
//!   read back as any other type of this crate (or as `f32`/`f64`).
//! * **Non-finite values in human-readable formats.** JSON has no NaN or infinity (serde_json
//!   writes `null` for them, which cannot be read back), so when the serializer is human-readable
//!   (`Serializer::is_human_readable`: JSON, TOML, YAML, ...) NaN is written as the string
//!   `"NaN"` and the infinities as `"inf"` and `"-inf"` (Rust's `f32` spellings, which `FromStr`
//!   reads back). The NaN's sign and payload are not kept. Binary formats (bincode, postcard,
//!   CBOR, ...) get the f32 NaN or infinity itself (`to_f32`), which keeps the sign; reading it
//!   back (`from_f32`) keeps the payload in `f16` alone, quieted, and gives the other formats
//!   their canonical NaN of that sign (see each type's "NaN" section).
//! * **Deserialize.** Accepted are
//!   - any number: an f64 converts with `from_f64` (round to nearest, ties to even, directly,
//!     never through f32), an f32 with `from_f32`, and any integer (`i64`, `u64`, `i128`,
//!     `u128`) is rounded once, exactly like `from_f64` of its real value (no double rounding
//!     through f64); out-of-range and special values then behave as in `from_f64` (overflow to
//!     infinity, NaN or ±MAX depending on the format; in `f8e8m0fnu` zero and negative numbers
//!     give NaN);
//!   - a string, parsed with the type's `FromStr` (correctly rounded straight from the decimal,
//!     and accepting `"NaN"`, `"inf"`, `"-inf"`, `"infinity"`).
//!
//!   Raw bit patterns are *not* accepted: an integer is a value, so `3` is 3.0, not the pattern
//!   `0x03`; use `to_bits`/`from_bits` with `serialize_with`/`deserialize_with` to store bits.
//!   `null`, booleans and everything else are rejected.
//!
//! Human-readable deserializers are driven with `deserialize_any` (so numbers and strings both
//! work); the others with `deserialize_f32`, matching what `serialize` writes.
//!
//! Most deserializers hand a decimal number over as an f64 (serde_json does), so a decimal in
//! the input is rounded to f64 before it is rounded into the format. Values this crate wrote
//! always round trip exactly; to get arbitrary decimals correctly rounded, write them as strings.

use crate::LowpFloat;
use core::fmt;
use core::marker::PhantomData;
use core::str::FromStr;
use serde::de::{self, Deserialize, Deserializer, Unexpected, Visitor};
use serde::ser::{Serialize, Serializer};

/// The string a human-readable serializer gets for a non-finite value.
fn non_finite_str(x: f32) -> &'static str {
    if x.is_nan() {
        "NaN"
    } else if x > 0.0 {
        "inf"
    } else {
        "-inf"
    }
}

/// `T`'s value nearest to the integer `±mag` (ties to even), rounded once.
///
/// The integer is first rounded to 53 bits *to odd* (the bits that do not fit are folded into
/// the lowest kept bit), which is exact in an f64; rounding that to nearest even with at most 51
/// bits of precision (every format here has at most 24) gives the same result as rounding the
/// integer itself.
fn from_integer<T: LowpFloat>(neg: bool, mag: u128) -> T {
    let width = 128 - mag.leading_zeros();
    let x = if width <= 53 {
        mag as f64
    } else {
        let shift = width - 53;
        let sticky = mag & ((1u128 << shift) - 1) != 0;
        let kept = (mag >> shift) as u64 | sticky as u64;
        // `kept < 2^53` and `shift <= 75`: both factors and the product are exact.
        kept as f64 * f64::from_bits((1023 + shift as u64) << 52)
    };
    T::from_f64(if neg { -x } else { x })
}

/// The visitor behind every type's `Deserialize`.
struct LowpVisitor<T>(PhantomData<T>);

impl<'de, T: LowpFloat + FromStr> Visitor<'de> for LowpVisitor<T> {
    type Value = T;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "a number or a numeric string ({})", T::FORMAT.name)
    }

    fn visit_f32<E: de::Error>(self, v: f32) -> Result<T, E> {
        Ok(T::from_f32(v))
    }

    fn visit_f64<E: de::Error>(self, v: f64) -> Result<T, E> {
        Ok(T::from_f64(v))
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<T, E> {
        Ok(from_integer(v < 0, v.unsigned_abs() as u128))
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<T, E> {
        Ok(from_integer(false, v as u128))
    }

    fn visit_i128<E: de::Error>(self, v: i128) -> Result<T, E> {
        Ok(from_integer(v < 0, v.unsigned_abs()))
    }

    fn visit_u128<E: de::Error>(self, v: u128) -> Result<T, E> {
        Ok(from_integer(false, v))
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<T, E> {
        v.parse()
            .map_err(|_| E::invalid_value(Unexpected::Str(v), &self))
    }
}

macro_rules! impl_serde {
    ($t:ident) => {
        impl Serialize for crate::$t {
            /// Writes the exact value as an `f32`; a human-readable serializer (JSON, ...) gets
            /// the strings `"NaN"`, `"inf"` and `"-inf"` for the non-finite values instead,
            /// since JSON has no numbers for them.
            fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                let x = self.to_f32();
                if !x.is_finite() && serializer.is_human_readable() {
                    serializer.serialize_str(non_finite_str(x))
                } else {
                    serializer.serialize_f32(x)
                }
            }
        }

        impl<'de> Deserialize<'de> for crate::$t {
            /// Reads any number, rounded to nearest even with one rounding (as `from_f64`; an
            /// integer is rounded from its exact value), or a string parsed with `FromStr`
            /// (`"NaN"`, `"inf"`, `"-inf"`, decimals). Overflow, NaN and values the format
            /// cannot hold behave as in `from_f64`. Bit patterns, `null` and booleans are
            /// rejected.
            fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
                let visitor = LowpVisitor::<Self>(PhantomData);
                if deserializer.is_human_readable() {
                    deserializer.deserialize_any(visitor)
                } else {
                    deserializer.deserialize_f32(visitor)
                }
            }
        }
    };
}

crate::for_each_format!(impl_serde);
