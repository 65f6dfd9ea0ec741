//! `serde`'s `Serialize` and `Deserialize` for every type: the bits, as the `half` crate has
//! them, and `half`'s adapters `serialize_as_f32` and `serialize_as_string`.
//!
//! [`crate::serde`] describes the forms for users, with the differences from `half` and
//! `float8`; this module implements the default one and says how.
//!
//! # Representation
//!
//! * **Serialize**: `serialize_newtype_struct(name, bits)`, with the type's name and its
//!   `to_bits()` (`u16` for `f16`/`bf16`, `u8` for the rest, FP6 and FP4 in the low bits).
//!   That is exactly what `#[derive(Serialize)]` on `half`'s `struct f16(u16)` writes, so the
//!   output is the same byte for byte in every format (JSON: `15360` for 1.0; bincode:
//!   `[0x00, 0x3c]`).
//! * **Deserialize**: `deserialize_newtype_struct(name, visitor)`, as `half` does. The visitor
//!   accepts what `half`'s does and more:
//!   - `visit_newtype_struct` (what JSON, bincode, CBOR, ... call): `half` reads a `u16` there;
//!     here a human-readable deserializer is asked for anything (`deserialize_any`, so that a
//!     JSON float or string is read as a value, which `half` rejects) and a binary one for the
//!     `u16` or `u8` that was written (bincode is not self-describing).
//!   - an integer (`visit_u64`, `visit_i64`, ..., inside the newtype or bare): the bits, if it
//!     is from 0 to 2^width - 1; otherwise an `invalid_value` error, as `u16`'s own
//!     `Deserialize` gives `half` for 70000. Nothing is masked.
//!   - `visit_f32`, `visit_f64`: the value, `from_f32`/`from_f64` (one rounding; `half`'s
//!     `from_f64` rounds twice).
//!   - `visit_str`: the value, `FromStr` (one rounding; `half` parses an f32 and rounds that).
//!
//! ```
//! use lowp::{f6e2m3fn, f8e5m2};
//!
//! let x = f6e2m3fn::from_f32(-7.5);
//! assert_eq!(serde_json::to_string(&x).unwrap(), "63"); // 0b11_1111
//! assert_eq!(bincode::serialize(&x).unwrap(), [63]);
//! assert_eq!(bincode::deserialize::<f6e2m3fn>(&[63]).unwrap(), x);
//! let e = bincode::deserialize::<f6e2m3fn>(&[64]).unwrap_err().to_string();
//! assert_eq!(e, "invalid value: integer `64`, expected the bits of f6e2m3fn, an integer from \
//!                0 to 63");
//!
//! // The `float8` crate writes its F8E5M2 as the same u8.
//! let y = float8::F8E5M2::from_bits(0x3c);
//! let json = serde_json::to_string(&y).unwrap();
//! assert_eq!(serde_json::from_str::<f8e5m2>(&json).unwrap().to_f32(), 1.0);
//! ```

use crate::LowpFloat;
use ::serde::de::{self, Deserialize, Deserializer, Expected, Unexpected, Visitor};
use ::serde::ser::{Serialize, Serializer};
use core::fmt;
use core::marker::PhantomData;

/// The largest bit pattern of `T`, `2^width - 1`.
fn max_bits<T: LowpFloat>() -> u64 {
    (1 << T::FORMAT.total_bits()) - 1
}

/// What an integer out of range should have been: `T`'s bits.
struct BitsOf<T>(PhantomData<T>);

impl<T: LowpFloat> Expected for BitsOf<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let name = T::FORMAT.name;
        write!(
            f,
            "the bits of {name}, an integer from 0 to {}",
            max_bits::<T>()
        )
    }
}

/// The visitor behind every type's `Deserialize`: bits, or a value.
struct BitsVisitor<T>(PhantomData<T>);

impl<T: LowpFloat> BitsVisitor<T> {
    /// The error for an integer that is no bit pattern of `T`.
    fn out_of_range<E: de::Error>(found: Unexpected<'_>) -> E {
        E::invalid_value(found, &BitsOf::<T>(PhantomData))
    }
}

impl<'de, T: LowpFloat> Visitor<'de> for BitsVisitor<T> {
    type Value = T;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        BitsOf::<T>(PhantomData).fmt(f)?;
        f.write_str(", or a number or numeric string for the value")
    }

    fn visit_newtype_struct<D: Deserializer<'de>>(self, deserializer: D) -> Result<T, D::Error> {
        if deserializer.is_human_readable() {
            deserializer.deserialize_any(self)
        } else if T::FORMAT.total_bits() > 8 {
            deserializer.deserialize_u16(self)
        } else {
            deserializer.deserialize_u8(self)
        }
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<T, E> {
        if v <= max_bits::<T>() {
            Ok(T::from_bits_u32(v as u32))
        } else {
            Err(Self::out_of_range(Unexpected::Unsigned(v)))
        }
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<T, E> {
        match u64::try_from(v) {
            Ok(v) => self.visit_u64(v),
            Err(_) => Err(Self::out_of_range(Unexpected::Signed(v))),
        }
    }

    fn visit_u128<E: de::Error>(self, v: u128) -> Result<T, E> {
        match u64::try_from(v) {
            Ok(v) => self.visit_u64(v),
            Err(_) => Err(Self::out_of_range(Unexpected::Other("a 128-bit integer"))),
        }
    }

    fn visit_i128<E: de::Error>(self, v: i128) -> Result<T, E> {
        match u64::try_from(v) {
            Ok(v) => self.visit_u64(v),
            Err(_) => Err(Self::out_of_range(Unexpected::Other("a 128-bit integer"))),
        }
    }

    fn visit_f32<E: de::Error>(self, v: f32) -> Result<T, E> {
        Ok(T::from_f32(v))
    }

    fn visit_f64<E: de::Error>(self, v: f64) -> Result<T, E> {
        Ok(T::from_f64(v))
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<T, E> {
        v.parse()
            .map_err(|_| E::invalid_value(Unexpected::Str(v), &self))
    }
}

/// `x` with a NaN quieted (the f32 quiet bit set): `half`'s `to_f32` quiets a signaling NaN,
/// and its `serialize_as_f32` writes that.
fn quiet(x: f32) -> f32 {
    if x.is_nan() {
        f32::from_bits(x.to_bits() | 0x0040_0000)
    } else {
        x
    }
}

macro_rules! impl_serde {
    ($t:ident) => {
        impl Serialize for crate::$t {
            /// Writes the bits, as the `half` crate does: a newtype struct named after the type
            /// holding `to_bits()` (JSON: an integer; bincode: the bytes). [`crate::serde`]
            /// describes the form.
            fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                serializer.serialize_newtype_struct(stringify!($t), &self.to_bits())
            }
        }

        impl<'de> Deserialize<'de> for crate::$t {
            /// Reads what `half` reads: an integer as the bits (from 0 to 2^width - 1, else an
            /// error), and a float or a string as the value, rounded once. [`crate::serde`]
            /// describes the form.
            fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
                deserializer.deserialize_newtype_struct(stringify!($t), BitsVisitor(PhantomData))
            }
        }

        impl crate::$t {
            /// Writes the value as an `f32` (`serialize_f32`), for
            #[doc = concat!("`#[serde(serialize_with = \"lowp::", stringify!($t), "::serialize_as_f32\")]`:")]
            /// the `half` crate's method of the same name, byte for byte: a NaN is written
            /// quiet (the f32's quiet bit set, as `half`'s `to_f32` gives it). In JSON, NaN
            /// and the infinities become `null`, which nothing reads back;
            /// [`crate::serde::as_value`] writes strings for them. The default `Deserialize`
            /// reads the output in human-readable formats, `as_value` in all.
            pub fn serialize_as_f32<S: Serializer>(
                &self,
                serializer: S,
            ) -> Result<S::Ok, S::Error> {
                serializer.serialize_f32(quiet(self.to_f32()))
            }

            /// Writes the value as a string, as `f32`'s `Display` writes it (`"0.099975586"`
            /// for the `f16` 0.1; `"NaN"`, `"inf"`, `"-inf"`), for
            #[doc = concat!("`#[serde(serialize_with = \"lowp::", stringify!($t), "::serialize_as_string\")]`:")]
            /// the `half` crate's method of the same name, byte for byte. The default
            /// `Deserialize` and [`crate::serde::as_value`] read it back in human-readable
            /// formats.
            pub fn serialize_as_string<S: Serializer>(
                &self,
                serializer: S,
            ) -> Result<S::Ok, S::Error> {
                serializer.collect_str(&self.to_f32())
            }
        }
    };
}

crate::for_each_format!(impl_serde);
