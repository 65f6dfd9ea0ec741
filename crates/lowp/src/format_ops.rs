//! A [`Format`] used as a value: found by name, and its number type's operations reached
//! through it, on bit patterns, so code that picks a format at run time (a command line, a
//! file's dtype, Python) needs no per-format table of its own.
//!
//! Every method runs the same code as the number types: the rounding engine, classification,
//! stepping, printing and parsing are written once over a `&Format` and the types only forward
//! to them; the slice conversions dispatch to the type's bulk path through
//! [`with_format!`](crate::with_format). Bit patterns are `u32`s holding the format's
//! bits in their low end; bits above [`Format::total_bits`] are ignored.

use crate::format::{Format, formats};
use crate::parse_error::ParseFloatError;
use crate::prelude::LowpSliceExt;
use crate::round::{self, Rounding};
use crate::{LowpFloat, classify, display};
use core::fmt;
use core::num::FpCategory;
use core::str::FromStr;

/// A name that is none of the crate's formats (see [`Format::from_name`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct UnknownFormatError;

impl fmt::Display for UnknownFormatError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("unknown format; valid formats: ")?;
        for (i, format) in Format::ALL.iter().enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            f.write_str(format.name)?;
        }
        f.write_str(" (ml_dtypes names such as float8_e4m3fn also work)")
    }
}

#[cfg(feature = "std")]
impl std::error::Error for UnknownFormatError {}

/// Two slices whose lengths do not fit each other (see [`Format::from_f32_slice`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SliceLengthError {
    /// Elements of the source.
    pub elements: usize,
    /// Length of the destination (bytes or elements, as the method says).
    pub destination: usize,
    /// Length the destination must have.
    pub expected: usize,
}

impl fmt::Display for SliceLengthError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} elements need a destination of length {}, not {}",
            self.elements, self.expected, self.destination
        )
    }
}

#[cfg(feature = "std")]
impl std::error::Error for SliceLengthError {}

impl Format {
    /// Every number format of the crate, in the order `lowp formats` lists them: f16, bf16,
    /// the FP8 formats, E8M0, FP6 and FP4.
    pub const ALL: &'static [Format] = &formats::ALL;

    /// The format called `name`, ignoring case and underscores: the crate's names
    /// (`f8e4m3fn`), ml_dtypes' (`float8_e4m3fn`, `bfloat16`, `float16`) and `half`.
    ///
    /// ```
    /// use lowp::Format;
    /// assert_eq!(Format::from_name("float8_e4m3fn").unwrap().name, "f8e4m3fn");
    /// assert_eq!("BF16".parse::<Format>().unwrap(), lowp::bf16::FORMAT);
    /// assert!(Format::from_name("f7").unwrap_err().to_string().contains("f8e5m2fnuz"));
    /// ```
    pub fn from_name(name: &str) -> Result<Format, UnknownFormatError> {
        crate::format::format_by_name(name)
            .copied()
            .ok_or(UnknownFormatError)
    }

    /// Bytes each value takes in memory and in files: 2 for the 16-bit formats, 1 for the
    /// others (FP6 and FP4 in the low bits of a byte).
    pub const fn storage_bytes(&self) -> usize {
        self.total_bits().div_ceil(8) as usize
    }

    /// The bits of `x` rounded to nearest, ties to even, in one step (no rounding through
    /// f32). Overflow gives infinity where the format has it, NaN where it has only NaN, ±MAX
    /// in the formats with neither (FP6, FP4); NaN gives NaN with the sign and payload the
    /// format's type documents (where there is none, a zero of the opposite sign).
    pub const fn from_f64(&self, x: f64) -> u32 {
        round::from_f64_nearest(self, x, false)
    }

    /// [`Format::from_f64`] of an f32 (the same single rounding).
    pub const fn from_f32(&self, x: f32) -> u32 {
        round::from_f32_nearest(self, x, false)
    }

    /// `x` rounded in `mode`; with `saturate`, overflow and infinities give ±MAX.
    pub const fn from_f64_round(&self, x: f64, mode: Rounding, saturate: bool) -> u32 {
        round::encode(self, round::decode_f64(x), mode, saturate)
    }

    /// The exact value of `bits` (every value of every format is an f64).
    pub const fn to_f64(&self, bits: u32) -> f64 {
        round::to_f64_exact(round::decode(self, bits & self.bits_mask()))
    }

    /// The exact value of `bits` as an f32 (every value of every format is an f32).
    pub const fn to_f32(&self, bits: u32) -> f32 {
        crate::bits::f32_from_bits(round::to_f32_bits(self, bits))
    }

    /// The category of `bits`: NaN, infinite, zero, subnormal or normal.
    pub const fn classify(&self, bits: u32) -> FpCategory {
        classify::classify(self, bits & self.bits_mask())
    }

    /// The bits of the least value greater than `bits`' (IEEE `nextUp`), as the types'
    /// `next_up`: NaN and +inf unchanged; past MAX infinity, or NaN, or the value itself in
    /// formats with neither.
    pub const fn next_up(&self, bits: u32) -> u32 {
        classify::step(self, bits & self.bits_mask(), 1)
    }

    /// The bits of the greatest value less than `bits`' (IEEE `nextDown`), the mirror of
    /// [`Format::next_up`].
    pub const fn next_down(&self, bits: u32) -> u32 {
        classify::step(self, bits & self.bits_mask(), -1)
    }

    /// The decimal string `s` rounded once, directly into the format (as the types'
    /// `FromStr`): `"0.1"`, `"1e-3"`, `"inf"`, `"nan"`.
    pub fn parse(&self, s: &str) -> Result<u32, ParseFloatError> {
        crate::parse::parse_bits(self, s)
    }

    /// `bits` printed as [`Shortest`](crate::Shortest) prints the value: the shortest decimal
    /// that reads back (`0.1`, `65500`, `NaN`, `-inf`, `-0`), honouring width and precision.
    ///
    /// ```
    /// use lowp::Format;
    /// let f16 = Format::from_name("f16").unwrap();
    /// assert_eq!(f16.display(f16.from_f64(0.1)).to_string(), "0.1");
    /// assert_eq!(format!("{:.3}", f16.display(0x3c01)), "1.001");
    /// ```
    pub const fn display(&self, bits: u32) -> impl fmt::Display + '_ {
        Shown { format: self, bits }
    }

    /// The largest finite value.
    pub const fn max_value(&self) -> f64 {
        self.to_f64(self.max_finite_bits())
    }

    /// The smallest positive normal value.
    pub const fn min_positive_value(&self) -> f64 {
        self.to_f64(self.min_positive_normal_bits())
    }

    /// The smallest positive value (a subnormal where the format has subnormals).
    pub const fn min_positive_subnormal_value(&self) -> f64 {
        self.to_f64(self.min_positive_subnormal_bits())
    }

    /// The gap between 1 and the next value, `2^-mantissa_bits` (1 for E8M0).
    pub const fn epsilon(&self) -> f64 {
        // 1 + 2^-mantissa_bits is the next value above 1 in every format (in E8M0, 2).
        crate::bits::f64_from_bits(((1023 - self.mantissa_bits) as u64) << 52)
    }

    /// Rounds `src` to nearest even into `dst`, `storage_bytes()` little-endian bytes per
    /// value, on the type's bulk path (the fastest the CPU has). Overflow and NaN as
    /// [`Format::from_f32`]. `dst` must be exactly `src.len() * storage_bytes()` long.
    ///
    /// ```
    /// use lowp::Format;
    /// let e4m3 = Format::from_name("f8e4m3fn").unwrap();
    /// let mut out = [0u8; 3];
    /// e4m3.from_f32_slice(&[1.0, 448.0, 1e6], &mut out).unwrap();
    /// assert_eq!(out, [0x38, 0x7e, 0x7f]); // 1e6 overflows to NaN: E4M3 has no infinity
    /// ```
    pub fn from_f32_slice(&self, src: &[f32], dst: &mut [u8]) -> Result<(), SliceLengthError> {
        self.check(src.len(), dst.len())?;
        if !typed::from_f32(self, src, dst) {
            let width = self.storage_bytes();
            for (x, out) in src.iter().zip(dst.chunks_exact_mut(width)) {
                out.copy_from_slice(&self.from_f32(*x).to_le_bytes()[..width]);
            }
        }
        Ok(())
    }

    /// The exact values of the little-endian values in `src` (`storage_bytes()` each) into
    /// `dst`, on the type's bulk path. `src` must be exactly `dst.len() * storage_bytes()`
    /// long.
    pub fn to_f32_slice(&self, src: &[u8], dst: &mut [f32]) -> Result<(), SliceLengthError> {
        self.check(dst.len(), src.len())?;
        if !typed::to_f32(self, src, dst) {
            let width = self.storage_bytes();
            for (bytes, out) in src.chunks_exact(width).zip(dst) {
                let mut word = [0u8; 4];
                word[..width].copy_from_slice(bytes);
                *out = self.to_f32(u32::from_le_bytes(word));
            }
        }
        Ok(())
    }

    /// An error unless `bytes` holds exactly `elements` values.
    fn check(&self, elements: usize, bytes: usize) -> Result<(), SliceLengthError> {
        let expected = elements.saturating_mul(self.storage_bytes());
        if bytes == expected {
            Ok(())
        } else {
            Err(SliceLengthError {
                elements,
                destination: bytes,
                expected,
            })
        }
    }
}

impl FromStr for Format {
    type Err = UnknownFormatError;

    /// [`Format::from_name`].
    fn from_str(s: &str) -> Result<Format, UnknownFormatError> {
        Format::from_name(s)
    }
}

impl fmt::Display for Format {
    /// The format's name (`f8e4m3fn`).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad(self.name)
    }
}

/// What [`Format::display`] returns.
struct Shown<'a> {
    format: &'a Format,
    bits: u32,
}

impl fmt::Display for Shown<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let bits = self.bits & self.format.bits_mask();
        let value = self.format.to_f32(bits);
        display::write_value(self.format, bits, value, f, display::Style::Display)
    }
}

/// The slice conversions of each number type, chosen by descriptor.
mod typed {
    use super::*;

    /// Values converted per step: a small buffer of the type on the stack.
    const CHUNK: usize = 512;

    /// `src` into `dst` through `T`'s bulk path.
    fn from_f32_as<T: LowpFloat>(src: &[f32], dst: &mut [u8]) {
        let width = T::FORMAT.storage_bytes();
        let mut buf = [T::from_bits_u32(0); CHUNK];
        for (s, d) in src.chunks(CHUNK).zip(dst.chunks_mut(CHUNK * width)) {
            let typed = &mut buf[..s.len()];
            typed.convert_from_f32_slice(s);
            for (v, out) in typed.iter().zip(d.chunks_exact_mut(width)) {
                out.copy_from_slice(&v.to_bits_u32().to_le_bytes()[..width]);
            }
        }
    }

    /// `src` into `dst` through `T`'s bulk path.
    fn to_f32_as<T: LowpFloat>(src: &[u8], dst: &mut [f32]) {
        let width = T::FORMAT.storage_bytes();
        let mut buf = [T::from_bits_u32(0); CHUNK];
        for (s, d) in src.chunks(CHUNK * width).zip(dst.chunks_mut(CHUNK)) {
            let typed = &mut buf[..d.len()];
            for (v, bytes) in typed.iter_mut().zip(s.chunks_exact(width)) {
                let mut word = [0u8; 4];
                word[..width].copy_from_slice(bytes);
                *v = T::from_bits_u32(u32::from_le_bytes(word));
            }
            typed.convert_to_f32_slice(d);
        }
    }

    /// Converts through the type of `fmt`; false when no type has that format.
    pub(super) fn from_f32(fmt: &Format, src: &[f32], dst: &mut [u8]) -> bool {
        crate::with_format!(fmt, T => {
            from_f32_as::<T>(src, dst);
            true
        }, else => false)
    }

    /// Converts through the type of `fmt`; false when no type has that format.
    pub(super) fn to_f32(fmt: &Format, src: &[u8], dst: &mut [f32]) -> bool {
        crate::with_format!(fmt, T => {
            to_f32_as::<T>(src, dst);
            true
        }, else => false)
    }
}
