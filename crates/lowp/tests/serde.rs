//! serde: the default form (the bits) against the `half` crate's `f16`/`bf16` and the `float8`
//! crate's `F8E4M3`/`F8E5M2` on every bit pattern, both ways, in JSON and bincode; `half`'s
//! adapters `serialize_as_f32`/`serialize_as_string`; the value form (`lowp::serde::as_value`);
//! and every difference from `half` and `float8` that `lowp::serde`'s docs list.
//!
//! `cargo test -p lowp --all-features --test serde` (or `--features serde`).

#![cfg(feature = "serde")]

use lowp::serde::Field;
use lowp::{
    LowpFloat, Rounding, bf16, f4e2m1fn, f6e2m3fn, f6e3m2fn, f8e4m3fn, f8e5m2, f8e8m0fnu, f16,
};
use serde::de::value::{
    Error as ValueError, F32Deserializer, F64Deserializer, I128Deserializer, StrDeserializer,
    U8Deserializer, U16Deserializer, U128Deserializer,
};
use serde::de::{DeserializeOwned, IntoDeserializer};
use serde::{Deserialize, Serialize, Serializer};
use std::str::FromStr;

#[macro_use]
mod common;

fn is_nan<T: LowpFloat>(x: T) -> bool {
    x.to_f64().is_nan()
}

/// Every bit pattern of `T`.
fn every_value<T: LowpFloat>() -> impl Iterator<Item = T> {
    (0..1u32 << T::FORMAT.total_bits()).map(T::from_bits_u32)
}

fn json<T: Serialize + ?Sized>(x: &T) -> String {
    serde_json::to_string(x).unwrap()
}

fn bincode<T: Serialize + ?Sized>(x: &T) -> Vec<u8> {
    bincode::serialize(x).unwrap()
}

/// `x` in the value form, `#[serde(with = "lowp::serde::as_value")]`.
#[derive(Serialize, Deserialize, Debug)]
#[serde(transparent)]
struct Value<T: Field>(#[serde(with = "lowp::serde::as_value")] T);

/// `half`'s two adapters, on whichever type has them.
trait Adapters {
    fn as_f32<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error>;
    fn as_string<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error>;
}

macro_rules! impl_adapters {
    ($t:ty) => {
        impl Adapters for $t {
            fn as_f32<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                self.serialize_as_f32(s)
            }
            fn as_string<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                self.serialize_as_string(s)
            }
        }
    };
}

macro_rules! impl_lowp_adapters {
    ($t:ident) => {
        impl_adapters!(lowp::$t);
    };
}

impl_adapters!(half::f16);
impl_adapters!(half::bf16);
lowp::for_each_format!(impl_lowp_adapters);

/// `x` written by its `serialize_as_f32`.
struct AsF32<'a, T>(&'a T);

impl<T: Adapters> Serialize for AsF32<'_, T> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.0.as_f32(s)
    }
}

/// `x` written by its `serialize_as_string`.
struct AsString<'a, T>(&'a T);

impl<T: Adapters> Serialize for AsString<'_, T> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.0.as_string(s)
    }
}

// ---------------------------------------------------------------------------------------------
// The default form against `half` and `float8`, every bit pattern

/// The `half` and `float8` types, by their bits.
trait TheirBits {
    fn from_u32(bits: u32) -> Self;
    fn to_u32(&self) -> u32;
}

macro_rules! their_bits {
    ($($t:ty: $bits:ty),*) => {$(
        impl TheirBits for $t {
            fn from_u32(bits: u32) -> Self {
                <$t>::from_bits(bits as $bits)
            }
            fn to_u32(&self) -> u32 {
                self.to_bits().into()
            }
        }
    )*};
}

their_bits!(half::f16: u16, half::bf16: u16, float8::F8E4M3: u8, float8::F8E5M2: u8);

/// For every bit pattern: lowp's `L` and the other crate's `H` write the same JSON (the bits as
/// an integer) and the same bincode bytes, and each reads what the other wrote with the same
/// bits, NaNs included.
fn same_as<H, L>()
where
    H: TheirBits + Serialize + DeserializeOwned,
    L: LowpFloat + Serialize + DeserializeOwned,
{
    let name = L::FORMAT.name;
    for b in 0..1u32 << L::FORMAT.total_bits() {
        let h = H::from_u32(b);
        let l = L::from_bits_u32(b);

        let (h_json, l_json) = (json(&h), json(&l));
        assert_eq!(h_json, b.to_string(), "{name} {b:#x}");
        assert_eq!(l_json, h_json, "{name} {b:#x}");
        let (h_bin, l_bin) = (bincode(&h), bincode(&l));
        assert_eq!(l_bin, h_bin, "{name} {b:#x}");

        // Written by the other crate, read by lowp.
        let read: L = serde_json::from_str(&h_json).unwrap();
        assert_eq!(read.to_bits_u32(), b, "{name} {h_json}");
        let read: L = bincode::deserialize(&h_bin).unwrap();
        assert_eq!(read.to_bits_u32(), b, "{name} {h_bin:?}");
        // Written by lowp, read by the other crate.
        let read: H = serde_json::from_str(&l_json).unwrap();
        assert_eq!(read.to_u32(), b, "{name} {l_json}");
        let read: H = bincode::deserialize(&l_bin).unwrap();
        assert_eq!(read.to_u32(), b, "{name} {l_bin:?}");
    }
}

#[test]
fn every_f16_pattern_is_written_as_half_writes_it_and_read_back_by_both() {
    same_as::<half::f16, f16>();
}

#[test]
fn every_bf16_pattern_is_written_as_half_writes_it_and_read_back_by_both() {
    same_as::<half::bf16, bf16>();
}

#[test]
fn every_fp8_pattern_is_written_as_float8_writes_it_and_read_back_by_both() {
    same_as::<float8::F8E4M3, f8e4m3fn>();
    same_as::<float8::F8E5M2, f8e5m2>();
}

/// Every pattern of `T` in the default form: JSON is the integer, bincode the 2 or 1 bytes,
/// CBOR the integer, and each reads back with the same bits, NaNs included.
fn default_round_trip<T: LowpFloat + Serialize + DeserializeOwned>() {
    let name = T::FORMAT.name;
    let bytes = if T::FORMAT.total_bits() > 8 { 2 } else { 1 };
    for x in every_value::<T>() {
        let b = x.to_bits_u32();
        let text = json(&x);
        assert_eq!(text, b.to_string(), "{name}");
        let back: T = serde_json::from_str(&text).unwrap();
        assert_eq!(back.to_bits_u32(), b, "{name} {text}");

        let bin = bincode(&x);
        assert_eq!(bin, b.to_le_bytes()[..bytes], "{name} {b:#x}");
        let back: T = bincode::deserialize(&bin).unwrap();
        assert_eq!(back.to_bits_u32(), b, "{name} {bin:?}");

        let mut cbor = Vec::new();
        ciborium::into_writer(&x, &mut cbor).unwrap();
        let back: T = ciborium::from_reader(&cbor[..]).unwrap();
        assert_eq!(back.to_bits_u32(), b, "{name} {cbor:?}");
        let as_int: u32 = ciborium::from_reader(&cbor[..]).unwrap();
        assert_eq!(as_int, b, "{name}: CBOR holds the integer");
    }
}

#[test]
fn every_pattern_of_every_type_round_trips_in_the_default_form() {
    for_all_formats!(T => { default_round_trip::<T>(); });
}

// ---------------------------------------------------------------------------------------------
// What the default form reads

/// The message of the error for an integer that is no bit pattern of `T`.
fn out_of_range_message<T: LowpFloat>() -> String {
    let max = (1u32 << T::FORMAT.total_bits()) - 1;
    format!(
        "expected the bits of {}, an integer from 0 to {max}",
        T::FORMAT.name
    )
}

/// Integers above the largest pattern, negative ones and huge ones are errors in JSON, in
/// bincode (where a byte can be out of range: FP6 and FP4) and from bare integers; none is
/// masked into range.
fn out_of_range_bits_are_errors<T: LowpFloat + DeserializeOwned + std::fmt::Debug>() {
    let name = T::FORMAT.name;
    let expected = out_of_range_message::<T>();
    let max = (1u64 << T::FORMAT.total_bits()) - 1;
    let too_big = (max + 1..max + 300).chain([70000, 300, 1 << 32, u64::MAX]);
    let too_big = too_big.filter(|&n| n > max).map(i128::from);
    let negative = [-1i128, -2, -(max as i128), i64::MIN.into()];
    for n in too_big.chain(negative) {
        let e = serde_json::from_str::<T>(&n.to_string())
            .unwrap_err()
            .to_string();
        assert!(
            e.contains(&format!("integer `{n}`, {expected}")),
            "{name} {n}: {e}"
        );
    }
    if max < 255 {
        for byte in max as u8 + 1..=255 {
            let e = bincode::deserialize::<T>(&[byte]).unwrap_err().to_string();
            assert!(
                e.contains(&format!("integer `{byte}`, {expected}")),
                "{name}: {e}"
            );
        }
    }
    let d: U128Deserializer<ValueError> = (1u128 << 100).into_deserializer();
    let e = T::deserialize(d).unwrap_err().to_string();
    assert!(e.contains(&expected), "{name}: {e}");
    let d: I128Deserializer<ValueError> = (-1i128 << 100).into_deserializer();
    let e = T::deserialize(d).unwrap_err().to_string();
    assert!(e.contains(&expected), "{name}: {e}");
    // The largest pattern itself is read.
    let top: T = serde_json::from_str(&max.to_string()).unwrap();
    assert_eq!(u64::from(top.to_bits_u32()), max, "{name}");
}

#[test]
fn integers_that_are_no_bit_pattern_are_errors_as_in_half_and_float8() {
    for_all_formats!(T => { out_of_range_bits_are_errors::<T>(); });
    // half and float8 read a u16/u8: the same integers are errors there too.
    assert!(serde_json::from_str::<half::f16>("70000").is_err());
    assert!(serde_json::from_str::<half::bf16>("-1").is_err());
    assert!(serde_json::from_str::<float8::F8E4M3>("300").is_err());
    assert!(bincode::deserialize::<f4e2m1fn>(&[16]).is_err());
    assert_eq!(
        bincode::deserialize::<f4e2m1fn>(&[15]).unwrap().to_bits(),
        15
    );
}

#[test]
fn floats_and_strings_are_values_in_the_default_form_where_half_rejects_them() {
    let one = f16::from_f32(1.0);
    for text in ["15360", "1.0", "1e0", "\"1\"", "\"1.0\"", "\"+1e0\""] {
        assert_eq!(serde_json::from_str::<f16>(text).unwrap(), one, "{text}");
    }
    let x: f16 = serde_json::from_str("1.5").unwrap();
    assert_eq!(x.to_f32(), 1.5);
    let x: f16 = serde_json::from_str("1e4").unwrap();
    assert_eq!(x.to_f32(), 10000.0);
    // serde_json hands `-0` over as a float: the value -0.0.
    let x: f16 = serde_json::from_str("-0").unwrap();
    assert_eq!(x.to_bits(), 0x8000);
    let x: f8e4m3fn = serde_json::from_str("\"0.1\"").unwrap();
    assert_eq!(x, f8e4m3fn::from_f64(0.1));
    let x: f8e4m3fn = serde_json::from_str("465.0").unwrap();
    assert!(is_nan(x), "overflow as in from_f64");
    assert!(serde_json::from_str::<bf16>("\"NaN\"").unwrap().is_nan());
    let x: f8e5m2 = serde_json::from_str("\"-inf\"").unwrap();
    assert_eq!(x, f8e5m2::NEG_INFINITY);
    let x: f8e8m0fnu = serde_json::from_str("0.0").unwrap();
    assert!(is_nan(x), "E8M0 has no zero");
    // Strings round once from the decimal, floats once from the f64.
    let x: f16 = serde_json::from_str("\"1.00048828125000000000000001\"").unwrap();
    assert_eq!(x.to_bits(), 0x3c01);
    let x: bf16 = serde_json::from_str("1.0039062500009095").unwrap();
    assert_eq!(x.to_bits(), 0x3f81);

    // half and float8 read only a u16/u8 there.
    for text in ["1.5", "1e4", "-0", "\"1.5\"", "\"NaN\""] {
        let e = serde_json::from_str::<half::f16>(text)
            .unwrap_err()
            .to_string();
        assert!(e.contains("expected u16"), "{text}: {e}");
        let e = serde_json::from_str::<float8::F8E4M3>(text)
            .unwrap_err()
            .to_string();
        assert!(e.contains("expected u8"), "{text}: {e}");
    }

    // What is neither a number nor a numeric string is an error.
    for text in [
        "null",
        "true",
        "\"\"",
        "\"abc\"",
        "\"0x3c00\"",
        "[1]",
        "{}",
        "\"1 \"",
    ] {
        let e = serde_json::from_str::<f16>(text).unwrap_err().to_string();
        assert!(e.contains("expected the bits of f16"), "{text}: {e}");
    }
}

#[test]
fn a_bare_integer_is_the_bits_where_half_and_float8_reject_it() {
    let d: U16Deserializer<ValueError> = 0x3c00u16.into_deserializer();
    assert_eq!(f16::deserialize(d).unwrap().to_bits(), 0x3c00);
    let d: U16Deserializer<ValueError> = 0x3c00u16.into_deserializer();
    let e = half::f16::deserialize(d).unwrap_err().to_string();
    assert!(e.contains("expected tuple struct f16"), "{e}");
    let d: U8Deserializer<ValueError> = 0x38u8.into_deserializer();
    assert_eq!(f8e4m3fn::deserialize(d).unwrap().to_f32(), 1.0);
    let d: U8Deserializer<ValueError> = 0x38u8.into_deserializer();
    assert!(float8::F8E4M3::deserialize(d).is_err());
    let d: U8Deserializer<ValueError> = 0x10u8.into_deserializer();
    assert!(f4e2m1fn::deserialize(d).is_err());
}

// ---------------------------------------------------------------------------------------------
// Where half rounds twice and lowp once, and float8 saturates

/// `H` read from the value deserializer `d` (which does not wrap a newtype's content, so half's
/// `visit_f64`/`visit_str`/`visit_f32` are reached).
fn read<'de, T: Deserialize<'de>, D: serde::Deserializer<'de, Error = ValueError>>(d: D) -> T {
    T::deserialize(d).unwrap()
}

#[test]
fn half_rounds_floats_and_strings_twice_where_lowp_rounds_once() {
    // 1 + 2^-11 + 2^-40: above the midpoint of the f16 values 1 and 1 + 2^-10.
    let x = 1.0 + 2f64.powi(-11) + 2f64.powi(-40);
    let d = || -> F64Deserializer<ValueError> { x.into_deserializer() };
    assert_eq!(read::<half::f16, _>(d()).to_bits(), 0x3c00);
    assert_eq!(read::<f16, _>(d()).to_bits(), 0x3c01);
    assert_eq!(f16::from_f64(x).to_bits(), 0x3c01);
    // 1 + 2^-8 + 2^-40: the same for bf16 (half cuts the f64's 32 low bits).
    let x = 1.0 + 2f64.powi(-8) + 2f64.powi(-40);
    let d = || -> F64Deserializer<ValueError> { x.into_deserializer() };
    assert_eq!(read::<half::bf16, _>(d()).to_bits(), 0x3f80);
    assert_eq!(read::<bf16, _>(d()).to_bits(), 0x3f81);
    // A string just above the f16 midpoint: half parses an f32 (the midpoint) first.
    let s = "1.00048828125000000000000001";
    let d = || -> StrDeserializer<ValueError> { s.into_deserializer() };
    assert_eq!(read::<half::f16, _>(d()).to_bits(), 0x3c00);
    assert_eq!(read::<f16, _>(d()).to_bits(), 0x3c01);
    // f32's shortest decimal of the f32 midpoint 1 + 2^-11 lies above it.
    let s = (1.0f32 + 2f32.powi(-11)).to_string();
    assert_eq!(s, "1.0004883");
    let d = || -> StrDeserializer<ValueError> { s.as_str().into_deserializer() };
    assert_eq!(read::<half::f16, _>(d()).to_bits(), 0x3c00);
    assert_eq!(read::<f16, _>(d()).to_bits(), 0x3c01);
    // An f32 NaN with a payload: half's bf16 keeps the payload's top bits, lowp's bf16 gives
    // its canonical NaN of that sign (its f16 keeps the payload like half's).
    let nan = f32::from_bits(0x7fa0_0000);
    let d = || -> F32Deserializer<ValueError> { nan.into_deserializer() };
    assert_eq!(read::<half::bf16, _>(d()).to_bits(), 0x7fe0);
    assert_eq!(read::<bf16, _>(d()).to_bits(), 0x7fc0);
    assert_eq!(read::<half::f16, _>(d()).to_bits(), 0x7f00);
    assert_eq!(read::<f16, _>(d()).to_bits(), 0x7f00);
}

/// The neighbour of the `T` midpoint `x` on the side of the decimal `s`, or `None` if `x` is no
/// midpoint of `T` (or `s` is too close to `x` to tell the side in f64).
fn side_of_midpoint<T: LowpFloat>(x: f32, s: &str) -> Option<T> {
    let lo = T::from_f32_round(x, Rounding::TowardNegative);
    let hi = T::from_f32_round(x, Rounding::TowardPositive);
    let mid = (lo.to_f64() + hi.to_f64()) / 2.0;
    let d = f64::from_str(s).unwrap();
    if mid != f64::from(x) || d == mid {
        return None;
    }
    Some(if d > mid { hi } else { lo })
}

#[test]
fn f32_values_and_their_strings_read_alike_in_half_and_lowp_but_at_midpoints() {
    // Every 61st f32 (all exponents, many NaNs): half's and lowp's visit_f32 agree (both round
    // an f32 once) but for bf16's NaN payloads.
    for b in (0..=u32::MAX).step_by(61) {
        let x = f32::from_bits(b);
        let d = || -> F32Deserializer<ValueError> { x.into_deserializer() };
        assert_eq!(
            read::<half::f16, _>(d()).to_bits(),
            read::<f16, _>(d()).to_bits()
        );
        let (h, l) = (read::<half::bf16, _>(d()), read::<bf16, _>(d()));
        if x.is_nan() {
            assert!(h.is_nan() && l.is_nan() && h.is_sign_negative() == l.is_sign_negative());
            assert_eq!(l.to_bits() & 0x7fff, 0x7fc0, "{b:#x}");
        } else {
            assert_eq!(h.to_bits(), l.to_bits(), "{b:#x}");
        }
    }
    // f32's Display of an f32 (its shortest decimal): half rounds the f32 it parses, lowp the
    // decimal. They differ exactly where the f32 is a midpoint of the format and the decimal
    // is not: there lowp gives the neighbour on the decimal's side. Every 4099th f32, and every
    // midpoint between finite f16 values (each is an f32).
    let f16_midpoints = (0..0x7bffu16).flat_map(|b| {
        let m = (f16::from_bits(b).to_f32() + f16::from_bits(b + 1).to_f32()) / 2.0;
        [m.to_bits(), (-m).to_bits()]
    });
    let mut differ = [0; 2];
    for b in (0..=u32::MAX).step_by(4099).chain(f16_midpoints) {
        let x = f32::from_bits(b);
        if x.is_nan() {
            continue;
        }
        let s = x.to_string();
        let d = || -> StrDeserializer<ValueError> { s.as_str().into_deserializer() };
        let (h, l) = (read::<half::f16, _>(d()), read::<f16, _>(d()));
        assert_eq!(h.to_bits(), f16::from_f32(x).to_bits(), "{s}");
        match side_of_midpoint::<f16>(x, &s) {
            Some(expected) if expected.to_bits() != h.to_bits() => {
                assert_eq!(l.to_bits(), expected.to_bits(), "{s}");
                differ[0] += 1;
            }
            _ => assert_eq!(l.to_bits(), h.to_bits(), "{s}"),
        }
        let (h, l) = (read::<half::bf16, _>(d()), read::<bf16, _>(d()));
        match side_of_midpoint::<bf16>(x, &s) {
            Some(expected) if expected.to_bits() != h.to_bits() => {
                assert_eq!(l.to_bits(), expected.to_bits(), "{s}");
                differ[1] += 1;
            }
            _ => assert_eq!(l.to_bits(), h.to_bits(), "{s}"),
        }
    }
    assert!(
        differ[0] > 1000 && differ[1] > 0,
        "the midpoints were reached: {differ:?}"
    );
}

#[test]
fn float8_saturates_values_where_lowp_rounds_as_from_f64() {
    let f64s = |x: f64| -> F64Deserializer<ValueError> { x.into_deserializer() };
    let strs = |s: &'static str| -> StrDeserializer<ValueError> { s.into_deserializer() };
    for x in [1e9, f64::INFINITY] {
        assert_eq!(read::<float8::F8E4M3, _>(f64s(x)).to_bits(), 0x7e);
        assert_eq!(read::<f8e4m3fn, _>(f64s(x)).to_bits(), 0x7f);
        assert_eq!(read::<float8::F8E5M2, _>(f64s(x)).to_bits(), 0x7b);
        assert_eq!(read::<f8e5m2, _>(f64s(x)).to_bits(), 0x7c);
        assert_eq!(read::<float8::F8E4M3, _>(f64s(-x)).to_bits(), 0xfe);
        assert_eq!(read::<f8e4m3fn, _>(f64s(-x)).to_bits(), 0xff);
    }
    assert_eq!(read::<float8::F8E4M3, _>(strs("inf")).to_bits(), 0x7e);
    assert_eq!(read::<f8e4m3fn, _>(strs("inf")).to_bits(), 0x7f);
    assert_eq!(read::<float8::F8E5M2, _>(strs("-1e9")).to_bits(), 0xfb);
    assert_eq!(read::<f8e5m2, _>(strs("-1e9")).to_bits(), 0xfc);
    // Below the overflow thresholds (464 and 61440) the two agree: every 1021st f32.
    for b in (0..=u32::MAX).step_by(1021) {
        let x = f32::from_bits(b);
        let d = || -> F32Deserializer<ValueError> { x.into_deserializer() };
        if x.abs() < 464.0 {
            let (f, l) = (read::<float8::F8E4M3, _>(d()), read::<f8e4m3fn, _>(d()));
            assert_eq!(f.to_bits(), l.to_bits(), "{x:e}");
        }
        if x.abs() < 61440.0 {
            let (f, l) = (read::<float8::F8E5M2, _>(d()), read::<f8e5m2, _>(d()));
            assert_eq!(f.to_bits(), l.to_bits(), "{x:e}");
        }
    }
}

// ---------------------------------------------------------------------------------------------
// half's adapters

/// For every pattern, lowp's `serialize_as_f32`/`serialize_as_string` write what half's do
/// (JSON text and bincode bytes), lowp reads the JSON back (half cannot: it reads a u16), and
/// both crates read the value itself the same way.
fn adapters_as_in_half<H, L>()
where
    H: TheirBits + Adapters + DeserializeOwned,
    L: LowpFloat<Bits = u16> + Adapters + DeserializeOwned + Field,
{
    let name = L::FORMAT.name;
    for b in 0..=u16::MAX {
        let (h, l) = (H::from_u32(b.into()), L::from_bits(b));
        let v = l.to_f32();

        let f32_text = json(&AsF32(&l));
        assert_eq!(f32_text, json(&AsF32(&h)), "{name} {b:#x}");
        assert_eq!(f32_text, json(&v), "{name} {b:#x}");
        assert_eq!(bincode(&AsF32(&l)), bincode(&AsF32(&h)), "{name} {b:#x}");
        let string_text = json(&AsString(&l));
        assert_eq!(string_text, json(&AsString(&h)), "{name} {b:#x}");
        assert_eq!(string_text, format!("\"{v}\""), "{name} {b:#x}");
        assert_eq!(
            bincode(&AsString(&l)),
            bincode(&AsString(&h)),
            "{name} {b:#x}"
        );

        // lowp reads both back; NaN and the infinities are `null` in the f32 form.
        let from_f32 = serde_json::from_str::<L>(&f32_text);
        let from_string: L = serde_json::from_str(&string_text).unwrap();
        if v.is_finite() {
            assert_eq!(from_f32.unwrap().to_bits(), b, "{name} {f32_text}");
        } else {
            assert_eq!(f32_text, "null");
            assert!(from_f32.is_err(), "{name} {b:#x}");
        }
        if v.is_nan() {
            assert!(is_nan(from_string), "{name} {string_text}");
        } else {
            assert_eq!(from_string.to_bits(), b, "{name} {string_text}");
        }
        // half reads neither from JSON.
        assert!(serde_json::from_str::<H>(&string_text).is_err());
        assert!(serde_json::from_str::<H>(&f32_text).is_err());

        // Handed the value itself, both read the same bits (NaN payloads are bf16's one
        // difference, checked above; here every NaN is f32's own form of the pattern).
        let d = || -> F32Deserializer<ValueError> { v.into_deserializer() };
        let (hv, lv) = (read::<H, _>(d()), read::<L, _>(d()));
        if !v.is_nan() {
            assert_eq!(hv.to_u32(), u32::from(b), "{name} {b:#x}");
            assert_eq!(lv.to_bits(), b, "{name} {b:#x}");
        }
        let s = v.to_string();
        let d = || -> StrDeserializer<ValueError> { s.as_str().into_deserializer() };
        let (hs, ls) = (read::<H, _>(d()), read::<L, _>(d()));
        assert_eq!(hs.to_u32(), ls.to_bits_u32(), "{name} {s}");

        // In bincode, the f32 form is read with as_value.
        let back: Value<L> = bincode::deserialize(&bincode(&AsF32(&h))).unwrap();
        if !v.is_nan() {
            assert_eq!(back.0.to_bits(), b, "{name} {b:#x}");
        } else {
            assert!(is_nan(back.0));
        }
    }
}

#[test]
fn half_adapters_write_as_in_half_on_every_f16_and_bf16_pattern() {
    adapters_as_in_half::<half::f16, f16>();
    adapters_as_in_half::<half::bf16, bf16>();
}

/// Every pattern of `T`: `serialize_as_f32` writes the f32 (a NaN quiet, as half's `to_f32`
/// makes it), `serialize_as_string` f32's Display, and the default `Deserialize` and `as_value` read both back in JSON (but NaN's
/// sign and payload, and the non-finite f32 form, which is `null`).
fn adapters_round_trip<T: LowpFloat + Adapters + DeserializeOwned + Field>() {
    let name = T::FORMAT.name;
    for x in every_value::<T>() {
        let v = x.to_f32();
        let f32_text = json(&AsF32(&x));
        assert_eq!(f32_text, json(&v), "{name}");
        let string_text = json(&AsString(&x));
        assert_eq!(string_text, format!("\"{v}\""), "{name}");
        let quiet = if v.is_nan() {
            f32::from_bits(v.to_bits() | 1 << 22)
        } else {
            v
        };
        assert_eq!(
            bincode(&AsF32(&x)),
            bincode(&quiet),
            "{name} {:#x}",
            x.to_bits_u32()
        );
        let reads = [
            serde_json::from_str::<T>(&f32_text).ok(),
            serde_json::from_str::<Value<T>>(&f32_text)
                .ok()
                .map(|v| v.0),
            serde_json::from_str::<T>(&string_text).ok(),
            serde_json::from_str::<Value<T>>(&string_text)
                .ok()
                .map(|v| v.0),
        ];
        for (i, back) in reads.into_iter().enumerate() {
            let string_form = i >= 2;
            match back {
                Some(back) if v.is_nan() => assert!(is_nan(back) && string_form, "{name} {i}"),
                Some(back) => assert_eq!(back.to_bits_u32(), x.to_bits_u32(), "{name} {v} {i}"),
                None => assert!(!v.is_finite() && !string_form, "{name} {v} {i}"),
            }
        }
    }
}

#[test]
fn adapters_on_every_pattern_of_every_type() {
    for_all_formats!(T => { adapters_round_trip::<T>(); });
}

// ---------------------------------------------------------------------------------------------
// The value form, `as_value`

/// JSON: finite values are numbers holding the exact value, the infinities are `"inf"` and
/// `"-inf"`, NaN is `"NaN"`; everything reads back bit for bit except NaN, which reads back
/// as a NaN.
fn value_json_round_trip<T: LowpFloat + Field + std::fmt::Debug>() {
    let name = T::FORMAT.name;
    for x in every_value::<T>() {
        let text = json(&Value(x));
        let back: Value<T> = serde_json::from_str(&text)
            .unwrap_or_else(|e| panic!("{name}: {text} does not read back: {e}"));
        let v = x.to_f64();
        if v.is_nan() {
            assert_eq!(text, "\"NaN\"", "{name} {:#x}", x.to_bits_u32());
            assert!(is_nan(back.0), "{name} {text}");
            continue;
        }
        if v.is_infinite() {
            assert_eq!(text, if v > 0.0 { "\"inf\"" } else { "\"-inf\"" });
        } else {
            // A JSON number whose value is exactly the f32 (shortest digits of it).
            assert_eq!(text, json(&x.to_f32()), "{name}");
            assert!(serde_json::to_value(Value(x)).unwrap().is_number());
        }
        assert_eq!(back.0.to_bits_u32(), x.to_bits_u32(), "{name} {text}");
    }
}

#[test]
fn every_pattern_of_every_type_round_trips_as_value_in_json() {
    for_all_formats!(T => { value_json_round_trip::<T>(); });
}

/// Binary formats (bincode, CBOR) carry the f32 itself, NaN and infinity included: every
/// pattern reads back bit for bit, except NaN, which keeps its sign and comes back as
/// `from_f32` makes it: in f16 with its payload, quieted; elsewhere the canonical NaN of its
/// sign.
fn value_binary_round_trip<T: LowpFloat + Field + std::fmt::Debug>() {
    let fmt = T::FORMAT;
    for x in every_value::<T>() {
        let bin = bincode(&Value(x));
        assert_eq!(bin, x.to_f32().to_le_bytes(), "{}", fmt.name);
        let from_bincode: Value<T> = bincode::deserialize(&bin).unwrap();
        let mut cbor = Vec::new();
        ciborium::into_writer(&Value(x), &mut cbor).unwrap();
        let from_cbor: Value<T> = ciborium::from_reader(&cbor[..]).unwrap();
        let mut expected = x.to_bits_u32();
        if is_nan(x) && fmt.name == "f16" {
            expected |= 1 << (fmt.mantissa_bits - 1);
        } else if is_nan(x) {
            expected = expected & fmt.sign_mask() | fmt.nan_bits().unwrap();
        }
        for back in [from_bincode, from_cbor] {
            assert_eq!(
                back.0.to_bits_u32(),
                expected,
                "{} {:#x}",
                fmt.name,
                x.to_bits_u32()
            );
        }
    }
}

#[test]
fn every_pattern_of_every_type_round_trips_as_value_in_bincode_and_cbor_nan_included() {
    for_all_formats!(T => { value_binary_round_trip::<T>(); });
}

fn value<T: Field>(text: &str) -> T {
    serde_json::from_str::<Value<T>>(text).unwrap().0
}

#[test]
fn as_value_json_numbers_round_once_from_f64() {
    // 1 + 2^-8 + 2^-40: just above a bf16 tie. Through f32 it would be the tie itself and
    // round down to 1.0 (0x3f80); rounded once from the f64 it goes up.
    assert_eq!(value::<bf16>("1.0039062500009095").to_bits(), 0x3f81);
    assert_eq!(value::<f16>("0.1").to_bits(), 0x2e66);
    assert_eq!(value::<f16>("-2.5e-8").to_bits(), 0x8000); // below half the smallest subnormal
    // Overflow behaves as from_f64.
    assert_eq!(value::<f16>("65520").to_f64(), f64::INFINITY);
    assert_eq!(value::<f8e4m3fn>("464").to_bits(), 0x7e); // the tie rounds to even: MAX
    assert!(is_nan(value::<f8e4m3fn>("465")));
    assert_eq!(value::<f6e2m3fn>("1e30").to_f64(), 7.5);
    // f8e8m0fnu has no zero and no negative values.
    assert!(is_nan(value::<f8e8m0fnu>("0")));
    assert!(is_nan(value::<f8e8m0fnu>("-1")));
    assert_eq!(value::<f8e8m0fnu>("3").to_f64(), 4.0);
}

#[test]
fn as_value_integers_round_once() {
    // 2^63 + 2^55 + 1 is just above the bf16 tie between 2^63 and 2^63 + 2^56; as an f64 it
    // would be the tie (2^63 + 2^55) and round to even, down.
    let n: u64 = (1 << 63) + (1 << 55) + 1;
    assert_eq!((n as f64) as u64, (1 << 63) + (1 << 55));
    let x: bf16 = value(&n.to_string());
    assert_eq!(x.to_f64(), ((1u64 << 63) + (1 << 56)) as f64);
    // Negative, through i64: -(2^62 + 2^54 + 1).
    let m: u64 = (1 << 62) + (1 << 54) + 1;
    let x: bf16 = value(&format!("-{m}"));
    assert_eq!(x.to_f64(), -(((1u64 << 62) + (1 << 55)) as f64));

    // The same above 64 bits: 2^100 + 2^92 + 1.
    let n: u128 = (1 << 100) + (1 << 92) + 1;
    let d: U128Deserializer<ValueError> = n.into_deserializer();
    assert_eq!(
        lowp::serde::as_value::deserialize::<bf16, _>(d)
            .unwrap()
            .to_bits(),
        0x7181
    );
    let d: I128Deserializer<ValueError> = (-(n as i128)).into_deserializer();
    assert_eq!(
        lowp::serde::as_value::deserialize::<bf16, _>(d)
            .unwrap()
            .to_bits(),
        0xf181
    );
    let d: U128Deserializer<ValueError> = u128::MAX.into_deserializer();
    let x: bf16 = lowp::serde::as_value::deserialize(d).unwrap();
    assert_eq!(x.to_f64(), f64::INFINITY);

    // Small integers are exact, negative ones keep their sign; an integer is never bits.
    for n in -448i64..=448 {
        let x: f8e4m3fn = value(&n.to_string());
        assert_eq!(x.to_bits(), f8e4m3fn::from_f64(n as f64).to_bits(), "{n}");
    }
    assert_eq!(value::<f16>("15360").to_f64(), 15360.0);
}

#[test]
fn as_value_json_strings_parse_with_from_str() {
    // 1 + 2^-11 + 10^-26 is above the f16 tie 1 + 2^-11, so it rounds up to 1 + 2^-10; as a
    // JSON number it would first become the f64 tie and round to even, down to 1.
    let digits = "1.00048828125000000000000001";
    assert_eq!(value::<f16>(digits).to_bits(), 0x3c00);
    assert_eq!(value::<f16>(&format!("\"{digits}\"")).to_bits(), 0x3c01);

    for s in [
        "0.1", "-3.75", "1e-7", "65504", "inf", "-inf", "infinity", "NaN", "nan",
    ] {
        let text = format!("\"{s}\"");
        let (x, expected) = (value::<f16>(&text), f16::from_str(s).unwrap());
        assert!(
            x.to_bits() == expected.to_bits() || is_nan(x) && is_nan(expected),
            "{s}"
        );
        let (x, expected) = (value::<f8e4m3fn>(&text), f8e4m3fn::from_str(s).unwrap());
        assert!(
            x.to_bits() == expected.to_bits() || is_nan(x) && is_nan(expected),
            "{s}"
        );
    }
    assert_eq!(value::<f16>("\"inf\"").to_f64(), f64::INFINITY);
    assert!(is_nan(value::<bf16>("\"NaN\"")));
}

#[test]
fn as_value_rejects_null_bool_and_garbage() {
    for text in ["null", "true", "\"\"", "\"abc\"", "\"0x3c00\"", "[1]", "{}"] {
        let e = serde_json::from_str::<Value<f16>>(text)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("expected a number or a numeric string (f16)"),
            "{text}: {e}"
        );
    }
}

#[test]
fn as_value_and_as_bits_on_option_and_vec_fields() {
    #[derive(Serialize, Deserialize, Debug, PartialEq)]
    struct Fields {
        #[serde(with = "lowp::serde::as_value")]
        values: Vec<f16>,
        #[serde(with = "lowp::serde::as_value")]
        maybe: Option<f8e4m3fn>,
        #[serde(with = "lowp::serde::as_value")]
        nested: Option<Vec<Option<bf16>>>,
        #[serde(with = "lowp::serde::as_bits")]
        bits: Vec<f6e3m2fn>,
        #[serde(with = "lowp::serde::as_bits")]
        maybe_bits: Option<f16>,
        default: Vec<f16>,
    }
    let x = Fields {
        values: vec![
            f16::from_f32(1.0),
            f16::from_f32(-0.0),
            f16::INFINITY,
            f16::NEG_INFINITY,
            f16::from_f32(0.1),
        ],
        maybe: Some(f8e4m3fn::from_f32(-2.5)),
        nested: Some(vec![None, Some(bf16::from_f32(3.0))]),
        bits: vec![f6e3m2fn::from_f32(28.0), f6e3m2fn::from_f32(-0.25)],
        maybe_bits: None,
        default: vec![f16::from_f32(1.0)],
    };
    let text = json(&x);
    assert_eq!(
        text,
        r#"{"values":[1.0,-0.0,"inf","-inf",0.099975586],"maybe":-2.5,"nested":[null,3.0],"bits":[31,36],"maybe_bits":null,"default":[15360]}"#
    );
    assert_eq!(serde_json::from_str::<Fields>(&text).unwrap(), x);
    let bin = bincode(&x);
    assert_eq!(bincode::deserialize::<Fields>(&bin).unwrap(), x);
    // The value form reads the bits form's neighbour as values, and the reverse.
    let y: Fields = serde_json::from_str(
        r#"{"values":[15360],"maybe":null,"nested":null,"bits":[1.5],"maybe_bits":"2","default":[]}"#,
    )
    .unwrap();
    assert_eq!(y.values, [f16::from_f32(15360.0)]);
    assert_eq!((y.maybe, y.nested), (None, None));
    assert_eq!(y.bits, [f6e3m2fn::from_f32(1.5)]);
    assert_eq!(y.maybe_bits, Some(f16::from_f32(2.0)));
    // A NaN element reads back as a NaN.
    let nan: Value<Vec<f16>> = serde_json::from_str(&json(&Value(vec![f16::NAN]))).unwrap();
    assert!(nan.0[0].is_nan());
    // A value written by one type reads into another, rounded once.
    let x: f8e4m3fn = value(&json(&Value(f16::from_f32(0.1))));
    assert_eq!(
        x,
        f8e4m3fn::from_f64(f64::from(f16::from_f32(0.1).to_f32()))
    );
    assert_eq!(
        json(&Value(f8e8m0fnu::from_f32(2f32.powi(-127)))),
        "5.877472e-39"
    );
}
