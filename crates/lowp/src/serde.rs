//! The `serde` forms of the number types (feature `serde`): the bits, as the `half` crate
//! writes them (the default), and the value ([`as_value`]).
//!
//! # The bits (the default)
//!
//! Every type's `Serialize` writes a newtype struct named after the type (`"f16"`, `"bf16"`,
//! `"f8e4m3fn"`, ...) holding its bits: a `u16` for `f16` and `bf16`, a `u8` for the others
//! (FP6 and FP4 in the low bits, the high bits zero). JSON shows the integer, bincode the two
//! or one bytes. This is what the `half` crate (2.7) writes for its `f16` and `bf16`, and what
//! the `float8` crate (0.7) writes for its `F8E4M3` and `F8E5M2` (this crate's [`f8e4m3fn`] and
//! [`f8e5m2`]): whatever one of them wrote reads back here with the same bits, NaNs included,
//! and the reverse, so switching a program from `half` to this crate keeps its files.
//!
//! `Deserialize` reads
//!
//! * **an integer as the bits.** It must be a bit pattern of the type: from 0 to 65535 for
//!   `f16` and `bf16`, 255 for the 8-bit types, 63 for FP6, 15 for FP4. Anything else (70000
//!   for an `f16`, 300 for an `f8e4m3fn`, 16 for an `f4e2m1fn`, -1) is an error, as in `half`
//!   and `float8`, which read a `u16`/`u8`; no bits are masked away.
//! * **a float as the value**, rounded once to nearest, ties to even (`from_f64`, or `from_f32`
//!   for an f32).
//! * **a string as the value**, parsed with the type's `FromStr`: the decimal rounded once,
//!   and `"NaN"`, `"inf"`, `"-inf"`, `"infinity"` (any case).
//!
//! Human-readable formats (JSON, TOML, YAML, ...) say which of the three they hold, so all three
//! work there; binary formats (bincode, postcard, ...) do not, and are asked for the `u16` or
//! `u8` that `Serialize` writes. In JSON an integer is always the bits: `15360`, `1.0` and
//! `"1"` are all the `f16` 1.0, and serde_json hands `1e4`, `-0` and integers beyond 64 bits
//! over as floats, so they are values.
//!
//! ```
//! use lowp::{bf16, f16, f4e2m1fn, f8e4m3fn};
//!
//! let x = f16::from_f32(1.0);
//! assert_eq!(serde_json::to_string(&x).unwrap(), "15360"); // 0x3c00
//! assert_eq!(bincode::serialize(&x).unwrap(), [0x00, 0x3c]);
//! assert_eq!(serde_json::to_string(&half::f16::ONE).unwrap(), "15360");
//!
//! let back: f16 = serde_json::from_str("15360").unwrap();
//! assert_eq!(back, x);
//! let from_half: bf16 = serde_json::from_str(&serde_json::to_string(&half::bf16::PI).unwrap())
//!     .unwrap();
//! assert_eq!(from_half.to_bits(), half::bf16::PI.to_bits());
//!
//! // Values, as a float or a string, rounded once.
//! assert_eq!(serde_json::from_str::<f16>("1.0").unwrap(), x);
//! assert_eq!(serde_json::from_str::<f8e4m3fn>("\"0.1\"").unwrap().to_f32(), 0.1015625);
//! assert!(serde_json::from_str::<f16>("\"NaN\"").unwrap().is_nan());
//!
//! // Integers that are no bit pattern of the type are errors.
//! let e = serde_json::from_str::<f16>("70000").unwrap_err().to_string();
//! assert!(e.starts_with("invalid value: integer `70000`, expected the bits of f16, an integer \
//!                        from 0 to 65535"), "{e}");
//! assert!(serde_json::from_str::<f4e2m1fn>("16").is_err());
//! assert!(serde_json::from_str::<f16>("-1").is_err());
//! ```
//!
//! # Differences from `half` and `float8`
//!
//! What either crate writes reads back here bit for bit, and what this crate writes in the
//! default form reads back there bit for bit. Where they differ is what else they read:
//!
//! * **Values in JSON.** `half` and `float8` read the content of the newtype as a `u16`/`u8`,
//!   so in JSON (and every format that hands a newtype's content over as it is) they reject
//!   floats and strings (`1.5` is "invalid type: floating point `1.5`, expected u16"), even
//!   those their own `serialize_as_f32` and `serialize_as_string` wrote. This crate reads them
//!   as values: `1.5` is 1.5, `"0.1"` is the `f16` nearest to 0.1, and `-0` (a float to
//!   serde_json) is -0.0.
//! * **Rounding.** Where `half` does read a float or string (from deserializers that do not
//!   wrap a newtype's content, such as `serde::de::value`'s), it rounds twice: an f64 first to
//!   f32 (`f16` where the CPU has F16C) or by cutting its 32 low bits (`bf16`, and `f16`
//!   elsewhere), a string first to f32. This crate rounds once. The f64 1 + 2^-11 + 2^-40, just above the midpoint of the
//!   `f16` values 1 and 1.0009765625, is 1.0 in `half` and 1.0009765625 here; 1 + 2^-8 + 2^-40
//!   is the `bf16` 1.0 in `half` and 1.0078125 here; the string
//!   `"1.00048828125000000000000001"` is the `f16` 1.0 in `half` and 1.0009765625 here. So is
//!   f32's shortest decimal of an f32 that is a midpoint of `f16` or `bf16` (`"1.0004883"`
//!   for the f32 1 + 2^-11): `half` rounds the midpoint to even, this crate rounds the
//!   decimal, which lies to one side.
//! * **NaN payloads.** Handed an f32 NaN, `half`'s `bf16` keeps the top of its payload (the
//!   f32 `0x7fa00000` is `0x7fe0`); this crate's `bf16` gives its canonical NaN of that sign
//!   (`0x7fc0`), as its `from_f32` does. (`f16` keeps the payload in both.)
//! * **`float8`'s values.** `float8` converts a float or string by saturating: 1e9 and
//!   infinity are its `F8E4M3` 448 (bits `0x7e`) and its `F8E5M2` 57344 (`0x7b`). Here they
//!   round as `from_f64` does everywhere in this crate, with the semantics of ml_dtypes: 1e9
//!   is the `f8e4m3fn` NaN (`0x7f`) and the `f8e5m2` infinity (`0x7c`). (Bit patterns are not
//!   affected: they are copied.)
//! * **A bare integer.** Deserializers that hand a newtype over as its content (again
//!   `serde::de::value`'s: `15360u16.into_deserializer()`) give `half` and `float8` an integer
//!   they reject ("expected tuple struct f16"); here it is the bits, as inside the newtype.
//! * **Names.** The newtype's name is this crate's type name, as in `half`. `float8` writes `"F8E4M3"` and
//!   `"F8E5M2"` and reads `"f8e4m3"` and `"f8e5m2"`: formats that write the name (RON with its
//!   `struct_names` option) see the difference; JSON, bincode, CBOR, ... do not.
//! * Error messages have their own words.
//!
//! # The value: [`as_value`]
//!
//! `#[serde(with = "lowp::serde::as_value")]` on a field gives the number's value instead:
//!
//! * **Writing.** The value is written with `serialize_f32`: every value of every type is
//!   exactly an f32, so nothing rounds, and JSON shows the shortest decimal that reads back as
//!   that f32 (the `f16` 0.1 is `0.099975586`). A value written by one type can be read as any
//!   other (or as `f32`/`f64`). JSON has no NaN or infinity (serde_json writes `null`, which
//!   nothing reads back), so when the serializer is human-readable
//!   (`Serializer::is_human_readable`: JSON, TOML, YAML, ...) NaN is written as the string
//!   `"NaN"` and the infinities as `"inf"` and `"-inf"`; the NaN's sign and payload are lost.
//!   Binary formats (bincode, CBOR, ...) get the f32 NaN or infinity itself, which keeps the
//!   sign; reading it back (`from_f32`) keeps the payload in `f16` alone, quieted, and gives
//!   the other types their canonical NaN of that sign.
//! * **Reading.** Human-readable formats may hold any number or a string; the others are asked
//!   for an f32. A float rounds once, as in `from_f64` (never through f32 first); an integer of
//!   any width rounds once from its exact value (2^63 + 2^55 + 1 is above a `bf16` midpoint
//!   although its nearest f64 is the midpoint); a string is parsed with `FromStr`. Out-of-range
//!   values then behave as in `from_f64`: overflow to infinity, NaN or ±MAX depending on the
//!   type; the `f8e8m0fnu` of zero or a negative number is NaN. `null`, booleans and the rest
//!   are errors. serde_json hands a decimal over as the nearest f64, so it rounds to f64 before
//!   it rounds into the type; values this module wrote always read back exactly, and to get any
//!   decimal correctly rounded, write it as a string.
//!
//! This is not `half`'s `serialize_as_f32`: that writes `null` for NaN and the infinities in
//! JSON, and `half` reads an integer as bits, where `as_value` reads it as a value.
//!
//! ```
//! use lowp::{f16, f8e4m3fn};
//! use serde::{Deserialize, Serialize};
//!
//! #[derive(Serialize, Deserialize, Debug, PartialEq)]
//! struct Layer {
//!     #[serde(with = "lowp::serde::as_value")]
//!     scale: f16,
//!     #[serde(with = "lowp::serde::as_value")]
//!     bias: Option<f8e4m3fn>,
//!     #[serde(with = "lowp::serde::as_value")]
//!     weights: Vec<f16>,
//!     bits: f16,
//! }
//!
//! let layer = Layer {
//!     scale: f16::from_f32(0.1),
//!     bias: None,
//!     weights: vec![f16::from_f32(-2.5), f16::INFINITY],
//!     bits: f16::from_f32(1.0),
//! };
//! let json = serde_json::to_string(&layer).unwrap();
//! assert_eq!(json, r#"{"scale":0.099975586,"bias":null,"weights":[-2.5,"inf"],"bits":15360}"#);
//! assert_eq!(serde_json::from_str::<Layer>(&json).unwrap(), layer);
//! // An integer is a value here: 3 is 3.0, not the bits 0x0003.
//! let three: Layer =
//!     serde_json::from_str(r#"{"scale":3,"bias":"0.1","weights":[],"bits":0}"#).unwrap();
//! assert_eq!(three.scale.to_f32(), 3.0);
//! assert_eq!(three.bias, Some(f8e4m3fn::from_f32(0.1)));
//! ```
//!
//! [`as_value`] and [`as_bits`] (the default form, named) work on fields of every type of this
//! crate and on `Option` and `Vec` of them ([`Field`]), nested as deep as needed. For other
//! containers (a map, an array), wrap the number in a newtype of your own whose one field has
//! the attribute, and put that in the container.
//!
//! # `half`'s adapters
//!
//! Every type also has `half`'s two methods for `#[serde(serialize_with = ...)]`, writing what
//! `half` writes for the same value:
//!
//! * `serialize_as_f32`: the value with `serialize_f32` (NaN and the infinities become `null`
//!   in JSON);
//! * `serialize_as_string`: the value as `f32`'s `Display` writes it (`"0.099975586"` for the
//!   `f16` 0.1, `"NaN"`, `"inf"`, `"-inf"`); it needs no allocator, unlike `half`'s.
//!
//! The default `Deserialize` reads both back in human-readable formats (with `as_value` too);
//! in a binary format, read `serialize_as_f32`'s output with [`as_value`].
//!
//! ```
//! use lowp::f16;
//! use serde::{Deserialize, Serialize};
//!
//! #[derive(Serialize, Deserialize)]
//! struct Reading {
//!     #[serde(serialize_with = "f16::serialize_as_f32")]
//!     float: f16,
//!     #[serde(serialize_with = "f16::serialize_as_string")]
//!     string: f16,
//! }
//!
//! let x = f16::from_f32(0.1);
//! let json = serde_json::to_string(&Reading { float: x, string: x }).unwrap();
//! assert_eq!(json, r#"{"float":0.099975586,"string":"0.099975586"}"#);
//! let back: Reading = serde_json::from_str(&json).unwrap();
//! assert_eq!((back.float, back.string), (x, x));
//! ```
//!
//! [`f8e4m3fn`]: crate::f8e4m3fn
//! [`f8e5m2`]: crate::f8e5m2

use crate::LowpFloat;
use ::serde::de::{self, Deserialize, Deserializer, Unexpected, Visitor};
use ::serde::ser::{Serialize, Serializer};
use core::fmt;
use core::marker::PhantomData;

mod sealed {
    /// Only the types [`super::Field`] lists are fields.
    pub trait Sealed {}
}

/// A field type that [`as_value`] and [`as_bits`] handle: every number type of this crate, and
/// `Option` and `Vec` (with the `alloc` feature) of a `Field`.
///
/// The methods are what the two modules call; the containers apply them to each element.
pub trait Field: Sized + sealed::Sealed {
    /// Writes the field in the value form ([`as_value`]).
    fn serialize_value<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error>;
    /// Reads the field in the value form ([`as_value`]).
    fn deserialize_value<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error>;
    /// Writes the field in the bits form, the types' own `Serialize` ([`as_bits`]).
    fn serialize_bits<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error>;
    /// Reads the field in the bits form, the types' own `Deserialize` ([`as_bits`]).
    fn deserialize_bits<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error>;
}

/// The value form, for `#[serde(with = "lowp::serde::as_value")]` on a field of any [`Field`]
/// type (the module docs of [`crate::serde`] describe the form).
pub mod as_value {
    use super::Field;
    use ::serde::{Deserializer, Serializer};

    /// Writes the value: an f32, or in human-readable formats `"NaN"`, `"inf"` or `"-inf"` for
    /// the non-finite values.
    ///
    /// ```
    /// #[derive(serde::Serialize)]
    /// struct S(#[serde(with = "lowp::serde::as_value")] lowp::bf16);
    /// assert_eq!(serde_json::to_string(&S(lowp::bf16::from_f32(0.1))).unwrap(), "0.100097656");
    /// ```
    pub fn serialize<F: Field, S: Serializer>(field: &F, serializer: S) -> Result<S::Ok, S::Error> {
        field.serialize_value(serializer)
    }

    /// Reads a value, rounded once: any number (an integer is a value, not bits) or, in
    /// human-readable formats, a numeric string.
    ///
    /// ```
    /// #[derive(serde::Deserialize)]
    /// struct S(#[serde(with = "lowp::serde::as_value")] lowp::f16);
    /// let S(x) = serde_json::from_str("3").unwrap();
    /// assert_eq!(x.to_f32(), 3.0);
    /// ```
    pub fn deserialize<'de, F: Field, D: Deserializer<'de>>(
        deserializer: D,
    ) -> Result<F, D::Error> {
        F::deserialize_value(deserializer)
    }
}

/// The bits form, the types' own `Serialize` and `Deserialize`, by name: for
/// `#[serde(with = "lowp::serde::as_bits")]` on a field of any [`Field`] type, to say in a
/// struct which form a field has (the module docs of [`crate::serde`] describe the form).
pub mod as_bits {
    use super::Field;
    use ::serde::{Deserializer, Serializer};

    /// Writes the bits, as the type's `Serialize` does.
    ///
    /// ```
    /// #[derive(serde::Serialize)]
    /// struct S(#[serde(with = "lowp::serde::as_bits")] Option<lowp::f8e5m2>);
    /// assert_eq!(serde_json::to_string(&S(Some(lowp::f8e5m2::from_f32(1.0)))).unwrap(), "60");
    /// ```
    pub fn serialize<F: Field, S: Serializer>(field: &F, serializer: S) -> Result<S::Ok, S::Error> {
        field.serialize_bits(serializer)
    }

    /// Reads the bits (or a value), as the type's `Deserialize` does.
    ///
    /// ```
    /// #[derive(serde::Deserialize)]
    /// struct S(#[serde(with = "lowp::serde::as_bits")] Vec<lowp::f8e5m2>);
    /// let S(v) = serde_json::from_str("[60, 1.5]").unwrap();
    /// assert_eq!(v, [lowp::f8e5m2::from_f32(1.0), lowp::f8e5m2::from_f32(1.5)]);
    /// ```
    pub fn deserialize<'de, F: Field, D: Deserializer<'de>>(
        deserializer: D,
    ) -> Result<F, D::Error> {
        F::deserialize_bits(deserializer)
    }
}

impl<T: LowpFloat> sealed::Sealed for T {}

impl<T: LowpFloat + Serialize + for<'de> Deserialize<'de>> Field for T {
    fn serialize_value<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let x = self.to_f32();
        if !x.is_finite() && serializer.is_human_readable() {
            // f32's Display: "NaN", "inf", "-inf".
            serializer.collect_str(&x)
        } else {
            serializer.serialize_f32(x)
        }
    }

    fn deserialize_value<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let visitor = ValueVisitor::<Self>(PhantomData);
        if deserializer.is_human_readable() {
            deserializer.deserialize_any(visitor)
        } else {
            deserializer.deserialize_f32(visitor)
        }
    }

    fn serialize_bits<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.serialize(serializer)
    }

    fn deserialize_bits<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Self::deserialize(deserializer)
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

/// Reads the value form: any number, rounded once, or a numeric string.
struct ValueVisitor<T>(PhantomData<T>);

impl<'de, T: LowpFloat> Visitor<'de> for ValueVisitor<T> {
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

/// One of the two forms, for the elements of the containers.
trait Form {
    /// Writes `field` in this form.
    fn serialize<F: Field, S: Serializer>(field: &F, serializer: S) -> Result<S::Ok, S::Error>;
    /// Reads a `F` in this form.
    fn deserialize<'de, F: Field, D: Deserializer<'de>>(deserializer: D) -> Result<F, D::Error>;
}

/// [`as_value`]'s form.
enum ValueForm {}

impl Form for ValueForm {
    fn serialize<F: Field, S: Serializer>(field: &F, serializer: S) -> Result<S::Ok, S::Error> {
        field.serialize_value(serializer)
    }

    fn deserialize<'de, F: Field, D: Deserializer<'de>>(deserializer: D) -> Result<F, D::Error> {
        F::deserialize_value(deserializer)
    }
}

/// [`as_bits`]'s form.
enum BitsForm {}

impl Form for BitsForm {
    fn serialize<F: Field, S: Serializer>(field: &F, serializer: S) -> Result<S::Ok, S::Error> {
        field.serialize_bits(serializer)
    }

    fn deserialize<'de, F: Field, D: Deserializer<'de>>(deserializer: D) -> Result<F, D::Error> {
        F::deserialize_bits(deserializer)
    }
}

/// A container's element in the form `M`: `Serialize` for `In<&F, M>`, `Deserialize` for
/// `In<F, M>`.
struct In<F, M>(F, PhantomData<M>);

impl<F: Field, M: Form> Serialize for In<&F, M> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        M::serialize(self.0, serializer)
    }
}

impl<'de, F: Field, M: Form> Deserialize<'de> for In<F, M> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        M::deserialize(deserializer).map(|x| In(x, PhantomData))
    }
}

impl<'a, F, M> In<&'a F, M> {
    /// The element `x`, to be written in the form `M`.
    fn new(x: &'a F) -> Self {
        In(x, PhantomData)
    }
}

/// `Field` for a container of fields, by its two functions generic over the form of the
/// elements.
macro_rules! container_field {
    ($container:ty, $serialize:ident, $deserialize:ident) => {
        impl<F: Field> sealed::Sealed for $container {}

        impl<F: Field> Field for $container {
            fn serialize_value<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                $serialize::<F, ValueForm, S>(self, serializer)
            }

            fn deserialize_value<'de, D: Deserializer<'de>>(
                deserializer: D,
            ) -> Result<Self, D::Error> {
                $deserialize::<F, ValueForm, D>(deserializer)
            }

            fn serialize_bits<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                $serialize::<F, BitsForm, S>(self, serializer)
            }

            fn deserialize_bits<'de, D: Deserializer<'de>>(
                deserializer: D,
            ) -> Result<Self, D::Error> {
                $deserialize::<F, BitsForm, D>(deserializer)
            }
        }
    };
}

container_field!(Option<F>, serialize_option, deserialize_option);
#[cfg(feature = "alloc")]
container_field!(alloc::vec::Vec<F>, serialize_vec, deserialize_vec);

/// Writes an `Option` whose content has the form `M`.
fn serialize_option<F: Field, M: Form, S: Serializer>(
    x: &Option<F>,
    serializer: S,
) -> Result<S::Ok, S::Error> {
    match x {
        Some(x) => serializer.serialize_some(&In::<&F, M>::new(x)),
        None => serializer.serialize_none(),
    }
}

/// Reads an `Option` whose content has the form `M`.
fn deserialize_option<'de, F: Field, M: Form, D: Deserializer<'de>>(
    deserializer: D,
) -> Result<Option<F>, D::Error> {
    Ok(Option::<In<F, M>>::deserialize(deserializer)?.map(|x| x.0))
}

/// Writes a `Vec` whose elements have the form `M`.
#[cfg(feature = "alloc")]
fn serialize_vec<F: Field, M: Form, S: Serializer>(
    x: &[F],
    serializer: S,
) -> Result<S::Ok, S::Error> {
    serializer.collect_seq(x.iter().map(In::<&F, M>::new))
}

/// Reads a `Vec` whose elements have the form `M`.
#[cfg(feature = "alloc")]
fn deserialize_vec<'de, F: Field, M: Form, D: Deserializer<'de>>(
    deserializer: D,
) -> Result<alloc::vec::Vec<F>, D::Error> {
    deserializer.deserialize_seq(VecVisitor::<F, M>(PhantomData))
}

/// Reads a sequence of elements of the form `M` into a `Vec` (serde's own `Vec` impl needs
/// serde's `alloc` feature, which this crate's `alloc` does not turn on).
#[cfg(feature = "alloc")]
struct VecVisitor<F, M>(PhantomData<(F, M)>);

#[cfg(feature = "alloc")]
impl<'de, F: Field, M: Form> Visitor<'de> for VecVisitor<F, M> {
    type Value = alloc::vec::Vec<F>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a sequence")
    }

    fn visit_seq<A: de::SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        // A length from the input is capped, so a forged one cannot reserve a huge block.
        let mut out = alloc::vec::Vec::with_capacity(seq.size_hint().unwrap_or(0).min(4096));
        while let Some(x) = seq.next_element::<In<F, M>>()? {
            out.push(x.0);
        }
        Ok(out)
    }
}
