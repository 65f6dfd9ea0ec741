//! The one rounding engine every format shares.
//!
//! Every conversion in the crate goes through two steps:
//!
//! 1. [`decode`] (or [`decode_f64`]) turns a source value into a [`Decoded`]: zero, infinity,
//!    NaN with its payload, or an *exact* finite value `sig * 2^exp`;
//! 2. [`encode`] rounds a `Decoded` into a target [`Format`] in a given [`Rounding`] mode.
//!
//! Because step 1 is exact and step 2 rounds once, converting from f64, from a 128-bit integer or
//! from another format is correctly rounded with no double rounding. The engine is `const` and
//! takes the format by reference; called with a constant format it inlines into straight-line
//! code specialised for that format.
//!
//! # Rounding a finite value
//!
//! For `x = sig * 2^exp` with its leading bit at `2^e`, the target's quantum (the weight of the
//! last mantissa bit) is `2^q` with `q = max(e, emin) - m`, where `emin` is the exponent of the
//! smallest normal binade and `m` the mantissa width. Then `x / 2^q = M + f` with an integer
//! `M < 2^(m+1)` and a fraction `0 <= f < 1` held as the shifted-out bits of `sig`. The mode
//! decides whether `M` becomes `M + 1`; the encoding `((q - qmin) << m) + M` then places `M`,
//! carries into the exponent field when `M + 1 == 2^(m+1)`, and turns a subnormal into the
//! smallest normal when `M + 1 == 2^m`, both for free. A result above the largest finite
//! pattern has overflowed, and the mode and format decide what that gives (see [`Rounding`]).

use crate::format::{Format, NanEncoding};

/// How a conversion rounds a value that the target format cannot hold exactly.
///
/// Overflow follows IEEE 754 (a value whose rounded magnitude, with an unbounded exponent, is
/// beyond the largest finite one): nearest-even and stochastic rounding give infinity, toward
/// zero gives the largest finite value, and the directed modes give infinity on the side they
/// round to and the largest finite value on the other. A format without infinities gives NaN
/// where infinity would be, and a format without NaN either (FP6, FP4) gives the largest finite
/// value. The `_saturating` conversions instead turn every overflow, infinite input included,
/// into ±MAX (OCP's "satfinite").
///
/// A NaN input gives the same result in every mode, saturating or not, as ml_dtypes converts
/// it: the input's sign and, in f16 alone, its top payload bits, quieted; bf16 and FP8 get
/// their canonical NaN of that sign (FNUZ and E8M0 their one NaN), and FP6/FP4, which have no
/// NaN, a zero of the opposite sign. Each type's documentation has the details.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Rounding {
    /// Round to the nearest representable value; on a tie, to the one with an even mantissa.
    NearestEven,
    /// Round toward zero (truncate).
    TowardZero,
    /// Round toward positive infinity (ceiling).
    TowardPositive,
    /// Round toward negative infinity (floor).
    TowardNegative,
    /// Stochastic rounding with the caller's 32 random bits, as Higham defines it: a value a
    /// fraction `f` of the way from its lower to its upper neighbour (in magnitude) rounds up with
    /// probability `f`, so the rounding is unbiased on average. It rounds up exactly when `random
    /// < floor(f * 2^32)`: uniform random bits give probability `f` exactly when at most 32 bits
    /// are discarded, and `f` truncated to a multiple of `2^-32` otherwise. Exact values never
    /// move.
    Stochastic(u32),
}

/// A source value taken apart exactly.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Decoded {
    /// ±0.
    Zero { neg: bool },
    /// `(-1)^neg * sig * 2^exp` exactly, `sig != 0`.
    Finite { neg: bool, sig: u64, exp: i32 },
    /// ±infinity.
    Infinite { neg: bool },
    /// NaN; `payload` holds the mantissa bits below the quiet bit, left-aligned at bit 63, so a
    /// narrower target keeps the most significant ones (0 where the source's widening drops
    /// them: [`Format::widens_nan_payload`]).
    Nan { neg: bool, payload: u64 },
}

/// Takes apart the low `fmt.total_bits()` bits of `bits` as a value of `fmt`.
#[inline(always)]
pub(crate) const fn decode(fmt: &Format, bits: u32) -> Decoded {
    let bits = bits & fmt.bits_mask();
    let neg = bits & fmt.sign_mask() != 0;
    let mag = bits & fmt.magnitude_mask();
    if fmt.is_nan_bits(bits) {
        let payload = if fmt.widens_nan_payload() {
            left_aligned_payload(fmt, mag)
        } else {
            0
        };
        // `neg` is the sign bit for every encoding: FNUZ's one NaN, the negative-zero pattern,
        // is a negative NaN, as ml_dtypes widens it and `is_sign_negative` reads it.
        return Decoded::Nan { neg, payload };
    }
    if fmt.is_infinite_bits(bits) {
        return Decoded::Infinite { neg };
    }
    let man = fmt.mantissa_bits;
    let field = mag >> man;
    let frac = (mag & fmt.mantissa_mask()) as u64;
    if fmt.subnormals && field == 0 {
        if frac == 0 {
            Decoded::Zero { neg }
        } else {
            Decoded::Finite {
                neg,
                sig: frac,
                exp: fmt.min_quantum_exponent(),
            }
        }
    } else {
        Decoded::Finite {
            neg,
            sig: frac | 1 << man,
            exp: field as i32 - fmt.bias - man as i32,
        }
    }
}

/// The payload bits of an IEEE NaN magnitude (below its quiet bit), left-aligned at bit 63.
const fn left_aligned_payload(fmt: &Format, mag: u32) -> u64 {
    if fmt.mantissa_bits < 2 {
        return 0;
    }
    let width = fmt.mantissa_bits - 1;
    ((mag & ((1 << width) - 1)) as u64) << (64 - width)
}

/// Takes an f64 apart exactly.
#[inline(always)]
pub(crate) const fn decode_f64(x: f64) -> Decoded {
    let bits = crate::bits::f64_to_bits(x);
    let neg = bits >> 63 != 0;
    let field = ((bits >> 52) & 0x7ff) as i32;
    let frac = bits & ((1 << 52) - 1);
    match field {
        0 if frac == 0 => Decoded::Zero { neg },
        0 => Decoded::Finite {
            neg,
            sig: frac,
            exp: -1074,
        },
        0x7ff if frac == 0 => Decoded::Infinite { neg },
        0x7ff => Decoded::Nan {
            neg,
            payload: (frac & ((1 << 51) - 1)) << 13,
        },
        _ => Decoded::Finite {
            neg,
            sig: frac | 1 << 52,
            exp: field - 1075,
        },
    }
}

/// Takes an f32 apart exactly.
#[inline(always)]
pub(crate) const fn decode_f32(x: f32) -> Decoded {
    decode(&crate::format::F32, crate::bits::f32_to_bits(x))
}

/// Builds the f64 holding a decoded value exactly. Every value of every format of this crate,
/// and every f32, is an f64 normal or zero, so nothing rounds here.
#[inline(always)]
pub(crate) const fn to_f64_exact(v: Decoded) -> f64 {
    let bits = match v {
        Decoded::Zero { neg } => (neg as u64) << 63,
        Decoded::Infinite { neg } => (neg as u64) << 63 | 0x7ff0_0000_0000_0000,
        Decoded::Nan { neg, payload } => (neg as u64) << 63 | 0x7ff8_0000_0000_0000 | payload >> 13,
        Decoded::Finite { neg, sig, exp } => {
            let top = 63 - sig.leading_zeros() as i32;
            let frac = (sig << (63 - top)) << 1 >> 12;
            (neg as u64) << 63 | ((exp + top + 1023) as u64) << 52 | frac
        }
    };
    crate::bits::f64_from_bits(bits)
}

/// Rounds a decoded value into `fmt`; returns the bits of the result.
#[inline(always)]
pub(crate) const fn encode(fmt: &Format, v: Decoded, mode: Rounding, saturate: bool) -> u32 {
    match v {
        Decoded::Finite { neg, sig, exp } => round_finite(fmt, neg, sig, exp, mode, saturate),
        Decoded::Zero { neg } => zero(fmt, neg),
        Decoded::Infinite { neg } => {
            if neg && !fmt.signed {
                not_representable(fmt)
            } else if saturate {
                sign_bit(fmt, neg) | fmt.max_finite_bits()
            } else {
                infinity(fmt, neg)
            }
        }
        Decoded::Nan { neg, payload } => nan(fmt, neg, payload),
    }
}

/// Rounds the finite nonzero value `(-1)^neg * sig * 2^exp` into `fmt`.
#[inline(always)]
pub(crate) const fn round_finite(
    fmt: &Format,
    neg: bool,
    sig: u64,
    exp: i32,
    mode: Rounding,
    saturate: bool,
) -> u32 {
    if neg && !fmt.signed {
        return not_representable(fmt);
    }
    let man = fmt.mantissa_bits;
    let top = 63 - sig.leading_zeros() as i32;
    let e = exp + top;
    if e > fmt.max_exponent() + 1 {
        return overflow(fmt, neg, mode, saturate);
    }
    let emin = fmt.min_exponent();
    let q = if e > emin { e } else { emin } - man as i32;
    let shift = q - exp;
    let m = if shift <= 0 {
        // Exact: `x / 2^q` is an integer below 2^(m+1), so this shift cannot lose bits.
        sig << -shift
    } else {
        let kept = if shift < 64 { sig >> shift } else { 0 };
        kept + rounds_up(kept, sig, shift as u32, neg, mode) as u64
    };
    if m == 0 || (!fmt.subnormals && m < 1 << man) {
        // Underflow. A format with neither subnormals nor zero (E8M0) clamps to its smallest
        // value, as ml_dtypes does: a positive input never becomes NaN by being small.
        return if fmt.has_zero() {
            zero(fmt, neg)
        } else {
            sign_bit(fmt, neg)
        };
    }
    let implicit = if fmt.subnormals { 0 } else { 1 << man };
    let mag = (((q - fmt.min_quantum_exponent()) as u64) << man) + m - implicit;
    if mag > fmt.max_finite_bits() as u64 {
        return overflow(fmt, neg, mode, saturate);
    }
    sign_bit(fmt, neg) | mag as u32
}

/// Whether the kept integer `kept = sig >> shift` (`shift >= 1`) moves up one step in magnitude.
#[inline(always)]
const fn rounds_up(kept: u64, sig: u64, shift: u32, neg: bool, mode: Rounding) -> bool {
    // `rem / 2^shift` is the discarded fraction.
    let rem = if shift < 64 {
        sig & ((1 << shift) - 1)
    } else {
        sig
    };
    if rem == 0 {
        return false;
    }
    match mode {
        Rounding::NearestEven => {
            if shift > 64 {
                false // sig < 2^64 <= 2^(shift-1): below one half
            } else {
                let half = 1u64 << (shift - 1);
                rem > half || (rem == half && kept & 1 == 1)
            }
        }
        Rounding::TowardZero => false,
        Rounding::TowardPositive => !neg,
        Rounding::TowardNegative => neg,
        Rounding::Stochastic(random) => {
            let threshold = if shift <= 32 {
                rem << (32 - shift)
            } else if shift - 32 < 64 {
                rem >> (shift - 32)
            } else {
                0
            };
            (random as u64) < threshold
        }
    }
}

/// The sign bit for a result of sign `neg` (nothing in an unsigned format).
#[inline(always)]
const fn sign_bit(fmt: &Format, neg: bool) -> u32 {
    if neg { fmt.sign_mask() } else { 0 }
}

/// The result of an overflow of sign `neg`.
#[inline(always)]
const fn overflow(fmt: &Format, neg: bool, mode: Rounding, saturate: bool) -> u32 {
    let to_infinity = match mode {
        Rounding::NearestEven | Rounding::Stochastic(_) => true,
        Rounding::TowardZero => false,
        Rounding::TowardPositive => !neg,
        Rounding::TowardNegative => neg,
    };
    if saturate || !to_infinity {
        sign_bit(fmt, neg) | fmt.max_finite_bits()
    } else {
        infinity(fmt, neg)
    }
}

/// What ±infinity becomes: infinity, else NaN, else the largest finite value.
#[inline(always)]
const fn infinity(fmt: &Format, neg: bool) -> u32 {
    match fmt.infinity_bits() {
        Some(inf) => sign_bit(fmt, neg) | inf,
        None if fmt.has_nan() => nan(fmt, neg, 0),
        None => sign_bit(fmt, neg) | fmt.max_finite_bits(),
    }
}

/// What ±0 becomes: signed zero where it exists, +0 in FNUZ formats, NaN in E8M0 (no zero).
#[inline(always)]
const fn zero(fmt: &Format, neg: bool) -> u32 {
    if !fmt.has_zero() {
        not_representable(fmt)
    } else if fmt.has_negative_zero() {
        sign_bit(fmt, neg)
    } else {
        0
    }
}

/// A value the format has no way to hold (a negative value or zero in E8M0): NaN.
#[inline(always)]
const fn not_representable(fmt: &Format) -> u32 {
    match fmt.nan_bits() {
        Some(nan) => nan,
        None => 0,
    }
}

/// A NaN of sign `neg` with the given payload, as ml_dtypes (NumPy for f16) converts NaNs.
/// IEEE formats keep the sign and set the quiet bit; f16 (and f32) keep as many payload bits
/// as fit ([`Format::keeps_nan_payload`]), bf16 and FP8 none. `fn` formats keep the sign; FNUZ
/// and E8M0 have one NaN. Formats without NaN (FP6, FP4) give a zero of the opposite sign:
/// ml_dtypes' stand-in NaN there is the -0 pattern, negated for a negative NaN (the MX
/// specification leaves the result to implementations, and matching makes files agree).
#[inline(always)]
const fn nan(fmt: &Format, neg: bool, payload: u64) -> u32 {
    match fmt.nan {
        NanEncoding::None => sign_bit(fmt, !neg),
        NanEncoding::Ieee => {
            let canonical = match fmt.nan_bits() {
                Some(b) => b,
                None => 0,
            };
            let kept = if !fmt.keeps_nan_payload() {
                0
            } else {
                (payload >> (64 - (fmt.mantissa_bits - 1))) as u32
            };
            sign_bit(fmt, neg) | canonical | kept
        }
        NanEncoding::AllOnes => sign_bit(fmt, neg) | fmt.magnitude_mask(),
        NanEncoding::NegativeZero => fmt.sign_mask(),
    }
}

/// The bit layout of an IEEE source type (f32 or f64), for the fast path.
#[derive(Clone, Copy)]
pub(crate) struct SourceLayout {
    /// Stored mantissa width.
    pub mantissa_bits: u32,
    /// Exponent bias.
    pub bias: i32,
    /// Total width.
    pub bits: u32,
}

/// f32's layout.
pub(crate) const F32_LAYOUT: SourceLayout = SourceLayout {
    mantissa_bits: 23,
    bias: 127,
    bits: 32,
};
/// f64's layout.
pub(crate) const F64_LAYOUT: SourceLayout = SourceLayout {
    mantissa_bits: 52,
    bias: 1023,
    bits: 64,
};

/// Whether `fmt` is the top `fmt.total_bits()` bits of the source type: the same sign, the same
/// exponent field and bias, subnormals, infinities and IEEE NaNs, only a shorter mantissa
/// (bf16 in f32). Then every value of `fmt` is its source pattern with the low bits cleared, so
/// converting is a rounding shift and widening a plain shift, with no case of its own for
/// zero, subnormals, overflow or infinity. Constant for a constant `fmt`, so the branches on it
/// fold away.
#[inline(always)]
pub(crate) const fn is_top_bits_of(fmt: &Format, src: SourceLayout) -> bool {
    fmt.signed
        && fmt.subnormals
        && matches!(fmt.nan, NanEncoding::Ieee)
        && fmt.bias == src.bias
        && fmt.exponent_bits == src.bits - 1 - src.mantissa_bits
}

/// Round-to-nearest-even of an f32 or f64 given by its bits, for the inputs that need none of
/// the engine's generality, which is nearly all of them:
///
/// * a target that is the source's top bits ([`is_top_bits_of`]: bf16 from f32), by one
///   rounding shift of the whole pattern, sign included;
/// * otherwise the target's normal range, by the classic integer trick (add just under half an
///   ulp plus the parity bit, shift, rebias);
/// * below it, the target's subnormals, by the same trick on the source significand shifted to
///   the subnormal quantum, without a branch;
/// * above it (from the midpoint past MAX up to infinity), the overflow result.
///
/// NaN, negative input to an unsigned format and formats without subnormals below their range
/// give `None`, for the general engine. Bit-identical to
/// `encode(fmt, decode(x), NearestEven, saturate)`, which the exhaustive tests check.
#[inline(always)]
pub(crate) const fn nearest_even_from_bits(
    fmt: &Format,
    src: SourceLayout,
    bits: u64,
    saturate: bool,
) -> Option<u32> {
    let abs_mask = (1u64 << (src.bits - 1)) - 1;
    let abs = bits & abs_mask;
    let neg = bits & !abs_mask != 0;
    if neg && !fmt.signed {
        return None;
    }
    let man = fmt.mantissa_bits;
    let shift = src.mantissa_bits - man;
    let infinity_src = ((1u64 << (src.bits - 1 - src.mantissa_bits)) - 1) << src.mantissa_bits;
    if is_top_bits_of(fmt, src) {
        if abs > infinity_src {
            return None; // NaN: the engine decides its sign and payload
        }
        // Adding just under half the dropped part plus the kept parity bit, then shifting,
        // rounds to nearest even everywhere at once: the target's subnormals are the source's
        // (same exponent field), a mantissa carry moves into the exponent field as it should,
        // and a carry out of MAX gives the infinity pattern, which is nearest-even's overflow;
        // an infinity stays one. `abs + half <= infinity + half` never reaches the sign bit,
        // so the shifted pattern keeps the sign and -0 stays -0.
        let parity = (bits >> shift) & 1;
        let rounded = ((bits + (1 << (shift - 1)) - 1 + parity) >> shift) as u32;
        if saturate && rounded & fmt.magnitude_mask() > fmt.max_finite_bits() {
            return Some(sign_bit(fmt, neg) | fmt.max_finite_bits());
        }
        return Some(rounded);
    }
    // Lowest source input of the normal range: the target's smallest normal, or zero when the
    // target's subnormals line up with the source's (bf16 within f32).
    let same_exponent = fmt.subnormals && fmt.bias == src.bias;
    let low_exp = if fmt.min_exponent() > 1 - src.bias {
        fmt.min_exponent()
    } else {
        1 - src.bias
    };
    let low = if same_exponent {
        0
    } else {
        ((low_exp + src.bias) as u64) << src.mantissa_bits
    };
    // First source input past the range: the midpoint above the largest finite value.
    let max = fmt.max_finite_bits() as u64;
    let max_exp = (max >> man) as i32 - fmt.bias;
    let max_src = ((max_exp + src.bias) as u64) << src.mantissa_bits
        | (max & fmt.mantissa_mask() as u64) << shift;
    let high = max_src + (1 << (shift - 1));
    if abs >= high {
        if abs > infinity_src {
            return None; // NaN: the engine decides its sign and payload
        }
        // The midpoint above MAX is a tie: it stays at MAX when MAX's significand is even.
        if abs == high && man > 0 && max & 1 == 0 {
            return Some(sign_bit(fmt, neg) | max as u32);
        }
        // Overflow (infinity included): for nearest-even, the same as an infinite input.
        return Some(if saturate {
            sign_bit(fmt, neg) | fmt.max_finite_bits()
        } else {
            infinity(fmt, neg)
        });
    }
    if abs >= low {
        let parity = if man > 0 { (abs >> shift) & 1 } else { 1 };
        let rounded = (abs + (1 << (shift - 1)) - 1 + parity) >> shift;
        let rebias = ((src.bias - fmt.bias) as u64) << man;
        return Some(sign_bit(fmt, neg) | (rounded - rebias) as u32);
    }
    if !fmt.subnormals {
        return None;
    }
    // Below the target's normal range: its quantum is 2^qmin there, so the result's bits are
    // the significand shifted down to that quantum, rounded to nearest even.
    let field = abs >> src.mantissa_bits;
    let frac = abs & ((1 << src.mantissa_bits) - 1);
    let (sig, exp) = if field == 0 {
        (frac, 1 - src.bias - src.mantissa_bits as i32)
    } else {
        (
            frac | 1 << src.mantissa_bits,
            field as i32 - src.bias - src.mantissa_bits as i32,
        )
    };
    let down = fmt.min_quantum_exponent() - exp;
    if down <= 0 {
        return None;
    }
    // The normal range's trick again (nearest, ties to even), at the shift `down`: no branch on
    // the discarded bits. A shift past 63 must give 0 (the value is under a quarter of the
    // smallest subnormal) and 63 does too: `sig < 2^53` is below half of 2^63, and
    // `sig + 2^62 < 2^64` does not wrap. A carry out of the subnormals gives 2^man, the
    // smallest normal's pattern.
    let down = if down > 63 { 63 } else { down as u32 };
    let m = (sig + (1 << (down - 1)) - 1 + ((sig >> down) & 1)) >> down;
    // A zero result is the sign bit alone, the zero of its sign, except where -0 does not exist
    // (FNUZ): the test folds away for the other formats, leaving no branch.
    if m == 0 && !fmt.has_negative_zero() {
        return Some(zero(fmt, neg));
    }
    Some(sign_bit(fmt, neg) | m as u32)
}

/// Round-to-nearest-even (or saturating) conversion of an f32: fast path, then the engine.
#[inline(always)]
pub(crate) const fn from_f32_nearest(fmt: &Format, x: f32, saturate: bool) -> u32 {
    match nearest_even_from_bits(
        fmt,
        F32_LAYOUT,
        crate::bits::f32_to_bits(x) as u64,
        saturate,
    ) {
        Some(b) => b,
        None => encode(fmt, decode_f32(x), Rounding::NearestEven, saturate),
    }
}

/// Round-to-nearest-even (or saturating) conversion of an f64: fast path, then the engine.
#[inline(always)]
pub(crate) const fn from_f64_nearest(fmt: &Format, x: f64, saturate: bool) -> u32 {
    match nearest_even_from_bits(fmt, F64_LAYOUT, crate::bits::f64_to_bits(x), saturate) {
        Some(b) => b,
        None => encode(fmt, decode_f64(x), Rounding::NearestEven, saturate),
    }
}

/// Exact widening of a format's bits to f32 bits: the normal range by shifting and rebiasing,
/// everything else through the engine.
#[inline(always)]
pub(crate) const fn to_f32_bits(fmt: &Format, bits: u32) -> u32 {
    let bits = bits & fmt.bits_mask();
    let mag = bits & fmt.magnitude_mask();
    let shift = 23 - fmt.mantissa_bits;
    let sign = if bits & fmt.sign_mask() != 0 {
        1 << 31
    } else {
        0
    };
    let nan = fmt.is_nan_bits(bits);
    if is_top_bits_of(fmt, F32_LAYOUT) {
        // The top bits of an f32 (bf16): zero, subnormals, infinity and NaN line up too. A
        // signalling NaN stays signalling, as in ml_dtypes, PyTorch and every bf16 widening
        // that is a shift.
        return sign | mag << shift;
    }
    if mag >= fmt.min_positive_normal_bits()
        && mag <= fmt.max_finite_bits()
        && !nan
        && fmt.min_exponent() >= -126
    {
        return sign | ((mag << shift) + (((127 - fmt.bias) as u32) << 23));
    }
    encode(
        &crate::format::F32,
        decode(fmt, bits),
        Rounding::NearestEven,
        false,
    )
}

/// Bits of every value of an 8-bit-or-narrower format widened to f32, indexed by the format's
/// bits: one load per conversion.
pub(crate) const fn widening_table<const N: usize>(fmt: &Format) -> [u32; N] {
    let mut table = [0u32; N];
    let mut i = 0;
    while i < N {
        table[i] = encode(
            &crate::format::F32,
            decode(fmt, i as u32),
            Rounding::NearestEven,
            false,
        );
        i += 1;
    }
    table
}

/// Converts a 128-bit integer magnitude into `sig * 2^exp` with `sig < 2^64`, folding the bits
/// that do not fit into the lowest bit of `sig` (a sticky bit). Rounding that to at most 62 bits
/// of precision gives the same result as rounding the integer itself in every deterministic mode.
#[inline(always)]
pub(crate) const fn integer_parts(mag: u128) -> (u64, i32) {
    if mag >> 64 == 0 {
        return (mag as u64, 0);
    }
    let drop = (128 - mag.leading_zeros()) - 63; // keep the top 63 bits
    let kept = (mag >> drop) as u64;
    let sticky = (mag & ((1u128 << drop) - 1) != 0) as u64;
    (kept | sticky, drop as i32)
}
