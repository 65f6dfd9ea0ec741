//! What the vector kernels need to know about a format, worked out once at compile time.
//!
//! The kernels of [`super::conversions`] are the scalar fast path of [`crate::round`] written for
//! lanes: every lane computes every candidate result (normal range, below it, overflow, NaN)
//! and masks pick one. These plans hold the constants that specialise them to one format.

use crate::format::{Format, NanEncoding};

/// Constants for rounding f32 lanes into a format, to nearest even.
#[derive(Clone, Copy)]
pub(crate) struct NarrowPlan {
    /// `23 - mantissa_bits`: the f32 bits below the format's last place.
    pub shift: u32,
    /// How the magnitude is rounded in the format's range.
    pub method: Method,
    /// Whether NaN inputs give the same code as overflow (not saturating), so one comparison
    /// serves both.
    pub nan_is_overflow: bool,
    /// Just under half of the format's last place, in f32 bits.
    pub round_bias: u32,
    /// Whether the kept last bit decides ties (false with no mantissa bits: ties go up).
    pub parity: bool,
    /// The difference of the exponent biases, placed above the mantissa.
    pub rebias: u32,
    /// The smallest f32 magnitude (bits) the integer trick handles.
    pub low: u32,
    /// How magnitudes below `low` round.
    pub below: Below,
    /// Magnitudes (bits) above this overflow.
    pub overflow_after: u32,
    /// The magnitude code of an overflow, not saturating (infinity, else NaN, else MAX).
    pub overflow: u32,
    /// The largest finite magnitude code.
    pub max: u32,
    /// Whether the format has a sign bit.
    pub signed: bool,
    /// How far right the f32 sign bit moves to land on the format's.
    pub sign_shift: u32,
    /// Whether -0 exists (otherwise a result of zero magnitude is +0).
    pub negative_zero: bool,
    /// What NaN becomes.
    pub nan: NanCode,
    /// The NaN code of an unsigned format, for every negative input.
    pub unsigned_nan: u32,
    /// Whether the format has a zero (E8M0 has not: zero becomes NaN).
    pub zero: bool,
}

/// How magnitudes in the format's range are rounded.
#[derive(Clone, Copy, PartialEq)]
pub(crate) enum Method {
    /// bf16, the top half of an f32: the integer trick on the whole word, sign included.
    TopHalf,
    /// By the FPU: `c = 2^(e + shift)` for the lane's exponent `e` (at least the format's
    /// smallest normal exponent `emin`) has an ulp equal to the format's quantum at `e`, so
    /// adding `|x| + c` rounds `|x|` to the format's grid, to nearest even, subnormals
    /// included, and `bits(|x| + c) - bits(c)` is the rounded `|x|` in quanta: the significand
    /// `M` (leading bit included, `2^(m+1)` after a carry) in the normal range, the subnormal's
    /// code below it. The code is then `M + ((max(e, emin) + bias - 1) << m)` (the added
    /// exponent is 0 for subnormals, and a carry lands in the next binade by itself), and
    /// `(max(e, emin) + bias - 1) << m = bits(c) >> shift - code_bias`. Needs `c` to stay
    /// finite over the format's range.
    Float {
        /// The f32 exponent field of the format's smallest normal exponent, in place.
        emin_field: u32,
        /// `shift` in the exponent field.
        c_add: u32,
        /// `(shift + 128 - bias) << m`.
        code_bias: u32,
    },
    /// By integer operations: add just under half an ulp plus the kept last bit, shift,
    /// rebias; below the normal range as [`Below`] says.
    Integer,
}

/// How magnitudes below the integer trick's range round.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Below {
    /// There are none: the trick covers the whole range down to zero (bf16).
    Nothing,
    /// Subnormals: adding `magic` (as f32) leaves the rounded count of the smallest quantum
    /// in the low bits, the FPU doing the rounding to nearest even.
    Subnormal { magic: u32 },
    /// No subnormals and no zero (E8M0): everything below is the smallest value (code 0),
    /// from `up_from` on the next one (ties go up).
    Clamp { up_from: u32 },
}

/// What NaN inputs become (the engine's `round::nan`).
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum NanCode {
    /// IEEE: sign, quiet NaN, and the top payload bits (`keep_payload`: f16 only) shifted
    /// right by `shift`.
    Ieee {
        canonical: u32,
        shift: u32,
        keep_payload: bool,
    },
    /// One code, with the input's sign bit where `signed`.
    Fixed { code: u32, signed: bool },
    /// A zero with the sign opposite to the input's (FP6, FP4, as ml_dtypes gives them).
    OppositeZero,
}

impl NarrowPlan {
    /// The plan for `fmt`, rounding to nearest even.
    pub const fn of(fmt: &Format) -> NarrowPlan {
        let man = fmt.mantissa_bits;
        let shift = 23 - man;
        let same_exponent = fmt.subnormals && fmt.bias == 127;
        let low_exp = if fmt.min_exponent() > -126 {
            fmt.min_exponent()
        } else {
            -126
        };
        let low = if same_exponent {
            0
        } else {
            ((low_exp + 127) as u32) << 23
        };
        let below = if same_exponent {
            Below::Nothing
        } else if fmt.subnormals {
            Below::Subnormal {
                magic: ((fmt.min_quantum_exponent() + 23 + 127) as u32) << 23,
            }
        } else {
            // The only format without subnormals is E8M0, whose smallest value 2^-127 is an
            // f32 subnormal: 0x0040_0000, the next 2^-126, the tie between them 0x0060_0000.
            assert!(fmt.min_exponent() == -127 && man == 0);
            Below::Clamp {
                up_from: 0x0060_0000,
            }
        };
        let max = fmt.max_finite_bits();
        let max_exp = (max >> man) as i32 - fmt.bias;
        let max_src = ((max_exp + 127) as u32) << 23 | (max & fmt.mantissa_mask()) << shift;
        let high = max_src + (1 << (shift - 1));
        // The midpoint above MAX stays at MAX when MAX's significand is even (E4M3FN's 448).
        let overflow_after = if man > 0 && max & 1 == 0 {
            high
        } else {
            high - 1
        };
        let overflow = match fmt.nan {
            NanEncoding::Ieee => fmt.magnitude_mask() & !fmt.mantissa_mask(),
            NanEncoding::AllOnes => fmt.magnitude_mask(),
            NanEncoding::NegativeZero => fmt.sign_mask(),
            NanEncoding::None => max,
        };
        let nan = match fmt.nan {
            NanEncoding::Ieee => NanCode::Ieee {
                canonical: match fmt.nan_bits() {
                    Some(b) => b,
                    None => 0,
                },
                shift,
                keep_payload: fmt.keeps_nan_payload(),
            },
            NanEncoding::AllOnes => NanCode::Fixed {
                code: fmt.magnitude_mask(),
                signed: fmt.signed,
            },
            NanEncoding::NegativeZero => NanCode::Fixed {
                code: fmt.sign_mask(),
                signed: false,
            },
            NanEncoding::None => NanCode::OppositeZero,
        };
        let max_field = (max_exp + 127) as u32;
        let method = if same_exponent && fmt.exponent_bits == 8 && fmt.signed {
            Method::TopHalf
        } else if max_field + shift <= 254 && fmt.subnormals && !same_exponent {
            Method::Float {
                emin_field: ((fmt.min_exponent() + 127) as u32) << 23,
                c_add: shift << 23,
                code_bias: ((shift as i32 + 128 - fmt.bias) as u32) << man,
            }
        } else {
            Method::Integer
        };
        let nan_is_overflow = match nan {
            NanCode::Fixed { code, signed } => {
                code == overflow && (signed || !fmt.signed || code & fmt.sign_mask() != 0)
            }
            NanCode::Ieee { .. } | NanCode::OppositeZero => false,
        };
        NarrowPlan {
            shift,
            method,
            nan_is_overflow,
            round_bias: (1 << (shift - 1)) - 1,
            parity: man > 0,
            rebias: ((127 - fmt.bias) as u32) << man,
            low,
            below,
            overflow_after,
            overflow,
            max,
            signed: fmt.signed,
            sign_shift: 32 - fmt.total_bits(),
            negative_zero: fmt.has_negative_zero(),
            nan,
            unsigned_nan: match fmt.nan_bits() {
                Some(b) => b,
                None => 0,
            },
            zero: fmt.has_zero(),
        }
    }
}

/// Constants for widening a format's codes to f32, exactly.
#[derive(Clone, Copy)]
pub(crate) struct WidenPlan {
    /// The format's sign bit (0 when unsigned).
    pub sign_mask: u32,
    /// How far left the sign bit moves to become f32's.
    pub sign_shift: u32,
    /// The magnitude bits.
    pub magnitude_mask: u32,
    /// `23 - mantissa_bits`.
    pub shift: u32,
    /// The difference of the exponent biases, placed in f32's exponent field.
    pub rebias: u32,
    /// Subnormals that are not f32 subnormals: magnitudes below `min_normal` are converted as
    /// integers and scaled by `quantum` (2^qmin).
    pub subnormal: Option<(u32, f32)>,
    /// The special codes.
    pub special: Special,
}

/// Which codes are not finite numbers, and what they widen to.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Special {
    /// None that the shift and rebias get wrong: FP6 and FP4 have none, and bf16's infinities
    /// and NaNs are f32's top half, so shifting widens them (a signalling NaN stays one).
    Nothing,
    /// IEEE: magnitudes from `infinity` up are infinity, then NaNs, quieted, keeping their
    /// sign, and their payload where `payload` (f16; the FP8 formats' NaNs widen to the
    /// canonical NaN of their sign).
    Ieee { infinity: u32, payload: bool },
    /// The all-ones magnitude is NaN, keeping the sign (E4M3FN).
    AllOnes,
    /// The code `0x80` (negative zero) is the only NaN, negative (FNUZ).
    NegativeZero,
    /// E8M0: 0xFF is NaN, and code 0 is 2^-127, an f32 subnormal.
    E8m0,
}

impl WidenPlan {
    /// The plan for `fmt`.
    pub const fn of(fmt: &Format) -> WidenPlan {
        let man = fmt.mantissa_bits;
        let lines_up = fmt.subnormals && fmt.bias == 127;
        let special = match fmt.nan {
            _ if !fmt.subnormals => Special::E8m0,
            _ if lines_up => Special::Nothing,
            NanEncoding::Ieee => Special::Ieee {
                infinity: fmt.magnitude_mask() & !fmt.mantissa_mask(),
                payload: fmt.widens_nan_payload(),
            },
            NanEncoding::AllOnes => Special::AllOnes,
            NanEncoding::NegativeZero => Special::NegativeZero,
            NanEncoding::None => Special::Nothing,
        };
        WidenPlan {
            sign_mask: fmt.sign_mask(),
            sign_shift: 32 - fmt.total_bits(),
            magnitude_mask: fmt.magnitude_mask(),
            shift: 23 - man,
            rebias: ((127 - fmt.bias) as u32) << 23,
            subnormal: if fmt.subnormals && !lines_up {
                Some((1 << man, pow2(fmt.min_quantum_exponent())))
            } else {
                None
            },
            special,
        }
    }
}

/// `2^e` for a normal f32 exponent.
const fn pow2(e: i32) -> f32 {
    crate::bits::f32_from_bits(((e + 127) as u32) << 23)
}

/// Whether two formats are the same (compile-time constant when both are).
#[inline(always)]
pub(crate) const fn same(a: &Format, b: &Format) -> bool {
    a.exponent_bits == b.exponent_bits
        && a.mantissa_bits == b.mantissa_bits
        && a.bias == b.bias
        && a.signed == b.signed
        && a.subnormals == b.subnormals
        && a.nan as u8 == b.nan as u8
}
