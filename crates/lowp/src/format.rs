//! The description of a binary floating-point format.
//!
//! Every number type of this crate is fully described by one [`Format`]: the field widths, the
//! exponent bias, and three policy choices (sign, NaN encoding, subnormals). Everything else,
//! from the largest finite value to the bit pattern of NaN, is *derived* here by `const fn`s, so
//! the constants of a type can never disagree with its conversions.
//!
//! A value with biased exponent field `E` and mantissa field `M` is
//!
//! * `(-1)^s * 2^(E - bias) * (1 + M / 2^m)` when `E > 0` or the format has no subnormals;
//! * `(-1)^s * 2^(1 - bias) * (M / 2^m)` when `E == 0` and the format has subnormals,
//!
//! except for the patterns the NaN encoding and the infinities reserve.

/// How a format spends bit patterns on NaN (and, for [`NanEncoding::Ieee`], on infinities).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum NanEncoding {
    /// Every pattern is a finite number (the MX element types FP6 and FP4). A NaN converts to
    /// a zero of the opposite sign, as in ml_dtypes (see [`crate::f4e2m1fn`]).
    None,
    /// IEEE 754: the all-ones exponent is reserved; mantissa zero is ±infinity, any other
    /// mantissa is NaN, its top mantissa bit being the quiet bit.
    Ieee,
    /// Only the all-ones pattern (of either sign) is NaN; there are no infinities. OCP E4M3
    /// ("fn": finite and NaN) and the unsigned scale type E8M0.
    AllOnes,
    /// The negative-zero pattern (sign bit alone) is the only NaN; there are no infinities and
    /// zero is unsigned ("fnuz": finite, NaN, unsigned zero). Its sign bit is set, so it reads
    /// (and widens) as a negative NaN.
    NegativeZero,
}

/// The complete description of a floating-point format, from which the rounding engine and
/// every constant of the matching number type are derived.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Format {
    /// The name ml_dtypes, PyTorch and MLIR use (`"f8e4m3fn"`, `"bf16"`, ...).
    pub name: &'static str,
    /// Width of the exponent field in bits.
    pub exponent_bits: u32,
    /// Width of the stored mantissa (fraction) field in bits; the precision is one more.
    pub mantissa_bits: u32,
    /// Exponent bias.
    pub bias: i32,
    /// Whether the format has a sign bit (all but E8M0 do).
    pub signed: bool,
    /// Which patterns are NaN or infinite.
    pub nan: NanEncoding,
    /// Whether the zero exponent field holds subnormals (and zero). Without subnormals the zero
    /// field is an ordinary binade and the format has no zero at all (E8M0).
    pub subnormals: bool,
    /// The safetensors dtype lowp-io reads the format's tensors as, and whether it writes them;
    /// `None` where it leaves them as they are (the FNUZ formats, among others).
    pub safetensors: Option<SafetensorsDtype>,
}

/// A format as safetensors files hold it: the dtype's name, and whether lowp-io converts
/// tensors into it or only out of it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct SafetensorsDtype {
    /// The dtype's name in a safetensors header (`"F8_E4M3"`, `"BF16"`).
    pub name: &'static str,
    /// Whether lowp-io writes tensors of this dtype (`lowp convert --to`). Where not, it only
    /// decodes them into wider types: the sub-byte types, which safetensors packs several to a
    /// byte, and E8M0, which only scales the values of other types.
    pub written: bool,
}

impl SafetensorsDtype {
    /// A dtype lowp-io converts tensors into and out of.
    const fn written(name: &'static str) -> Option<SafetensorsDtype> {
        Some(SafetensorsDtype {
            name,
            written: true,
        })
    }

    /// A dtype lowp-io only decodes.
    const fn read(name: &'static str) -> Option<SafetensorsDtype> {
        Some(SafetensorsDtype {
            name,
            written: false,
        })
    }
}

impl Format {
    /// Total storage width in bits (the FP6 and FP4 types store these in the low bits of a byte).
    #[inline]
    pub const fn total_bits(&self) -> u32 {
        self.signed as u32 + self.exponent_bits + self.mantissa_bits
    }

    /// Precision in bits, counting the implicit leading bit.
    #[inline]
    pub const fn precision(&self) -> u32 {
        self.mantissa_bits + 1
    }

    /// The sign bit as a mask (0 for unsigned formats).
    #[inline]
    pub const fn sign_mask(&self) -> u32 {
        if self.signed {
            1 << (self.exponent_bits + self.mantissa_bits)
        } else {
            0
        }
    }

    /// Mask of the exponent and mantissa fields together.
    #[inline]
    pub const fn magnitude_mask(&self) -> u32 {
        (1 << (self.exponent_bits + self.mantissa_bits)) - 1
    }

    /// Mask of all bits a value may use.
    #[inline]
    pub const fn bits_mask(&self) -> u32 {
        self.sign_mask() | self.magnitude_mask()
    }

    /// Mask of the mantissa field.
    #[inline]
    pub const fn mantissa_mask(&self) -> u32 {
        (1 << self.mantissa_bits) - 1
    }

    /// Whether the format has ±infinity.
    #[inline]
    pub const fn has_infinity(&self) -> bool {
        matches!(self.nan, NanEncoding::Ieee)
    }

    /// Whether the format has a NaN.
    #[inline]
    pub const fn has_nan(&self) -> bool {
        !matches!(self.nan, NanEncoding::None)
    }

    /// Whether the format can represent zero.
    #[inline]
    pub const fn has_zero(&self) -> bool {
        self.subnormals
    }

    /// Whether `-0` exists as a value distinct (in bits) from `+0`.
    #[inline]
    pub const fn has_negative_zero(&self) -> bool {
        self.signed && self.has_zero() && !matches!(self.nan, NanEncoding::NegativeZero)
    }

    /// Unbiased exponent of the smallest normal binade.
    #[inline]
    pub const fn min_exponent(&self) -> i32 {
        if self.subnormals {
            1 - self.bias
        } else {
            -self.bias
        }
    }

    /// Exponent of the quantum (unit in the last place) of the smallest binade: the smallest
    /// positive value is `2^min_quantum_exponent()`.
    #[inline]
    pub const fn min_quantum_exponent(&self) -> i32 {
        self.min_exponent() - self.mantissa_bits as i32
    }

    /// Bits of the largest finite magnitude.
    #[inline]
    pub const fn max_finite_bits(&self) -> u32 {
        let all = self.magnitude_mask();
        match self.nan {
            NanEncoding::Ieee => all & !(1 << self.mantissa_bits),
            NanEncoding::AllOnes => all - 1,
            NanEncoding::None | NanEncoding::NegativeZero => all,
        }
    }

    /// Unbiased exponent of the largest finite value.
    #[inline]
    pub const fn max_exponent(&self) -> i32 {
        (self.max_finite_bits() >> self.mantissa_bits) as i32 - self.bias
    }

    /// The bits of positive infinity, if the format has infinities.
    #[inline]
    pub const fn infinity_bits(&self) -> Option<u32> {
        if self.has_infinity() {
            Some(self.magnitude_mask() & !self.mantissa_mask())
        } else {
            None
        }
    }

    /// The canonical (quiet, positive where the sign is free) NaN pattern, if the format has NaN.
    #[inline]
    pub const fn nan_bits(&self) -> Option<u32> {
        match self.nan {
            NanEncoding::None => None,
            NanEncoding::Ieee => {
                let quiet = if self.mantissa_bits > 0 {
                    1 << (self.mantissa_bits - 1)
                } else {
                    1
                };
                Some(self.magnitude_mask() & !self.mantissa_mask() | quiet)
            }
            NanEncoding::AllOnes => Some(self.magnitude_mask()),
            NanEncoding::NegativeZero => Some(1 << (self.exponent_bits + self.mantissa_bits)),
        }
    }

    /// Whether a NaN converted into this format keeps the top bits of the source's payload
    /// (below the quiet bit, which is set). Only the wide IEEE formats do: f16, as the F16C and
    /// AVX512-FP16 instructions and NumPy's float16 do, and f32, the engine's widening target.
    /// bf16 and the FP8 formats get their canonical NaN with the source's sign instead, as
    /// ml_dtypes gives them, so that files written by lowp and by Python agree byte for byte.
    #[inline]
    pub(crate) const fn keeps_nan_payload(&self) -> bool {
        matches!(self.nan, NanEncoding::Ieee) && self.mantissa_bits >= 10
    }

    /// Whether a NaN of this format carries its payload into f32 and f64 when widened: f16 and
    /// bf16 (f32's top half, whose widening is a shift) do, as in NumPy and ml_dtypes; the
    /// FP8 formats' NaNs widen to the canonical NaN of their sign, as in ml_dtypes.
    #[inline]
    pub(crate) const fn widens_nan_payload(&self) -> bool {
        matches!(self.nan, NanEncoding::Ieee) && self.mantissa_bits >= 7
    }

    /// Bits of the smallest positive value (the smallest subnormal; E8M0: 2^-127).
    #[inline]
    pub const fn min_positive_subnormal_bits(&self) -> u32 {
        if self.subnormals { 1 } else { 0 }
    }

    /// Bits of the largest subnormal value (all mantissa bits set, exponent field zero); in a
    /// format without subnormals (E8M0), its smallest value, as for
    /// [`Format::min_positive_subnormal_bits`].
    #[inline]
    pub const fn max_subnormal_bits(&self) -> u32 {
        if self.subnormals {
            (1 << self.mantissa_bits) - 1
        } else {
            0
        }
    }

    /// Bits of the smallest positive normal value.
    #[inline]
    pub const fn min_positive_normal_bits(&self) -> u32 {
        if self.subnormals {
            1 << self.mantissa_bits
        } else {
            0
        }
    }

    /// Bits of 1.0.
    #[inline]
    pub const fn one_bits(&self) -> u32 {
        (self.bias as u32) << self.mantissa_bits
    }

    /// Whether `bits` (only the low [`Format::total_bits`] bits are looked at) is a NaN.
    #[inline]
    pub const fn is_nan_bits(&self, bits: u32) -> bool {
        let bits = bits & self.bits_mask();
        let mag = bits & self.magnitude_mask();
        match self.nan {
            NanEncoding::None => false,
            NanEncoding::Ieee => mag > self.magnitude_mask() & !self.mantissa_mask(),
            NanEncoding::AllOnes => mag == self.magnitude_mask(),
            NanEncoding::NegativeZero => bits == self.sign_mask(),
        }
    }

    /// Whether `bits` is ±infinity.
    #[inline]
    pub const fn is_infinite_bits(&self, bits: u32) -> bool {
        match self.infinity_bits() {
            Some(inf) => bits & self.magnitude_mask() == inf,
            None => false,
        }
    }

    /// Whether `bits` has its sign bit set (false for unsigned formats).
    #[inline]
    pub const fn is_sign_negative_bits(&self, bits: u32) -> bool {
        bits & self.sign_mask() != 0
    }
}

impl Format {
    /// Decimal digits that survive a round trip through the format: `floor((p - 1) * log10 2)`,
    /// as Rust's `f32::DIGITS`.
    #[inline]
    pub const fn digits(&self) -> u32 {
        // 30103/100000 is log10(2) to 5 digits; exact enough for any precision below 1000 bits.
        self.mantissa_bits * 30103 / 100000
    }

    /// Rust's `MIN_EXP`: one more than the exponent of the smallest normal value.
    #[inline]
    pub const fn min_exp(&self) -> i32 {
        self.min_exponent() + 1
    }

    /// Rust's `MAX_EXP`: one more than the exponent of the largest finite value.
    #[inline]
    pub const fn max_exp(&self) -> i32 {
        self.max_exponent() + 1
    }

    /// Rust's `MIN_10_EXP`: the smallest `k` with `10^k` at or above the smallest normal value.
    #[inline]
    pub const fn min_10_exp(&self) -> i32 {
        let emin = self.min_exponent();
        if emin >= 0 {
            decimal_digits((1u128 << emin) - 1) as i32
        } else {
            1 - decimal_digits(1u128 << -emin) as i32
        }
    }

    /// Rust's `MAX_10_EXP`: `floor(log10(MAX))`.
    #[inline]
    pub const fn max_10_exp(&self) -> i32 {
        let max = self.max_finite_bits();
        let sig = (max & self.mantissa_mask()) as u128 | 1 << self.mantissa_bits;
        let shift = self.max_exponent() - self.mantissa_bits as i32;
        let int = if shift >= 0 {
            sig << shift
        } else {
            sig >> -shift
        };
        decimal_digits(int) as i32 - 1
    }
}

/// Number of decimal digits of `n` (0 for 0).
const fn decimal_digits(mut n: u128) -> u32 {
    let mut d = 0;
    while n > 0 {
        n /= 10;
        d += 1;
    }
    d
}

/// IEEE binary32, described like the small formats so the engine can decompose it.
pub(crate) const F32: Format = Format {
    name: "f32",
    exponent_bits: 8,
    mantissa_bits: 23,
    bias: 127,
    signed: true,
    nan: NanEncoding::Ieee,
    subnormals: true,
    safetensors: None,
};

/// The formats of this crate, in the order `lowp formats` lists them.
pub mod formats {
    use super::{Format, NanEncoding, SafetensorsDtype};

    /// IEEE 754 binary16: 1-5-10, bias 15, infinities and NaN.
    pub const F16: Format = Format {
        name: "f16",
        exponent_bits: 5,
        mantissa_bits: 10,
        bias: 15,
        signed: true,
        nan: NanEncoding::Ieee,
        subnormals: true,
        safetensors: SafetensorsDtype::written("F16"),
    };
    /// bfloat16: 1-8-7, bias 127 (the top half of an f32), infinities and NaN.
    pub const BF16: Format = Format {
        name: "bf16",
        exponent_bits: 8,
        mantissa_bits: 7,
        bias: 127,
        signed: true,
        nan: NanEncoding::Ieee,
        subnormals: true,
        safetensors: SafetensorsDtype::written("BF16"),
    };
    /// OCP FP8 E4M3: 1-4-3, bias 7, no infinities, NaN = S.1111.111, max 448.
    pub const F8E4M3FN: Format = Format {
        name: "f8e4m3fn",
        exponent_bits: 4,
        mantissa_bits: 3,
        bias: 7,
        signed: true,
        nan: NanEncoding::AllOnes,
        subnormals: true,
        safetensors: SafetensorsDtype::written("F8_E4M3"),
    };
    /// OCP FP8 E5M2: 1-5-2, bias 15, IEEE-like with infinities, max 57344.
    pub const F8E5M2: Format = Format {
        name: "f8e5m2",
        exponent_bits: 5,
        mantissa_bits: 2,
        bias: 15,
        signed: true,
        nan: NanEncoding::Ieee,
        subnormals: true,
        safetensors: SafetensorsDtype::written("F8_E5M2"),
    };
    /// FP8 E4M3 FNUZ (Graphcore/AMD): 1-4-3, bias 8, no infinities, NaN only at 0x80, max 240.
    pub const F8E4M3FNUZ: Format = Format {
        name: "f8e4m3fnuz",
        exponent_bits: 4,
        mantissa_bits: 3,
        bias: 8,
        signed: true,
        nan: NanEncoding::NegativeZero,
        subnormals: true,
        safetensors: None,
    };
    /// FP8 E5M2 FNUZ (Graphcore/AMD): 1-5-2, bias 16, no infinities, NaN only at 0x80, max 57344.
    pub const F8E5M2FNUZ: Format = Format {
        name: "f8e5m2fnuz",
        exponent_bits: 5,
        mantissa_bits: 2,
        bias: 16,
        signed: true,
        nan: NanEncoding::NegativeZero,
        subnormals: true,
        safetensors: None,
    };
    /// IEEE-like FP8 E4M3: 1-4-3, bias 7, infinities and NaN, max 240.
    pub const F8E4M3: Format = Format {
        name: "f8e4m3",
        exponent_bits: 4,
        mantissa_bits: 3,
        bias: 7,
        signed: true,
        nan: NanEncoding::Ieee,
        subnormals: true,
        safetensors: None,
    };
    /// IEEE-like FP8 E3M4: 1-3-4, bias 3, infinities and NaN, max 15.5.
    pub const F8E3M4: Format = Format {
        name: "f8e3m4",
        exponent_bits: 3,
        mantissa_bits: 4,
        bias: 3,
        signed: true,
        nan: NanEncoding::Ieee,
        subnormals: true,
        safetensors: None,
    };
    /// OCP MX scale E8M0: 0-8-0, bias 127, unsigned powers of two 2^-127..=2^127, NaN = 0xFF,
    /// no zero.
    pub const F8E8M0FNU: Format = Format {
        name: "f8e8m0fnu",
        exponent_bits: 8,
        mantissa_bits: 0,
        bias: 127,
        signed: false,
        nan: NanEncoding::AllOnes,
        subnormals: false,
        safetensors: SafetensorsDtype::read("F8_E8M0"),
    };
    /// OCP MX FP6 E2M3: 1-2-3, bias 1, finite only, max 7.5.
    pub const F6E2M3FN: Format = Format {
        name: "f6e2m3fn",
        exponent_bits: 2,
        mantissa_bits: 3,
        bias: 1,
        signed: true,
        nan: NanEncoding::None,
        subnormals: true,
        safetensors: SafetensorsDtype::read("F6_E2M3"),
    };
    /// OCP MX FP6 E3M2: 1-3-2, bias 3, finite only, max 28.
    pub const F6E3M2FN: Format = Format {
        name: "f6e3m2fn",
        exponent_bits: 3,
        mantissa_bits: 2,
        bias: 3,
        signed: true,
        nan: NanEncoding::None,
        subnormals: true,
        safetensors: SafetensorsDtype::read("F6_E3M2"),
    };
    /// OCP MX FP4 E2M1: 1-2-1, bias 1, finite only, max 6.
    pub const F4E2M1FN: Format = Format {
        name: "f4e2m1fn",
        exponent_bits: 2,
        mantissa_bits: 1,
        bias: 1,
        signed: true,
        nan: NanEncoding::None,
        subnormals: true,
        safetensors: SafetensorsDtype::read("F4"),
    };

    /// `ALL`, in the order of the rows of [`for_each_format!`](crate::for_each_format), whose
    /// `VARIANT` column names each format's constant here.
    macro_rules! all {
        ($(($t:ident, $variant:ident, $($rest:tt)*))*) => {
            /// Every format of the crate.
            pub const ALL: [Format; [$(stringify!($variant)),*].len()] = [$($variant),*];
        };
    }
    crate::for_each_format!(all, list);
}

/// Looks a format up by name, ignoring case and underscores: the crate's names (`f8e4m3fn`),
/// ml_dtypes' names (`float8_e4m3fn`, `bfloat16`, `float16`) and `half` for f16.
///
/// ```
/// use lowp::format::format_by_name;
/// assert_eq!(format_by_name("float8_e4m3fn").unwrap().name, "f8e4m3fn");
/// assert_eq!(format_by_name("BF16").unwrap().name, "bf16");
/// assert!(format_by_name("f7").is_none());
/// ```
pub fn format_by_name(name: &str) -> Option<&'static Format> {
    formats::ALL.iter().find(|f| {
        let aliases: &[&str] = match f.name {
            "f16" => &["half", "binary16"],
            "bf16" => &["bfloat16"],
            _ => &[],
        };
        spelled(name, &[f.name])
            || spelled(name, &["float", &f.name[1..]])
            || aliases.iter().any(|a| spelled(name, &[a]))
    })
}

/// Whether `given`, without underscores and in lower case, is the concatenation of `parts`.
fn spelled(given: &str, parts: &[&str]) -> bool {
    let given = given
        .bytes()
        .filter(|&b| b != b'_')
        .map(|b| b.to_ascii_lowercase());
    given.eq(parts.iter().flat_map(|p| p.bytes()))
}
