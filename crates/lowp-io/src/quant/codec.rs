//! Quantizing one chunk of a tensor into a block-scaled scheme, and decoding it back.
//!
//! # Exactness
//!
//! Every element is the correctly rounded value of the *exact* real quotient `x / scale`, by
//! the scale that is stored (or, for nvfp4, the exact product of the two stored scales), and
//! every scale is the correctly rounded value of its formula. lowp's engine does each rounding
//! once; what this module must make sure of is that the quotient it hands the engine rounds
//! the same way the exact one does:
//!
//! * MX (power-of-two scales): `x * 2^-E` is computed in the source's own type (f32 on lowp's
//!   vector paths, or f64). Multiplying by a power of two only changes the exponent, so the
//!   product is exact unless it is subnormal. It cannot overflow (`|x| <= amax <
//!   2^(E + emax + 2)` for every candidate `E`). When it is subnormal, `|x * 2^-E| < 2^-126`
//!   (2^-1022 in f64), and both that computed product and the exact one are far below half
//!   the smallest element subnormal (2^-10 for E4M3, 2^-2 for E2M1): both round to zero of the
//!   same sign (multiplication keeps the sign of a zero), and stochastic rounding, which
//!   rounds up with probability `floor(f * 2^32) / 2^32` where `f < 2^-116` here, never rounds
//!   either up.
//! * fp8-block and nvfp4 (scales that are not powers of two): `x / d` is computed in f64
//!   (f32 sources rounded to nearest take equivalent routes without it, proved in
//!   `nearest_f32`), with `d` a number of at most 28 significant bits (an f32 scale, or an
//!   E4M3 scale times an f32).
//!   **Lemma**: let `x` have at most 53 significant bits, `d > 0` at most `p`, and `t` (a tie
//!   between two neighbouring elements, or an overflow threshold) at most `53 - p`, with
//!   `t * d` in f64's normal range; then `fl64(x / d) = t` only if `x / d = t` exactly.
//!   *Proof.* Write `e_t`, `e_d` for the binary exponents (`2^e_t <= t < 2^(e_t + 1)`). `t *
//!   d` is an f64 of exponent at least `e_t + e_d`. If `x > t * d`, then `x >= t * d +
//!   2^(e_t + e_d - 52)`, so `x / d - t >= 2^(e_t + e_d - 52) / d > 2^(e_t - 53)`, half the
//!   spacing of f64s above `t`: the quotient rounds above `t`. If `x < t * d` and `t * d` is
//!   not a power of two, `t - x / d > 2^(e_t - 53)` likewise, at least half the spacing below
//!   `t`. If `t * d` is a power of two, so are `t` and `d` (their odd parts multiply to 1),
//!   the spacing below `t * d` halves, and `t - x / d >= 2^(e_t - 53)`, twice the half
//!   spacing below the power of two `t`. Either way the quotient rounds away from `t`. ∎
//!   E4M3's ties and its overflow threshold 464 have at most 5 bits, E2M1's (and 7) at most
//!   3, `d` at most 28, and `t * d >= 2^-10 * 2^-149` is normal. Rounding is monotonic, so a
//!   quotient strictly on one side of a tie stays on that side and cannot land on it: the
//!   element rounded from the f64 quotient is the correctly rounded one. The same holds for
//!   the block scales, quotients of `amax` (at most 53 bits) by 448 (3 bits), 2688 (5 bits) or
//!   `6 * scale_2` (26 bits), rounded to f32 (ties of 25 bits) or E4M3.
//!
//! Stochastic rounding of fp8-block and nvfp4 elements rounds the f64 quotient: its rounding-up
//! probability, already a multiple of `2^-32` in lowp, may differ from the exact quotient's by
//! `2^-32` in rare cases. Scales are always chosen deterministically.
//!
//! # Blocks with NaN or infinity
//!
//! Such a block's scale says so: the E8M0 NaN (255), the E4M3 NaN (0x7F) for nvfp4, and for
//! fp8-block an f32 NaN when the block holds a NaN, +infinity when it holds only infinities
//! (what `amax / 448` gives in IEEE arithmetic). Its elements are what the scale of the
//! block's finite values alone gives them: finite values round as in any block, an infinity
//! saturates to ±MAX (±0 where that scale is zero, fp8-block and nvfp4 blocks whose finite
//! values are all zero), and a NaN becomes E4M3's NaN of the same sign, or in E2M1, which has
//! no NaN, the zero of the opposite sign (as lowp and ml_dtypes convert NaN there). The
//! reference decoders turn such a block into NaN (±infinity or NaN under fp8-block's infinite
//! scale) anyway. Such blocks count in [`QuantStats::nonfinite`] (per non-finite element),
//! not in `signal`, `noise`, `clipped_blocks`, `flushed` or `saturated`.

pub mod long_row;

use super::nearest_f32;
use super::scheme::Scheme;
use lowp::bulk::{pack_f4, random_bits, unpack_f4};
use lowp::prelude::*;
use lowp::{Rounding, f4e2m1fn, f8e4m3fn};

/// fp8-block's scale: `scale_inv = amax / 448`.
const E4M3_MAX: f64 = 448.0;
/// nvfp4's per-tensor scale: `scale_2 = amax / (448 * 6)`.
const NVFP4_TENSOR_DIVISOR: f64 = 448.0 * 6.0;
/// The largest E2M1 value, which nvfp4's block scales map each block's amax to.
const E2M1_MAX: f64 = 6.0;

/// How elements are rounded.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ElementRounding {
    /// To nearest, ties to even (saturating to the element format's largest finite value).
    #[default]
    Nearest,
    /// Stochastically, as lowp's stochastic conversions round (see [`lowp::Rounding`]): element
    /// `i` of the whole tensor uses [`lowp::bulk::random_bits`]`(seed, i)`, so the result does
    /// not depend on how the tensor is cut into chunks. Saturating, like `Nearest`.
    Stochastic {
        /// The seed of the random bits.
        seed: u64,
    },
}

/// How each block's scale is chosen.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ScaleSearch {
    /// The scheme's formula (see [`Scheme`] and [`quantize`]).
    #[default]
    Spec,
    /// Per block, the candidate scale whose nearest-rounded elements give the least squared
    /// error `Σ(x - x̂)²`, the formula's own scale winning ties (so a block's error is never
    /// larger than with `Spec`, up to the rounding of the f64 sums). Candidates:
    ///
    /// * MX: the formula's exponent `E`, `E + 1` and `E - 1`, where E8M0 holds them;
    /// * nvfp4: the formula's E4M3 scale and the E4M3 values up to 3 steps above and below it
    ///   (non-negative and finite; a zero scale zeroes the block);
    /// * fp8-block: `f32(amax / 448 * f)` for `f` = 1 (the formula), 0.99, 0.98, ..., 0.90:
    ///   finer steps for all but the few largest elements of the block, which saturate.
    ///
    /// Blocks whose amax is zero and blocks with NaN or infinity keep the formula's scale.
    /// With [`ElementRounding::Stochastic`] the scale is chosen by the nearest-rounding error,
    /// then the elements are rounded stochastically.
    Mse,
}

/// The float type that fp8-block's and fp8-channel's scales are rounded to.
///
/// The scale bytes [`quantize`] writes and [`dequantize`] reads stay little-endian f32 in
/// every case; with `Bf16` or `F16` each of those f32s holds a value of that type, so a layout
/// that stores the scales in it (compressed-tensors gives a scale the dtype of the model's
/// weights, and a loader casts whatever the file holds to that dtype) converts them exactly.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ScaleType {
    /// f32 (DeepSeek-V3, transformers' fine-grained FP8).
    #[default]
    F32,
    /// bfloat16.
    Bf16,
    /// IEEE half precision.
    F16,
}

impl ScaleType {
    /// The scale of a block of finite positive `amax` under fp8's rule `amax / 448` times
    /// `factor` (1 for the rule itself, below 1 for [`ScaleSearch::Mse`]'s candidates),
    /// rounded to nearest in this type from the f64 quotient, then clamped to the type's
    /// smallest positive and largest finite value, so that a positive amax never gets scale 0
    /// nor infinity. Exact by the module's lemma: the f64 quotient cannot land on a tie of
    /// an f32 (25 bits), bf16 (9) or f16 (12) where the real quotient is not one.
    fn fp8_scale(self, amax: f64, factor: f64) -> f32 {
        let q = amax / E4M3_MAX * factor;
        match self {
            ScaleType::F32 => (q as f32).clamp(pow2_f32(-149), f32::MAX),
            ScaleType::Bf16 => lowp::bf16::from_f64(q)
                .clamp(lowp::bf16::from_bits(1), lowp::bf16::MAX)
                .to_f32(),
            ScaleType::F16 => lowp::f16::from_f64(q)
                .clamp(lowp::f16::from_bits(1), lowp::f16::MAX)
                .to_f32(),
        }
    }
}

/// How a chunk is quantized: element rounding, scale choice and the type of fp8 scales. The
/// default is the schemes' own: nearest even, formula scales, f32.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct QuantOptions {
    /// How elements round.
    pub rounding: ElementRounding,
    /// How block scales are chosen.
    pub search: ScaleSearch,
    /// The type fp8-block's and fp8-channel's scales are rounded to (the other schemes'
    /// scales have their own formats).
    pub scale_type: ScaleType,
}

/// What quantizing cost, mergeable across chunks and threads ([`QuantStats::merge`]).
///
/// `signal` and `noise` are gathered over the blocks without NaN or infinity; `x̂` is the
/// exactly dequantized value ([`dequantize_f64`]). Everything is computed in f64 from the exact
/// `x` and `x̂`: for f32 sources `x²` and, short of extreme saturation, `x - x̂` are exact, and
/// only squaring the differences and summing round.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct QuantStats {
    /// Elements quantized.
    pub elements: u64,
    /// `Σ x²`.
    pub signal: f64,
    /// `Σ (x - x̂)²`.
    pub noise: f64,
    /// Blocks quantized (a partial block at a row's end counts as one).
    pub blocks: u64,
    /// Blocks where some element's scaled value `|x / scale|` lay beyond where rounding to
    /// nearest would overflow the element format (above 464 for E4M3, from 7 up for E2M1), so
    /// saturation to ±MAX changed it. Judged by nearest rounding whatever
    /// [`QuantOptions::rounding`] is, and only for blocks without NaN or infinity.
    pub clipped_blocks: u64,
    /// Elements that were NaN or ±infinity.
    pub nonfinite: u64,
    /// The largest finite `|x|` (0 when there is none).
    pub amax: f64,
    /// Elements flushed to zero: a non-zero `x` whose element is ±0 (subnormal inputs
    /// included). Counted, as `signal` and `noise` are, only in blocks without NaN or infinity.
    pub flushed: u64,
    /// Elements saturated beyond the element format's top binade: `|x / scale|` at least
    /// `2^(emax + 1)` (512 for E4M3, 8 for E2M1), stored as ±MAX, so that saturation took
    /// more than an eighth (E4M3) or a quarter (E2M1) of the value. The schemes' formulas keep
    /// a block's elements below that bound (OCP MX's shared exponent clips only within the top
    /// binade, which [`QuantStats::clipped_blocks`] counts) unless the scale could not be
    /// chosen: clamped to the range of its own type (an f64 amax beyond what an f32 or E8M0
    /// scale reaches), or an nvfp4 block scale rounded among E4M3's subnormals, far below the
    /// tensor's amax. [`ScaleSearch::Mse`] may pass it where that lowers a block's squared
    /// error. Counted only in blocks without NaN or infinity.
    pub saturated: u64,
}

impl QuantStats {
    /// Adds `other`'s counts and sums to these, and keeps the larger amax.
    pub fn merge(&mut self, other: &QuantStats) {
        self.elements += other.elements;
        self.signal += other.signal;
        self.noise += other.noise;
        self.blocks += other.blocks;
        self.clipped_blocks += other.clipped_blocks;
        self.nonfinite += other.nonfinite;
        self.amax = self.amax.max(other.amax);
        self.flushed += other.flushed;
        self.saturated += other.saturated;
    }

    /// Signal-to-quantization-noise ratio in decibels, `10 log10(signal / noise)`: +infinity
    /// when the quantization was exact (`noise` is 0, an all-zero or empty chunk included),
    /// NaN when there were NaN or infinite inputs (the figure would describe only part of the
    /// tensor).
    pub fn sqnr_db(&self) -> f64 {
        if self.nonfinite > 0 {
            f64::NAN
        } else if self.noise == 0.0 {
            f64::INFINITY
        } else {
            10.0 * (self.signal / self.noise).log10()
        }
    }

    /// Relative Frobenius error `sqrt(noise / signal)` = ‖x - x̂‖ / ‖x‖: 0 when the
    /// quantization was exact, NaN when there were NaN or infinite inputs.
    pub fn rel_frobenius(&self) -> f64 {
        if self.nonfinite > 0 {
            f64::NAN
        } else if self.noise == 0.0 {
            0.0
        } else {
            (self.noise / self.signal).sqrt()
        }
    }

    /// The share of blocks that clipped, `clipped_blocks / blocks` (0 with no blocks).
    pub fn clipped_share(&self) -> f64 {
        if self.blocks == 0 {
            0.0
        } else {
            self.clipped_blocks as f64 / self.blocks as f64
        }
    }
}

mod sealed {
    use super::{Divisor, ElementRounding, SEG, round_f32, round_f64, zeroed};
    use lowp::LowpFloat;

    /// The buffers the quotients of a segment are rounded from, made once per call of
    /// [`super::quantize`] (zeroing them per block would cost more than the block).
    pub struct Scratch {
        pub f32s: [f32; SEG],
        pub f64s: [f64; SEG],
    }

    impl Scratch {
        pub fn new() -> Scratch {
            Scratch {
                f32s: [0.0; SEG],
                f64s: [0.0; SEG],
            }
        }
    }

    /// What one scan of a block finds.
    #[derive(Clone, Copy, Debug, Default)]
    pub struct Scan {
        /// The largest finite magnitude (0 when none).
        pub amax: f64,
        /// NaN and infinite elements.
        pub nonfinite: u64,
        /// Whether one of them is a NaN.
        pub nan: bool,
    }

    impl Scan {
        pub fn merge(&mut self, other: Scan) {
            self.amax = self.amax.max(other.amax);
            self.nonfinite += other.nonfinite;
            self.nan |= other.nan;
        }
    }

    /// The per-type work behind [`super::QuantSource`].
    pub trait Sealed: Copy {
        /// The value, exactly.
        fn widen(self) -> f64;
        /// The values as f32s, where they are f32s.
        fn as_f32s(src: &[Self]) -> Option<&[f32]>;
        /// The block's amax and non-finite count.
        fn scan(src: &[Self]) -> Scan;
        /// Elements of consecutive blocks of `block` values (`divs[b]` for block `b`),
        /// rounded as `rounding` says, into `dst[..src.len()]`; element `i` is element `first +
        /// i` of the tensor. `src.len() <= SEG`; `dst` holds at least `padded(src.len())`
        /// values, those past `src.len()` scratch.
        #[inline(always)]
        fn encode<T: LowpFloat>(
            src: &[Self],
            divs: &[Divisor],
            block: usize,
            rounding: ElementRounding,
            first: u64,
            scratch: &mut Scratch,
            dst: &mut [T],
        ) {
            encode_f64(src, divs, block, rounding, first, scratch, dst);
        }
    }

    /// [`Sealed::encode`] through f64 quotients, for every source type and divisor.
    #[inline(always)]
    pub fn encode_f64<S: Sealed, T: LowpFloat>(
        src: &[S],
        divs: &[Divisor],
        block: usize,
        rounding: ElementRounding,
        first: u64,
        scratch: &mut Scratch,
        dst: &mut [T],
    ) {
        let buf = &mut scratch.f64s;
        for ((s, b), &d) in src.chunks(block).zip(buf.chunks_mut(block)).zip(divs) {
            match d {
                Divisor::Zero => b
                    .iter_mut()
                    .zip(s)
                    .for_each(|(y, x)| *y = zeroed(x.widen())),
                Divisor::Pow2(e) => {
                    let m = super::pow2_f64(-e);
                    b.iter_mut().zip(s).for_each(|(y, x)| *y = x.widen() * m);
                }
                Divisor::Div(d) => b.iter_mut().zip(s).for_each(|(y, x)| *y = x.widen() / d),
            }
        }
        round_f64(buf, src.len(), dst, rounding, first);
    }

    impl Sealed for f32 {
        #[inline(always)]
        fn widen(self) -> f64 {
            self as f64
        }

        fn as_f32s(src: &[f32]) -> Option<&[f32]> {
            Some(src)
        }

        #[inline(always)]
        fn scan(src: &[f32]) -> Scan {
            // The magnitude bits order finite values as their magnitudes do, and every NaN and
            // infinity above them: one integer max (a vector loop) settles the common case.
            let top = |x: &[f32]| x.iter().fold(0u32, |m, x| m.max(x.to_bits() & 0x7fff_ffff));
            let top = match src.len() {
                // The block lengths of the row-wise schemes, as constants: straight-line code.
                16 => top(&src[..16]),
                32 => top(&src[..32]),
                _ => top(src),
            };
            if top < 0x7f80_0000 {
                return Scan {
                    amax: f32::from_bits(top) as f64,
                    nonfinite: 0,
                    nan: false,
                };
            }
            let mut scan = Scan::default();
            for &x in src {
                if x.is_finite() {
                    scan.amax = scan.amax.max(x.abs() as f64);
                } else {
                    scan.nonfinite += 1;
                    scan.nan |= x.is_nan();
                }
            }
            scan
        }

        #[inline(always)]
        fn encode<T: LowpFloat>(
            src: &[f32],
            divs: &[Divisor],
            block: usize,
            rounding: ElementRounding,
            first: u64,
            scratch: &mut Scratch,
            dst: &mut [T],
        ) {
            // Power-of-two scales stay in f32, exact (see the module doc), so lowp's f32 vector
            // paths round them; 2^-e must itself be a normal f32, which it is for every MX
            // exponent of an f32 block (e <= 120).
            let pow2_only = divs
                .iter()
                .all(|d| matches!(d, Divisor::Zero) || matches!(d, Divisor::Pow2(e) if *e <= 126));
            if !pow2_only {
                return encode_f64(src, divs, block, rounding, first, scratch, dst);
            }
            let buf = &mut scratch.f32s;
            for ((s, b), &d) in src.chunks(block).zip(buf.chunks_mut(block)).zip(divs) {
                if let Divisor::Pow2(e) = d {
                    let m = super::pow2_f32(-e);
                    b.iter_mut().zip(s).for_each(|(y, &x)| *y = x * m);
                } else {
                    b.iter_mut()
                        .zip(s)
                        .for_each(|(y, &x)| *y = zeroed(x as f64) as f32);
                }
            }
            round_f32(buf, src.len(), dst, rounding, first);
        }
    }

    impl Sealed for f64 {
        #[inline]
        fn widen(self) -> f64 {
            self
        }

        fn as_f32s(_: &[f64]) -> Option<&[f32]> {
            None
        }

        #[inline(always)]
        fn scan(src: &[f64]) -> Scan {
            let top = src
                .iter()
                .fold(0u64, |m, x| m.max(x.to_bits() & 0x7fff_ffff_ffff_ffff));
            if top < 0x7ff0_0000_0000_0000 {
                return Scan {
                    amax: f64::from_bits(top),
                    nonfinite: 0,
                    nan: false,
                };
            }
            let mut scan = Scan::default();
            for &x in src {
                if x.is_finite() {
                    scan.amax = scan.amax.max(x.abs());
                } else {
                    scan.nonfinite += 1;
                    scan.nan |= x.is_nan();
                }
            }
            scan
        }
    }
}

use super::divisor::{Divisor, SEG, SEG_BLOCKS, pow2_f64, zeroed};
use sealed::{Scan, Scratch};

/// A source element type: `f32` or `f64`. Both are quantized exactly (see the module
/// documentation); f32 MX blocks take lowp's f32 vector paths, f32 fp8-block and nvfp4 blocks
/// rounded to nearest the f32 routes of `nearest_f32`, everything else f64
/// quotients.
pub trait QuantSource: Copy + Send + Sync + 'static + sealed::Sealed {}

impl QuantSource for f32 {}
impl QuantSource for f64 {}

/// `2^k` as an f32 (subnormal below 2^-126), for `-149 <= k <= 127`.
#[inline]
fn pow2_f32(k: i32) -> f32 {
    debug_assert!((-149..=127).contains(&k));
    if k >= -126 {
        f32::from_bits(((k + 127) as u32) << 23)
    } else {
        f32::from_bits(1 << (k + 149))
    }
}

/// `floor(log2(x))` for a positive finite `x`, exactly (subnormals included).
#[inline]
fn floor_log2(x: f64) -> i32 {
    let bits = x.to_bits();
    let field = ((bits >> 52) & 0x7ff) as i32;
    if field == 0 {
        // Subnormal: the leading one of the mantissa sets the exponent.
        -1074 + 63 - (bits & ((1 << 52) - 1)).leading_zeros() as i32
    } else {
        field - 1023
    }
}

/// lowp's vector paths convert blocks of 64 values (16 lanes unrolled 4 times, or fewer) and
/// take a tail shorter than that through a padded path that costs far more than the block
/// itself; bulk calls here are rounded up to whole blocks instead, the values past the real
/// ones being scratch.
const PAD: usize = 64;

/// `n` rounded up to whole [`PAD`] blocks (at most [`SEG`] for `n <= SEG`).
#[inline]
fn padded(n: usize) -> usize {
    n.next_multiple_of(PAD)
}

/// Rounds `buf[..n]` into `dst[..n]` (saturating): to nearest on lowp's bulk path, or
/// stochastically with the random bits of element `first + i`, as lowp's stochastic slice
/// conversions do. Both slices hold at least `padded(n)` values; past `n` they are scratch.
fn round_f32<T: LowpFloat>(
    buf: &mut [f32],
    n: usize,
    dst: &mut [T],
    rounding: ElementRounding,
    first: u64,
) {
    match rounding {
        ElementRounding::Nearest => {
            let m = padded(n);
            buf[n..m].fill(0.0);
            dst[..m].convert_from_f32_slice_saturating(&buf[..m]);
        }
        ElementRounding::Stochastic { seed } => {
            for (i, (d, &x)) in dst[..n].iter_mut().zip(&buf[..n]).enumerate() {
                let bits = random_bits(seed, first.wrapping_add(i as u64));
                *d = T::from_f32_round_saturating(x, Rounding::Stochastic(bits));
            }
        }
    }
}

/// [`round_f32`] for f64s, rounded directly (no double rounding through f32).
fn round_f64<T: LowpFloat>(
    buf: &mut [f64],
    n: usize,
    dst: &mut [T],
    rounding: ElementRounding,
    first: u64,
) {
    match rounding {
        ElementRounding::Nearest => {
            let m = padded(n);
            buf[n..m].fill(0.0);
            dst[..m].convert_from_f64_slice_saturating(&buf[..m]);
        }
        ElementRounding::Stochastic { seed } => {
            for (i, (d, &x)) in dst[..n].iter_mut().zip(&buf[..n]).enumerate() {
                let bits = random_bits(seed, first.wrapping_add(i as u64));
                *d = T::from_f64_round_saturating(x, Rounding::Stochastic(bits));
            }
        }
    }
}

/// Widens `elems[..n]` exactly into `q[..n]`; both hold at least `padded(n)` values.
fn widen<T: LowpFloat>(elems: &[T], n: usize, q: &mut [f32]) {
    let m = padded(n);
    elems[..m].convert_to_f32_slice(&mut q[..m]);
}

/// An element format of the schemes: E4M3 or E2M1.
trait Elem: LowpFloat {
    /// The exponent of the largest binade (`floor(log2(MAX))`), MX's `emax_elem`.
    const EMAX: i32;
    /// Whether a magnitude `a` divided by `step` (positive) overflows under rounding to
    /// nearest with an unbounded exponent. Compared as `a` against the threshold times `step`,
    /// a product exact in f64 (a threshold of at most 5 bits, a step of at most 28), so no
    /// quotient is rounded.
    fn overflows(a: f64, step: f64) -> bool;
    /// Whether a magnitude `a` divided by `step` (positive) lies beyond the top binade, at
    /// least `2^(EMAX + 1)` ([`QuantStats::saturated`]). The product is exact in f64 (a power
    /// of two times a step of at most 28 bits, within f64's range).
    #[inline(always)]
    fn beyond_top(a: f64, step: f64) -> bool {
        a >= pow2_f64(Self::EMAX + 1) * step
    }
    /// Writes the elements of one segment into its bytes of a data row (`out` holds exactly
    /// their bytes).
    fn store(elems: &[Self], out: &mut [u8]);
    /// The data bytes of `n` elements.
    fn bytes(n: usize) -> usize;
    /// The `elems.len()` elements stored in `bytes` (exactly their bytes).
    fn load(bytes: &[u8], elems: &mut [Self]);
    /// [`sealed::Sealed::encode`] to nearest for f32 sources by a route of [`nearest_f32`],
    /// with no f64 quotients, and what it wrote into `widened` besides (see [`encode`]);
    /// `None`, writing nothing, where it has no route for these divisors.
    fn nearest_from_f32(
        src: &[f32],
        divs: &[Divisor],
        block: usize,
        scratch: &mut Scratch,
        dst: &mut [Self],
        widened: &mut [f32],
    ) -> Option<Encoded>;
}

/// What [`encode`] wrote besides the elements.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Encoded {
    /// Nothing: the caller widens the elements if it needs them ([`widen`]).
    Elements,
    /// The elements widened, as [`widen`] gives them (a route that decodes them anyway).
    AndWidened,
}

/// [`sealed::Sealed::encode`] for element type `T`: by a route of [`nearest_f32`] where one
/// applies (f32 sources rounded to nearest under fp8-block's and nvfp4's scales), else by the
/// source type's own. `widened` (as long as `dst`) receives the elements widened to f32 where
/// the answer says so.
#[allow(clippy::too_many_arguments)] // as Sealed::encode
#[inline(always)]
fn encode<S: QuantSource, T: Elem>(
    src: &[S],
    divs: &[Divisor],
    block: usize,
    rounding: ElementRounding,
    first: u64,
    scratch: &mut Scratch,
    dst: &mut [T],
    widened: &mut [f32],
) -> Encoded {
    if rounding == ElementRounding::Nearest
        && let Some(x) = S::as_f32s(src)
        && let Some(encoded) = T::nearest_from_f32(x, divs, block, scratch, dst, widened)
    {
        return encoded;
    }
    S::encode(src, divs, block, rounding, first, scratch, dst);
    Encoded::Elements
}

impl Elem for f8e4m3fn {
    const EMAX: i32 = 8;
    fn overflows(a: f64, step: f64) -> bool {
        // 448 = 1.110b * 2^8 has an even mantissa, so the tie 464 with the missing 480 rounds
        // down to it: only beyond 464 does saturation decide.
        a > 464.0 * step
    }
    fn store(elems: &[Self], out: &mut [u8]) {
        out.iter_mut()
            .zip(elems)
            .for_each(|(b, e)| *b = e.to_bits());
    }
    fn bytes(n: usize) -> usize {
        n
    }
    fn load(bytes: &[u8], elems: &mut [Self]) {
        elems.copy_from_slice(bytemuck::cast_slice(bytes));
    }
    #[inline(always)]
    fn nearest_from_f32(
        src: &[f32],
        divs: &[Divisor],
        block: usize,
        scratch: &mut Scratch,
        dst: &mut [Self],
        _: &mut [f32],
    ) -> Option<Encoded> {
        let padded = padded(src.len());
        nearest_f32::e4m3(src, divs, block, padded, &mut scratch.f32s, dst)
            .then_some(Encoded::Elements)
    }
}

impl Elem for f4e2m1fn {
    const EMAX: i32 = 2;
    fn overflows(a: f64, step: f64) -> bool {
        // 6 = 1.1b * 2^2 has an odd mantissa, so the tie 7 rounds up to the missing 8.
        a >= 7.0 * step
    }
    fn store(elems: &[Self], out: &mut [u8]) {
        pack_f4(elems, out);
    }
    fn bytes(n: usize) -> usize {
        n.div_ceil(2)
    }
    fn load(bytes: &[u8], elems: &mut [Self]) {
        unpack_f4(bytes, elems);
    }
    #[inline(always)]
    fn nearest_from_f32(
        src: &[f32],
        divs: &[Divisor],
        block: usize,
        scratch: &mut Scratch,
        dst: &mut [Self],
        widened: &mut [f32],
    ) -> Option<Encoded> {
        let padded = padded(src.len());
        let quotients = &mut scratch.f32s;
        nearest_f32::e2m1(src, divs, block, padded, quotients, dst, widened)
            .then_some(Encoded::AndWidened)
    }
}

/// Rows of `cols` columns in `len` values, or why not.
fn rows_of(what: &str, scheme: Scheme, len: usize, cols: usize) -> Result<usize, String> {
    let rows = if cols == 0 {
        if len != 0 {
            return Err(format!(
                "{scheme}: {what} has {len} values but cols is 0 (no row can hold them)"
            ));
        }
        0
    } else if !len.is_multiple_of(cols) {
        return Err(format!(
            "{scheme}: {what} has {len} values, not a whole number of rows of {cols} columns"
        ));
    } else {
        len / cols
    };
    if scheme == Scheme::Fp8Block && rows > scheme.block_rows() {
        return Err(format!(
            "{scheme}: {what} has {rows} rows, but one call takes one band of at most {} rows \
             of one matrix",
            scheme.block_rows()
        ));
    }
    Ok(rows)
}

/// Checks the byte lengths of `data` and `scales` for `rows` x `cols`.
fn check_bytes(
    scheme: Scheme,
    rows: usize,
    cols: usize,
    data: usize,
    scales: usize,
) -> Result<(), String> {
    let want_data = rows * scheme.data_row_bytes(cols);
    if data != want_data {
        return Err(format!(
            "{scheme}: data has {data} bytes, but {rows} rows of {cols} columns take {want_data}"
        ));
    }
    let want_scales = scheme.scale_bytes(rows, cols);
    if scales != want_scales {
        return Err(format!(
            "{scheme}: scales have {scales} bytes, but {rows} rows of {cols} columns take \
             {want_scales}"
        ));
    }
    Ok(())
}

/// The largest finite `|x|` of `src`, as an exact f64 (0 when there is none; NaN and ±infinity
/// are ignored): the first pass that gives nvfp4's [`nvfp4_tensor_scale`].
///
/// ```
/// assert_eq!(lowp_io::quant::amax(&[1.0f32, -7.5, f32::INFINITY, f32::NAN]), 7.5);
/// ```
pub fn amax<S: QuantSource>(src: &[S]) -> f64 {
    lowp::vectorized(
        #[inline(always)]
        || src.chunks(SEG).map(|c| S::scan(c).amax).fold(0.0, f64::max),
    )
}

/// nvfp4's per-tensor `scale_2 = amax / (448 * 6)`, correctly rounded to f32 from the exact
/// quotient; `amax` is the tensor's largest finite magnitude ([`amax`]; its sign is ignored).
///
/// 0 for `amax` 0 (then every block scale is 0 and every element ±0). A positive `amax` never
/// gives 0: a quotient below the smallest f32 gives that smallest subnormal, 2^-149, so tiny
/// tensors keep their values. Beyond `f32::MAX` it saturates to `f32::MAX`; NaN gives NaN.
///
/// ```
/// use lowp_io::quant::nvfp4_tensor_scale;
/// assert_eq!(nvfp4_tensor_scale(2688.0), 1.0);
/// assert_eq!(nvfp4_tensor_scale(0.0), 0.0);
/// ```
pub fn nvfp4_tensor_scale(amax: f64) -> f32 {
    let a = amax.abs();
    if a.is_nan() || a == 0.0 {
        return a as f32;
    }
    // One f64 division then one rounding to f32: exact by the lemma (2688 has 5 bits).
    ((a / NVFP4_TENSOR_DIVISOR) as f32).clamp(pow2_f32(-149), f32::MAX)
}

/// nvfp4's per-tensor `scale_2` where a loader divides by its inverse (compressed-tensors'
/// `global_scale = 1 / scale_2`): the smallest power of two at or above the exact quotient
/// `amax / (448 * 6)`, so that the inverse is exact and the block scales stay within E4M3
/// (each block's `amax / (6 * scale_2)` is at most 448). Clamped to `2^-126 ..= 2^127`, whose
/// inverses are normal f32s; 1 for `amax` 0 or NaN (every block scale is then 0).
///
/// *Exactness.* With `2^f <= amax < 2^(f+1)` (`floor_log2`, exact) and `2688 = 1.3125 *
/// 2^11`, `2688 * 2^(f-12) < 2^f <= amax`, so the answer is `2^(f-11)` when `amax <= 2688 *
/// 2^(f-11)` and `2^(f-10)` otherwise; that product is exact in f64.
///
/// ```
/// use lowp_io::quant::nvfp4_pow2_tensor_scale;
/// assert_eq!(nvfp4_pow2_tensor_scale(2688.0), 1.0);
/// assert_eq!(nvfp4_pow2_tensor_scale(2688.0 * (1.0 + 2f64.powi(-30))), 2.0);
/// assert_eq!(nvfp4_pow2_tensor_scale(0.0), 1.0);
/// ```
pub fn nvfp4_pow2_tensor_scale(amax: f64) -> f32 {
    let a = amax.abs();
    if a.is_nan() || a == 0.0 {
        return 1.0;
    }
    let f = floor_log2(a);
    let k = if f - 10 <= -126 {
        -126
    } else if f - 11 >= 127 {
        127
    } else if a <= NVFP4_TENSOR_DIVISOR * pow2_f64(f - 11) {
        f - 11
    } else {
        f - 10
    };
    pow2_f32(k.clamp(-126, 127))
}

/// A block's scale: its stored bits and what the elements are divided by.
#[derive(Clone, Copy, Debug)]
struct Choice {
    /// The E8M0 byte, the E4M3 byte or the f32 bits of the scale.
    bits: u32,
    /// The divisor the elements use.
    div: Divisor,
}

impl Choice {
    /// Scale 0 (a placeholder for buffers).
    const ZERO: Choice = Choice {
        bits: 0,
        div: Divisor::Zero,
    };
}

/// The scale the scheme's formula gives a block of finite amax `amax` (`scale_type`: the
/// type of fp8 scales).
#[inline]
fn spec_choice<T: Elem>(scheme: Scheme, amax: f64, scale_2: f32, scale_type: ScaleType) -> Choice {
    match scheme {
        Scheme::Fp8Block | Scheme::Fp8Channel => {
            if amax == 0.0 {
                return Choice {
                    bits: 0,
                    div: Divisor::Zero,
                };
            }
            let s = scale_type.fp8_scale(amax, 1.0);
            Choice {
                bits: s.to_bits(),
                div: Divisor::Div(s as f64),
            }
        }
        Scheme::Mxfp8 | Scheme::Mxfp4 => {
            // X = floor(log2(amax)) - emax, stored as X + 127 in 0..=254; zero amax gives 0.
            let biased = if amax == 0.0 {
                0
            } else {
                (floor_log2(amax) - T::EMAX + 127).clamp(0, 254)
            };
            mx_choice(biased)
        }
        Scheme::Nvfp4 => {
            if amax == 0.0 || scale_2 == 0.0 {
                return nv_choice(0, scale_2);
            }
            // amax / (6 * scale_2): 6 * scale_2 is exact in f64, the quotient exact by the
            // lemma; saturating at 448 when the caller's scale_2 is too small for this block.
            let s = f8e4m3fn::from_f64_saturating(amax / (E2M1_MAX * scale_2 as f64));
            // ModelOpt clamps a block scale at E4M3's smallest subnormal rather than letting a
            // small non-zero block round to scale 0 and vanish: every element then rounds to
            // its nearest, which is never worse than 0.
            nv_choice(s.to_bits().max(1) as u32, scale_2)
        }
    }
}

/// [`spec_choice`] of the blocks of one segment (at most [`SEG_BLOCKS`]), into `out`. nvfp4's
/// E4M3 block scales are rounded in one bulk conversion of the segment's quotients, which
/// takes lowp's vector path, rather than one scalar conversion per block of 16 values; the
/// result is the same, the rounding being the same saturating one.
#[inline(always)]
fn spec_choices<T: Elem>(scheme: Scheme, scans: &[Scan], scale_2: f32, out: &mut [Choice]) {
    debug_assert!(scans.len() == out.len() && out.len() <= SEG_BLOCKS);
    if scheme != Scheme::Nvfp4 || scale_2 == 0.0 {
        for (c, scan) in out.iter_mut().zip(scans) {
            *c = spec_choice::<T>(scheme, scan.amax, scale_2, ScaleType::F32);
        }
        return;
    }
    let divisor = E2M1_MAX * scale_2 as f64;
    let mut quotients = [0f64; SEG_BLOCKS];
    for (q, scan) in quotients.iter_mut().zip(scans) {
        *q = scan.amax / divisor;
    }
    let mut scales = [f8e4m3fn::ZERO; SEG_BLOCKS];
    scales.convert_from_f64_slice_saturating(&quotients);
    for ((c, scan), s) in out.iter_mut().zip(scans).zip(scales) {
        *c = if scan.amax == 0.0 {
            nv_choice(0, scale_2)
        } else {
            nv_choice(s.to_bits().max(1) as u32, scale_2)
        };
    }
}

/// The MX scale of biased exponent `biased` (0..=254).
#[inline]
fn mx_choice(biased: i32) -> Choice {
    Choice {
        bits: biased as u32,
        div: Divisor::Pow2(biased - 127),
    }
}

/// The nvfp4 block scale of E4M3 bits `bits` (finite, non-negative).
#[inline]
fn nv_choice(bits: u32, scale_2: f32) -> Choice {
    let s = f8e4m3fn::from_bits(bits as u8).to_f64();
    // Both factors are exact f64s of 4 and 24 bits: the product is exact.
    let d = s * scale_2 as f64;
    Choice {
        bits,
        div: if d == 0.0 {
            Divisor::Zero
        } else {
            Divisor::Div(d)
        },
    }
}

/// The fp8-block factors [`ScaleSearch::Mse`] tries besides 1.
const FP8_BLOCK_FACTORS: [f64; 10] = [0.99, 0.98, 0.97, 0.96, 0.95, 0.94, 0.93, 0.92, 0.91, 0.90];

/// The nvfp4 steps (in E4M3 patterns) [`ScaleSearch::Mse`] tries around the formula's scale.
const NVFP4_STEPS: [i32; 6] = [1, -1, 2, -2, 3, -3];

/// How many candidates [`ScaleSearch::Mse`] tries besides the formula's scale.
fn candidate_count(scheme: Scheme) -> usize {
    match scheme {
        Scheme::Fp8Block | Scheme::Fp8Channel => FP8_BLOCK_FACTORS.len(),
        Scheme::Mxfp8 | Scheme::Mxfp4 => 2,
        Scheme::Nvfp4 => NVFP4_STEPS.len(),
    }
}

/// Candidate `k` (`< candidate_count`) besides `spec` for a block of amax `amax`, or `None`
/// where the scale format cannot hold it.
fn candidate(
    scheme: Scheme,
    spec: Choice,
    amax: f64,
    scale_2: f32,
    scale_type: ScaleType,
    k: usize,
) -> Option<Choice> {
    match scheme {
        Scheme::Fp8Block | Scheme::Fp8Channel => {
            let s = scale_type.fp8_scale(amax, FP8_BLOCK_FACTORS[k]);
            Some(Choice {
                bits: s.to_bits(),
                div: Divisor::Div(s as f64),
            })
        }
        Scheme::Mxfp8 | Scheme::Mxfp4 => {
            let b = spec.bits as i32 + [1, -1][k];
            (0..=254).contains(&b).then(|| mx_choice(b))
        }
        Scheme::Nvfp4 => {
            // 0x7F is E4M3's NaN; every pattern below it is a finite non-negative scale.
            let b = spec.bits as i32 + NVFP4_STEPS[k];
            (0..0x7f).contains(&b).then(|| nv_choice(b as u32, scale_2))
        }
    }
}

/// Whether [`ScaleSearch::Mse`] searches a block: not a zero block (nothing to gain) nor one
/// with NaN or infinity (its scale is NaN anyway).
fn searched(scan: Scan, spec: Choice) -> bool {
    scan.nonfinite == 0 && !matches!(spec.div, Divisor::Zero)
}

/// `(Σ x², Σ (x - q * step)²)` over a block (see [`Errors`]).
fn block_error<S: QuantSource>(x: &[S], q: &[f32], step: f64) -> (f64, f64) {
    let mut errors = Errors::default();
    errors.add(x, q, step);
    errors.sums()
}

/// Independent lanes of `Σ x²` and `Σ (x - q * step)²`, in f64, and of the count of elements
/// flushed to zero, over any number of blocks:
/// `q * step` is exact (at most 4 + 28 bits), each difference is rounded once. The lanes let
/// the loop run on vectors; adding them up once per segment rather than per block of 16 or 32
/// values keeps that sum (a chain of dependent additions) off the per-element cost.
#[derive(Default)]
struct Errors {
    sig: [[f64; 4]; 2],
    noise: [[f64; 4]; 2],
    /// Elements flushed to zero ([`QuantStats::flushed`]), per lane.
    flushed: [[u64; 4]; 2],
}

impl Errors {
    /// Adds the values `x` of one block, quantized to `q` with `step`.
    #[inline(always)]
    fn add<S: QuantSource>(&mut self, x: &[S], q: &[f32], step: f64) {
        debug_assert_eq!(x.len(), q.len());
        match x.len() {
            // The block lengths of the row-wise schemes, as constants: straight-line code.
            16 => self.add_any(&x[..16], &q[..16], step),
            32 => self.add_any(&x[..32], &q[..32], step),
            n => self.add_any(x, &q[..n], step),
        }
    }

    /// [`Errors::add`] for any length.
    #[inline(always)]
    fn add_any<S: QuantSource>(&mut self, x: &[S], q: &[f32], step: f64) {
        let xs = x.chunks_exact(8);
        let qs = q.chunks_exact(8);
        let (xr, qr) = (xs.remainder(), qs.remainder());
        for (x, q) in xs.zip(qs) {
            // Two groups of four lanes, each a whole-array operation at every step, which the
            // compiler turns into one vector instruction each (an f64 vector of AVX).
            for h in 0..2 {
                let v: [f64; 4] = core::array::from_fn(|j| x[4 * h + j].widen());
                let y: [f64; 4] = core::array::from_fn(|j| q[4 * h + j] as f64 * step);
                let e: [f64; 4] = core::array::from_fn(|j| v[j] - y[j]);
                // Flushed: a non-zero value whose element is ±0, from the element itself (a
                // zero scale makes every `y` zero, but only for blocks of zeros).
                let z: [u64; 4] =
                    core::array::from_fn(|j| u64::from((v[j] != 0.0) & (q[4 * h + j] == 0.0)));
                let (sig, noise) = (&mut self.sig[h], &mut self.noise[h]);
                *sig = core::array::from_fn(|j| sig[j] + v[j] * v[j]);
                *noise = core::array::from_fn(|j| noise[j] + e[j] * e[j]);
                let flushed = &mut self.flushed[h];
                *flushed = core::array::from_fn(|j| flushed[j] + z[j]);
            }
        }
        for (j, (x, &q)) in xr.iter().zip(qr).enumerate() {
            let v = x.widen();
            let e = v - q as f64 * step;
            self.sig[j / 4][j % 4] += v * v;
            self.noise[j / 4][j % 4] += e * e;
            self.flushed[j / 4][j % 4] += u64::from((v != 0.0) & (q == 0.0));
        }
    }

    /// `(Σ x², Σ (x - x̂)²)`.
    fn sums(&self) -> (f64, f64) {
        (
            self.sig.iter().flatten().sum(),
            self.noise.iter().flatten().sum(),
        )
    }

    /// Adds the sums and the flushed count to `stats`.
    fn into_stats(self, stats: &mut QuantStats) {
        let (sig, noise) = self.sums();
        stats.signal += sig;
        stats.noise += noise;
        stats.flushed += self.flushed.iter().flatten().sum::<u64>();
    }
}

/// A call's buffers: quotients, rounded elements, and the elements widened back; made once
/// per call of [`quantize`].
struct Work<T> {
    scratch: Scratch,
    elems: [T; SEG],
    q: [f32; SEG],
}

impl<T: Elem> Work<T> {
    fn new() -> Work<T> {
        Work {
            scratch: Scratch::new(),
            elems: [T::default(); SEG],
            q: [0.0; SEG],
        }
    }

    /// Rounds `x` (blocks of `block` values under `divs`) to nearest and widens the elements
    /// back into `self.q[..x.len()]`.
    fn trial<S: QuantSource>(&mut self, x: &[S], divs: &[Divisor], block: usize) {
        let encoded = encode(
            x,
            divs,
            block,
            ElementRounding::Nearest,
            0,
            &mut self.scratch,
            &mut self.elems,
            &mut self.q,
        );
        if encoded == Encoded::Elements {
            widen(&self.elems, x.len(), &mut self.q);
        }
    }
}

/// The stored scale bits of a block: the choice's, or the NaN/infinity marks of a non-finite
/// block (see the module doc).
fn stored_bits(scheme: Scheme, choice: Choice, scan: Scan) -> u32 {
    if scan.nonfinite == 0 {
        return choice.bits;
    }
    match scheme {
        Scheme::Fp8Block | Scheme::Fp8Channel if scan.nan => f32::NAN.to_bits(),
        Scheme::Fp8Block | Scheme::Fp8Channel => f32::INFINITY.to_bits(),
        Scheme::Mxfp8 | Scheme::Mxfp4 => 0xff,
        Scheme::Nvfp4 => 0x7f,
    }
}

/// Quantizes `src`, whole rows of `cols` columns, into `data` and `scales`, and says what it
/// cost.
///
/// * `src`: `rows * cols` values, row-major. For [`Scheme::Fp8Block`] these are one band of
///   at most 128 rows of one matrix (the caller cuts each matrix of a 3-D+ tensor into bands
///   of 128 rows, the last possibly shorter); for the others any whole rows.
/// * `data`: exactly `rows * scheme.data_row_bytes(cols)` bytes; `scales`: `rows *
///   scheme.scale_row_bytes(cols)` bytes, or for fp8-block the band's `scale_row_bytes(cols)`
///   (none for 0 rows): exactly [`Scheme::scale_bytes`]`(rows, cols)`.
/// * `first_element`: the index in the whole tensor of `src[0]`, which stochastic rounding's
///   random bits depend on (so the result does not depend on the chunking).
/// * `tensor_scale`: nvfp4's `scale_2` from [`nvfp4_tensor_scale`] of the whole tensor's
///   [`amax`] (ignored by the other schemes); it must be finite and non-negative.
///
/// The scales, per block, from its largest finite magnitude `amax`:
///
/// * fp8-block: `scale_inv = f32(amax / 448)` (little-endian f32), elements `e4m3(x /
///   scale_inv)`. A zero block gets scale 0 and elements ±0 (the sign of each zero kept). A
///   positive amax whose quotient underflows f32 gets 2^-149, one beyond f32 gets `f32::MAX`
///   (f64 sources only). With [`QuantOptions::scale_type`] bf16 or f16 the scale is rounded
///   to that type instead (and clamped to its range), still stored as an f32.
/// * fp8-channel: the same, with one scale per row.
/// * mxfp8 / mxfp4: E8M0 `s = clamp(floor(log2(amax)) - emax + 127, 0, 254)` (emax 8 for
///   E4M3, 2 for E2M1), elements `e(x / 2^(s - 127))`; a zero block gets `s = 0` and elements
///   ±0 (both element formats have -0, which is kept).
/// * nvfp4: E4M3 `s = e4m3(amax / (6 * scale_2))`, but at least E4M3's smallest subnormal
///   2^-9 for a non-zero block (as ModelOpt clamps), elements `e2m1(x / (s * scale_2))` with
///   the exact product `s * scale_2` (ModelOpt divides by that product rounded to f32, which
///   differs only when the quotients straddle a tie). A zero block, or `scale_2` 0, gets scale
///   0 and elements ±0.
///
/// Elements round to nearest, ties to even, or stochastically ([`QuantOptions`]), and
/// saturate to ±448 (E4M3) or ±6 (E2M1): exactly, from the real quotient (module doc).
/// Subnormal inputs and subnormal elements are handled like any other value. FP4 elements are
/// packed two to a byte, the even element in the low nibble, each row padded with +0 nibbles
/// to whole blocks. Blocks with NaN or infinity: see the module doc.
///
/// Returns the statistics, or an error naming what is wrong when a length does not fit (or
/// nvfp4's `tensor_scale` is negative, NaN or infinite); nothing is written then.
#[allow(clippy::too_many_arguments)] // the chunk, its place in the tensor and its two outputs
pub fn quantize<S: QuantSource>(
    scheme: Scheme,
    opts: &QuantOptions,
    src: &[S],
    cols: usize,
    first_element: u64,
    tensor_scale: f32,
    data: &mut [u8],
    scales: &mut [u8],
) -> Result<QuantStats, String> {
    let place = Place {
        first: first_element,
        stride: cols,
    };
    quantize_at(scheme, opts, src, cols, place, tensor_scale, data, scales)
}

/// Where a chunk of a tensor lies in it, for stochastic rounding, whose random bits depend on
/// each element's index in the whole tensor: element `(r, c)` of the chunk (row `r`, column
/// `c` of its `cols`) is element `first + r * stride + c` of the tensor. A chunk of whole rows
/// has `stride == cols`; a tile cut from wider rows has the tensor's row length.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Place {
    /// The index in the tensor of the chunk's first element.
    pub first: u64,
    /// How far apart in the tensor the first elements of two consecutive rows of the chunk are.
    pub stride: usize,
}

/// [`quantize`] for a chunk that is a tile of a tensor's rows: `src` holds `rows * cols`
/// values, row-major, of a tile whose rows are longer in the tensor; `place` says where it
/// lies. The result is what quantizing the whole rows would give these blocks, as long as the
/// tile's columns start at a block boundary and end at one or at the rows' end (every block of
/// the tile is then a block of the rows).
#[allow(clippy::too_many_arguments)] // as quantize
pub fn quantize_at<S: QuantSource>(
    scheme: Scheme,
    opts: &QuantOptions,
    src: &[S],
    cols: usize,
    place: Place,
    tensor_scale: f32,
    data: &mut [u8],
    scales: &mut [u8],
) -> Result<QuantStats, String> {
    let rows = rows_of("src", scheme, src.len(), cols)?;
    check_bytes(scheme, rows, cols, data.len(), scales.len())?;
    if scheme == Scheme::Nvfp4 && !(tensor_scale >= 0.0 && tensor_scale.is_finite()) {
        return Err(format!(
            "{scheme}: the tensor scale must be finite and non-negative, not {tensor_scale}"
        ));
    }
    if rows == 0 {
        return Ok(QuantStats::default());
    }
    let job = Job {
        scheme,
        opts: *opts,
        cols,
        first: place.first,
        stride: place.stride,
        scale_2: tensor_scale,
    };
    // The whole job is compiled for the widest vectors the CPU has (the same results on
    // every path); its loops are inlined into it.
    Ok(lowp::vectorized(
        #[inline(always)]
        || match scheme {
            Scheme::Fp8Block => job.band::<S, f8e4m3fn>(src, data, scales),
            Scheme::Fp8Channel => job.channel::<S, f8e4m3fn>(src, data, scales),
            Scheme::Mxfp8 => job.rowwise::<S, f8e4m3fn>(src, data, scales),
            Scheme::Mxfp4 | Scheme::Nvfp4 => job.rowwise::<S, f4e2m1fn>(src, data, scales),
        },
    ))
}

/// One call of [`quantize`], its lengths checked and at least one row.
struct Job {
    scheme: Scheme,
    opts: QuantOptions,
    cols: usize,
    /// The tensor index of the first element, and of each next row's ([`Place`]).
    first: u64,
    stride: usize,
    scale_2: f32,
}

impl Job {
    /// The tensor index of element `(r, c)` of the chunk, for stochastic rounding.
    #[inline(always)]
    fn index(&self, r: usize, c: usize) -> u64 {
        self.first
            .wrapping_add((r as u64).wrapping_mul(self.stride as u64))
            .wrapping_add(c as u64)
    }
}

impl Job {
    /// MX and nvfp4: each row in segments of up to [`SEG`] values; a segment's scales are
    /// chosen first (the search, if any, trying each candidate on the whole segment in one
    /// bulk call), then its elements are rounded in one bulk call.
    #[inline(always)]
    fn rowwise<S: QuantSource, T: Elem>(
        &self,
        src: &[S],
        data: &mut [u8],
        scales: &mut [u8],
    ) -> QuantStats {
        let (cols, bc) = (self.cols, self.scheme.block_cols());
        let (drb, srb) = (
            self.scheme.data_row_bytes(cols),
            self.scheme.scale_row_bytes(cols),
        );
        let mut stats = QuantStats::default();
        let mut work = Work::<T>::new();
        let mut scans = [Scan::default(); SEG_BLOCKS];
        let mut chosen = [Choice::ZERO; SEG_BLOCKS];
        let mut divs = [Divisor::Zero; SEG_BLOCKS];
        for (r, row) in src.chunks_exact(cols).enumerate() {
            let drow = &mut data[r * drb..][..drb];
            let srow = &mut scales[r * srb..][..srb];
            for (k, seg) in row.chunks(SEG).enumerate() {
                let (c0, n, nb) = (k * SEG, seg.len(), seg.len().div_ceil(bc));
                for (b, x) in seg.chunks(bc).enumerate() {
                    scans[b] = S::scan(x);
                }
                spec_choices::<T>(self.scheme, &scans[..nb], self.scale_2, &mut chosen[..nb]);
                if self.opts.search == ScaleSearch::Mse {
                    self.search_segment(seg, &scans[..nb], &mut chosen[..nb], &mut work);
                }
                for b in 0..nb {
                    srow[c0 / bc + b] = stored_bits(self.scheme, chosen[b], scans[b]) as u8;
                    divs[b] = chosen[b].div;
                }
                let first = self.index(r, c0);
                let rounding = self.opts.rounding;
                let encoded = encode(
                    seg,
                    &divs[..nb],
                    bc,
                    rounding,
                    first,
                    &mut work.scratch,
                    &mut work.elems,
                    &mut work.q,
                );
                let at = T::bytes(c0);
                T::store(&work.elems[..n], &mut drow[at..at + T::bytes(n)]);
                if encoded == Encoded::Elements {
                    widen(&work.elems, n, &mut work.q);
                }
                stats.elements += n as u64;
                let mut errors = Errors::default();
                for (b, (x, q)) in seg.chunks(bc).zip(work.q[..n].chunks(bc)).enumerate() {
                    count_block::<T>(&mut stats, scans[b], divs[b]);
                    if scans[b].nonfinite == 0 {
                        errors.add(x, q, divs[b].step());
                    }
                    if saturates::<T>(scans[b], divs[b]) {
                        stats.saturated += saturated_in::<S, T>(x, divs[b].step());
                    }
                }
                errors.into_stats(&mut stats);
            }
            // Pad the last block with +0 nibbles (FP4; nothing for E4M3).
            drow[T::bytes(cols)..].fill(0);
        }
        stats
    }

    /// [`ScaleSearch::Mse`] for the blocks of one segment, whose formula scales `best` holds
    /// on entry: candidate `k` of every block is tried in one pass over the segment, and a
    /// block takes it where it has strictly less error than the best so far.
    fn search_segment<S: QuantSource, T: Elem>(
        &self,
        seg: &[S],
        scans: &[Scan],
        best: &mut [Choice],
        work: &mut Work<T>,
    ) {
        let (bc, n, nb) = (self.scheme.block_cols(), seg.len(), best.len());
        if !(0..nb).any(|b| searched(scans[b], best[b])) {
            return;
        }
        let mut spec = [Choice::ZERO; SEG_BLOCKS];
        spec[..nb].copy_from_slice(best);
        let mut divs = [Divisor::Zero; SEG_BLOCKS];
        let mut errors = [0f64; SEG_BLOCKS];
        for (d, c) in divs.iter_mut().zip(&spec[..nb]) {
            *d = c.div;
        }
        work.trial(seg, &divs[..nb], bc);
        for (b, (x, q)) in seg.chunks(bc).zip(work.q[..n].chunks(bc)).enumerate() {
            errors[b] = block_error(x, q, divs[b].step()).1;
        }
        for k in 0..candidate_count(self.scheme) {
            let mut any = false;
            let mut cands = [None; SEG_BLOCKS];
            for b in 0..nb {
                if searched(scans[b], spec[b]) {
                    let amax = scans[b].amax;
                    cands[b] =
                        candidate(self.scheme, spec[b], amax, self.scale_2, ScaleType::F32, k);
                }
                // Blocks without a candidate `k` rerun their formula scale, harmlessly.
                divs[b] = cands[b].map_or(spec[b].div, |c: Choice| c.div);
                any |= cands[b].is_some();
            }
            if !any {
                continue;
            }
            work.trial(seg, &divs[..nb], bc);
            for (b, (x, q)) in seg.chunks(bc).zip(work.q[..n].chunks(bc)).enumerate() {
                if let Some(c) = cands[b] {
                    let e = block_error(x, q, c.div.step()).1;
                    if e < errors[b] {
                        errors[b] = e;
                        best[b] = c;
                    }
                }
            }
        }
    }

    /// fp8-block: one band, block column by block column: the block's amax over all its rows
    /// first (and, searching, each candidate's error over all its rows), then each row's 128
    /// values rounded.
    #[inline(always)]
    fn band<S: QuantSource, T: Elem>(
        &self,
        src: &[S],
        data: &mut [u8],
        scales: &mut [u8],
    ) -> QuantStats {
        let cols = self.cols;
        let rows = src.len() / cols;
        let bc = self.scheme.block_cols();
        let mut stats = QuantStats::default();
        let mut work = Work::<T>::new();
        for (b, c0) in (0..cols).step_by(bc).enumerate() {
            let w = bc.min(cols - c0);
            let segments = || (0..rows).map(|r| &src[r * cols + c0..][..w]);
            let mut scan = Scan::default();
            segments().for_each(|x| scan.merge(S::scan(x)));
            let choice = self.whole_block_choice::<T>(scan, |div| {
                segments()
                    .map(|x| {
                        work.trial(x, &[div], w);
                        block_error(x, &work.q[..w], div.step()).1
                    })
                    .sum()
            });
            let bits = stored_bits(self.scheme, choice, scan);
            scales[4 * b..4 * b + 4].copy_from_slice(&bits.to_le_bytes());
            count_block::<T>(&mut stats, scan, choice.div);
            if saturates::<T>(scan, choice.div) {
                let step = choice.div.step();
                stats.saturated += segments()
                    .map(|x| saturated_in::<S, T>(x, step))
                    .sum::<u64>();
            }
            // Rows are rounded a group at a time, then the group's elements widened back in
            // one call: widening each row right after rounding it would read bytes whose
            // stores are still in flight, and wait for them.
            let stride = padded(w);
            let group = SEG / stride;
            let mut errors = Errors::default();
            for r0 in (0..rows).step_by(group) {
                let g = group.min(rows - r0);
                let mut all_widened = true;
                for i in 0..g {
                    let at = (r0 + i) * cols + c0;
                    let first = self.index(r0 + i, c0);
                    let encoded = encode(
                        &src[at..at + w],
                        &[choice.div],
                        w,
                        self.opts.rounding,
                        first,
                        &mut work.scratch,
                        &mut work.elems[i * stride..],
                        &mut work.q[i * stride..],
                    );
                    all_widened &= encoded == Encoded::AndWidened;
                    T::store(&work.elems[i * stride..][..w], &mut data[at..at + w]);
                }
                if !all_widened {
                    widen(&work.elems, g * stride, &mut work.q);
                }
                stats.elements += (g * w) as u64;
                if scan.nonfinite == 0 {
                    for i in 0..g {
                        let at = (r0 + i) * cols + c0;
                        let q = &work.q[i * stride..][..w];
                        errors.add(&src[at..at + w], q, choice.div.step());
                    }
                }
            }
            errors.into_stats(&mut stats);
        }
        stats
    }
}

impl Job {
    /// The scale of a block scanned whole (fp8-block's and fp8-channel's, larger than a
    /// segment): the formula's, or with [`ScaleSearch::Mse`] the candidate whose nearest-rounded
    /// elements give the least error, `error_of` measuring a divisor over the whole block.
    #[inline(always)]
    fn whole_block_choice<T: Elem>(
        &self,
        scan: Scan,
        mut error_of: impl FnMut(Divisor) -> f64,
    ) -> Choice {
        let scale_type = self.opts.scale_type;
        let mut choice = spec_choice::<T>(self.scheme, scan.amax, self.scale_2, scale_type);
        if self.opts.search == ScaleSearch::Mse && searched(scan, choice) {
            let mut best = error_of(choice.div);
            let spec = choice;
            for k in 0..candidate_count(self.scheme) {
                let c = candidate(self.scheme, spec, scan.amax, self.scale_2, scale_type, k);
                if let Some(c) = c {
                    let e = error_of(c.div);
                    if e < best {
                        best = e;
                        choice = c;
                    }
                }
            }
        }
        choice
    }

    /// fp8-channel: each row one block, whatever its length: the row's amax over all its
    /// segments first (and, searching, each candidate's error over the whole row), then its
    /// segments rounded.
    #[inline(always)]
    fn channel<S: QuantSource, T: Elem>(
        &self,
        src: &[S],
        data: &mut [u8],
        scales: &mut [u8],
    ) -> QuantStats {
        let cols = self.cols;
        let mut stats = QuantStats::default();
        let mut work = Work::<T>::new();
        for (r, row) in src.chunks_exact(cols).enumerate() {
            let mut scan = Scan::default();
            row.chunks(SEG).for_each(|x| scan.merge(S::scan(x)));
            let choice = self.whole_block_choice::<T>(scan, |div| {
                row.chunks(SEG)
                    .map(|x| {
                        work.trial(x, &[div], x.len());
                        block_error(x, &work.q[..x.len()], div.step()).1
                    })
                    .sum()
            });
            let bits = stored_bits(self.scheme, choice, scan);
            scales[4 * r..4 * r + 4].copy_from_slice(&bits.to_le_bytes());
            count_block::<T>(&mut stats, scan, choice.div);
            if saturates::<T>(scan, choice.div) {
                stats.saturated += saturated_in::<S, T>(row, choice.div.step());
            }
            let mut errors = Errors::default();
            for (k, x) in row.chunks(SEG).enumerate() {
                let (c0, n) = (k * SEG, x.len());
                let at = r * cols + c0;
                let first = self.index(r, c0);
                let encoded = encode(
                    x,
                    &[choice.div],
                    n,
                    self.opts.rounding,
                    first,
                    &mut work.scratch,
                    &mut work.elems,
                    &mut work.q,
                );
                T::store(&work.elems[..n], &mut data[at..at + n]);
                if encoded == Encoded::Elements {
                    widen(&work.elems, n, &mut work.q);
                }
                stats.elements += n as u64;
                if scan.nonfinite == 0 {
                    errors.add(x, &work.q[..n], choice.div.step());
                }
            }
            errors.into_stats(&mut stats);
        }
        stats
    }
}

/// Counts one block in `stats`: its amax, non-finite elements and whether it clipped.
#[inline(always)]
fn count_block<T: Elem>(stats: &mut QuantStats, scan: Scan, div: Divisor) {
    stats.blocks += 1;
    stats.amax = stats.amax.max(scan.amax);
    stats.nonfinite += scan.nonfinite;
    if scan.nonfinite == 0 && div != Divisor::Zero && T::overflows(scan.amax, div.step()) {
        stats.clipped_blocks += 1;
    }
}

/// Whether some element of a block of `scan` under `div` saturates beyond the top binade
/// ([`QuantStats::saturated`]): decided from the block's amax, so that only such blocks, which
/// the formulas almost never give, have their elements counted ([`saturated_in`]).
#[inline(always)]
fn saturates<T: Elem>(scan: Scan, div: Divisor) -> bool {
    scan.nonfinite == 0 && div != Divisor::Zero && T::beyond_top(scan.amax, div.step())
}

/// The elements of `x` whose magnitude divided by `step` lies beyond `T`'s top binade.
fn saturated_in<S: QuantSource, T: Elem>(x: &[S], step: f64) -> u64 {
    x.iter()
        .filter(|v| T::beyond_top(v.widen().abs(), step))
        .count() as u64
}

/// Decodes what [`quantize`] wrote into f32s, bit for bit as the reference decoders compute in
/// f32:
///
/// * fp8-block: `f32(q) * scale_inv` (DeepSeek-V3's `weight_dequant`, transformers' FP8
///   loader);
/// * mxfp8 / mxfp4: `q * 2^(s - 127)`, one correctly rounded f32 multiplication (exact unless
///   the product leaves f32's normal range; gpt-oss's `ldexp`, which runs in bf16 by default
///   and so differs only below bf16's smallest subnormal, 2^-133); `s = 255` gives NaN;
/// * nvfp4: `q * (f32(s) * scale_2)`, the product of the two scales rounded to f32 first, as
///   ModelOpt's `NVFP4QTensor.dequantize` orders it
///   (`modelopt/torch/quantization/qtensor/nvfp4_tensor.py`: `per_block_scale =
///   q_per_block_scale * per_block_quant_scale`, then `deq_data * per_block_scale`). A NaN
///   E4M3 scale (0x7F/0xFF) gives NaN.
///
/// `dst` holds `rows * cols` values; `data` and `scales` are those of these rows as
/// [`quantize`] takes them (for fp8-block one band of at most 128 rows). FP4 padding nibbles
/// are ignored. Returns an error naming the mismatch when a length does not fit.
pub fn dequantize(
    scheme: Scheme,
    data: &[u8],
    scales: &[u8],
    cols: usize,
    tensor_scale: f32,
    dst: &mut [f32],
) -> Result<(), String> {
    let rows = rows_of("dst", scheme, dst.len(), cols)?;
    check_bytes(scheme, rows, cols, data.len(), scales.len())?;
    let mul = |bits: u32| -> f32 {
        match scheme {
            Scheme::Fp8Block | Scheme::Fp8Channel => f32::from_bits(bits),
            Scheme::Mxfp8 | Scheme::Mxfp4 if bits == 0xff => f32::NAN,
            Scheme::Mxfp8 | Scheme::Mxfp4 => pow2_f32(bits as i32 - 127),
            Scheme::Nvfp4 => f8e4m3fn::from_bits(bits as u8).to_f32() * tensor_scale,
        }
    };
    decode(scheme, data, scales, cols, rows, dst, mul, |q, m| q * m)
}

/// The exact values of what [`quantize`] wrote, in f64: `q * scale_inv`, `q * 2^(s - 127)`
/// and `q * s * scale_2`, every product exact in f64 (the `x̂` of [`QuantStats::noise`]).
/// E8M0 255 and a NaN E4M3 scale give NaN. Lengths as for [`dequantize`].
pub fn dequantize_f64(
    scheme: Scheme,
    data: &[u8],
    scales: &[u8],
    cols: usize,
    tensor_scale: f32,
    dst: &mut [f64],
) -> Result<(), String> {
    let rows = rows_of("dst", scheme, dst.len(), cols)?;
    check_bytes(scheme, rows, cols, data.len(), scales.len())?;
    let mul = |bits: u32| scale_factor_f64(scheme, bits, f64::from(tensor_scale));
    decode(scheme, data, scales, cols, rows, dst, mul, |q, m| {
        q as f64 * m
    })
}

/// What a block's elements are multiplied by, exactly in f64, for its stored scale `bits`
/// ([`scale_bits`]): the fp8 scale itself, `2^(s - 127)` for an E8M0 byte (NaN for 255), or
/// nvfp4's E4M3 scale times `second`.
fn scale_factor_f64(scheme: Scheme, bits: u32, second: f64) -> f64 {
    match scheme {
        Scheme::Fp8Block | Scheme::Fp8Channel => f32::from_bits(bits) as f64,
        Scheme::Mxfp8 | Scheme::Mxfp4 if bits == 0xff => f64::NAN,
        Scheme::Mxfp8 | Scheme::Mxfp4 => pow2_f64(bits as i32 - 127),
        Scheme::Nvfp4 => f8e4m3fn::from_bits(bits as u8).to_f64() * second,
    }
}

/// The stored bits of block `i`'s scale in a row of scales as the codec lays them out: a
/// little-endian f32 for fp8, one byte otherwise.
#[inline(always)]
fn scale_bits(scheme: Scheme, srow: &[u8], i: usize) -> u32 {
    if scheme.float_scales() {
        u32::from_le_bytes([
            srow[4 * i],
            srow[4 * i + 1],
            srow[4 * i + 2],
            srow[4 * i + 3],
        ])
    } else {
        srow[i] as u32
    }
}

/// What checking the scales of some blocks found ([`check_scales`]), mergeable across chunks
/// ([`ScaleCheck::merge`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ScaleCheck {
    /// Blocks whose scale was checked.
    pub blocks: u64,
    /// Blocks whose scale is bad (see [`check_scales`]).
    pub bad: u64,
}

impl ScaleCheck {
    /// Adds `other`'s counts to these.
    pub fn merge(&mut self, other: &ScaleCheck) {
        self.blocks += other.blocks;
        self.bad += other.bad;
    }
}

/// Checks the scale of every block of `rows` rows of `cols` columns in `data` and `scales`
/// (laid out as [`quantize`] writes them and [`dequantize`] reads them, for fp8-block one band
/// of at most 128 rows): how many blocks there are, and how many have a bad scale.
///
/// A block is judged by the factor its elements are multiplied by when decoded: the float
/// scale (fp8-block, fp8-channel: the little-endian f32s [`dequantize`] takes, bf16 and f16
/// scales widened exactly), `2^(s - 127)` for an E8M0 byte `s` (255 is NaN), or for nvfp4 the
/// E4M3 block scale times `second` (`scale_2`, or the inverse of compressed-tensors' divided
/// global scale; ignored by the other schemes). The scale is bad when that factor is:
///
/// * NaN or ±infinity: the block decodes to NaN or ±infinity (or NaN for its zeros);
/// * negative: every element decodes with its sign flipped;
/// * zero (of either sign, an nvfp4 product that underflows f64 included) while some element
///   of its block is not zero (a NaN element counts as not zero): those elements decode to
///   zero.
///
/// A zero factor over a block whose elements are all ±0 is accepted: it is what valid
/// encoders write for an all-zero block (lowp's fp8 scale 0 and nvfp4 E4M3 scale 0, ModelOpt's
/// `scale_2` 0 for an all-zero tensor), and the block decodes to the zeros it holds. E8M0 has
/// no zero (byte 0 is 2^-127) and no negative value, so only 255 is bad there. lowp's own
/// encoder writes a non-finite scale for a block holding NaN or infinity (see the module
/// doc), so such blocks are bad here too, as quantizing them failed. FP4 padding nibbles are
/// ignored. Returns an error naming the mismatch when a length does not fit.
pub fn check_scales(
    scheme: Scheme,
    data: &[u8],
    scales: &[u8],
    rows: usize,
    cols: usize,
    second: f64,
) -> Result<ScaleCheck, String> {
    let elements = rows
        .checked_mul(cols)
        .ok_or_else(|| format!("{scheme}: {rows} rows of {cols} columns are too many"))?;
    rows_of("data", scheme, elements, cols)?;
    check_bytes(scheme, rows, cols, data.len(), scales.len())?;
    let (drb, srb) = (scheme.data_row_bytes(cols), scheme.scale_row_bytes(cols));
    let (br, bc) = (scheme.block_rows(), scheme.block_cols());
    let e4m3 = scheme.bits_per_element() == 8;
    // Whether elements `c0..c1` of row `r` are all ±0 (E4M3 and E2M1 zeros: only the sign bit).
    let zeros = |r: usize, c0: usize, c1: usize| {
        let row = &data[r * drb..][..drb];
        if e4m3 {
            row[c0..c1].iter().all(|b| b & 0x7f == 0)
        } else {
            (c0..c1).all(|c| (row[c / 2] >> (4 * (c % 2))) & 0x7 == 0)
        }
    };
    let mut check = ScaleCheck::default();
    for (k, srow) in scales.chunks_exact(srb.max(1)).enumerate() {
        let block_rows = k * br..((k + 1) * br).min(rows);
        for b in 0..scheme.blocks_per_row(cols) {
            let f = scale_factor_f64(scheme, scale_bits(scheme, srow, b), second);
            // fp8-channel's one block is the whole row (its block_cols is usize::MAX).
            let c0 = b * bc;
            let c1 = c0.saturating_add(bc).min(cols);
            let bad = if !f.is_finite() || f < 0.0 {
                true
            } else {
                f == 0.0 && !block_rows.clone().all(|r| zeros(r, c0, c1))
            };
            check.blocks += 1;
            check.bad += u64::from(bad);
        }
    }
    Ok(check)
}

/// The body of the two decoders: elements widened to f32 a segment at a time, each block's
/// values `apply(q, mul(scale bits))`.
#[allow(clippy::too_many_arguments)] // the decoders' arguments, and their two arithmetics
fn decode<D, M: Copy>(
    scheme: Scheme,
    data: &[u8],
    scales: &[u8],
    cols: usize,
    rows: usize,
    dst: &mut [D],
    mul: impl Fn(u32) -> M,
    apply: impl Fn(f32, M) -> D,
) -> Result<(), String> {
    match scheme {
        Scheme::Fp8Block | Scheme::Fp8Channel | Scheme::Mxfp8 => {
            decode_rows::<f8e4m3fn, D, M>(scheme, data, scales, cols, rows, dst, mul, apply)
        }
        Scheme::Mxfp4 | Scheme::Nvfp4 => {
            decode_rows::<f4e2m1fn, D, M>(scheme, data, scales, cols, rows, dst, mul, apply)
        }
    }
    Ok(())
}

/// [`decode`] for element type `T`.
#[allow(clippy::too_many_arguments)] // as decode
fn decode_rows<T: Elem, D, M: Copy>(
    scheme: Scheme,
    data: &[u8],
    scales: &[u8],
    cols: usize,
    rows: usize,
    dst: &mut [D],
    mul: impl Fn(u32) -> M,
    apply: impl Fn(f32, M) -> D,
) {
    if cols == 0 {
        return;
    }
    let bc = scheme.block_cols();
    let (drb, srb) = (scheme.data_row_bytes(cols), scheme.scale_row_bytes(cols));
    let mut elems = [T::default(); SEG];
    let mut q = [0f32; SEG];
    for (r, out) in dst.chunks_exact_mut(cols).enumerate().take(rows) {
        let drow = &data[r * drb..][..drb];
        // fp8-block's one band of scales serves every row; the others have a row each.
        let srow = if scheme == Scheme::Fp8Block {
            scales
        } else {
            &scales[r * srb..][..srb]
        };
        for (k, out) in out.chunks_mut(SEG).enumerate() {
            let c0 = k * SEG;
            let n = out.len();
            T::load(
                &drow[T::bytes(c0)..T::bytes(c0) + T::bytes(n)],
                &mut elems[..n],
            );
            widen(&elems, n, &mut q);
            for (b, (out, q)) in out.chunks_mut(bc).zip(q[..n].chunks(bc)).enumerate() {
                let m = mul(scale_bits(scheme, srow, c0 / bc + b));
                out.iter_mut().zip(q).for_each(|(y, &q)| *y = apply(q, m));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_segments_nvfp4_scales_are_each_blocks() {
        // Block amaxes from every binade of f32 and beyond (f64 sources), E4M3 ties and their
        // neighbours, zero; tensor scales from tiny to large: the segment's bulk rounding gives
        // each block what the block's own scalar rounding gives.
        let mut state = 5u64;
        let mut amaxes: Vec<f64> = (0..4000)
            .map(|_| {
                state = state.wrapping_mul(6364136223846793005).wrapping_add(1);
                f32::from_bits((state >> 33) as u32 & 0x7f7f_ffff) as f64
            })
            .collect();
        for bits in 0..0x7eu8 {
            let lo = f8e4m3fn::from_bits(bits).to_f64();
            let hi = f8e4m3fn::from_bits(bits + 1).to_f64();
            let tie = (lo + hi) / 2.0 * 6.0;
            amaxes.extend([tie, tie.next_up(), tie.next_down(), lo * 6.0]);
        }
        amaxes.extend([0.0, 1e300, f64::MAX, 5e-324]);
        for scale_2 in [1.0f32, 2f32.powi(-149), 3.7e-3, 0.5, 1e30] {
            for blocks in amaxes.chunks(SEG_BLOCKS) {
                let scans: Vec<Scan> = blocks
                    .iter()
                    .map(|&amax| Scan {
                        amax,
                        ..Scan::default()
                    })
                    .collect();
                let mut got = vec![Choice::ZERO; blocks.len()];
                spec_choices::<f4e2m1fn>(Scheme::Nvfp4, &scans, scale_2, &mut got);
                for (c, &amax) in got.iter().zip(blocks) {
                    let want =
                        spec_choice::<f4e2m1fn>(Scheme::Nvfp4, amax, scale_2, ScaleType::F32);
                    assert_eq!(
                        (c.bits, c.div),
                        (want.bits, want.div),
                        "amax {amax:e} scale_2 {scale_2:e}"
                    );
                }
            }
        }
    }

    #[test]
    fn floor_log2_is_exact_across_the_range() {
        // 2^k by halving and doubling 1, exact down to the smallest subnormal (`powi` is not).
        let pow2 =
            |k: i32| (0..k.unsigned_abs()).fold(1f64, |p, _| if k < 0 { p / 2.0 } else { p * 2.0 });
        for k in -1074..=1023 {
            let x = pow2(k);
            assert_eq!(floor_log2(x), k, "2^{k}");
            if k > -1074 {
                assert_eq!(floor_log2(x * 1.5), k, "1.5 * 2^{k}");
            }
            if k > -1022 {
                assert_eq!(floor_log2(x.next_down()), k - 1, "below 2^{k}");
            }
        }
    }

    #[test]
    fn powers_of_two_in_f32_reach_the_subnormals() {
        for k in -149i32..=127 {
            let want =
                (0..k.unsigned_abs()).fold(1f64, |p, _| if k < 0 { p / 2.0 } else { p * 2.0 });
            assert_eq!(pow2_f32(k) as f64, want, "2^{k}");
        }
    }

    #[test]
    fn nvfp4_pow2_tensor_scale_is_the_least_power_of_two_at_or_above() {
        // Against a search from 2^-126 up with exact comparisons, around every binade.
        let least = |a: f64| {
            (-126..=127)
                .find(|&k| pow2_f64(k) * NVFP4_TENSOR_DIVISOR >= a)
                .unwrap_or(127)
        };
        for e in -1074..1024 {
            let p = f64::from_bits(if e < -1022 {
                1u64 << (e + 1074)
            } else {
                ((e + 1023) as u64) << 52
            });
            for a in [
                p,
                p * 1.3125,
                (p * 1.3125).next_up(),
                (p * 1.3125).next_down(),
                p * 1.9,
            ] {
                if a.is_finite() && a > 0.0 {
                    assert_eq!(nvfp4_pow2_tensor_scale(a), pow2_f32(least(a)), "{a:e}");
                }
            }
        }
        assert_eq!(nvfp4_pow2_tensor_scale(f64::NAN), 1.0);
    }

    #[test]
    fn nvfp4_tensor_scale_is_clamped_never_zero() {
        assert_eq!(nvfp4_tensor_scale(1e-300), pow2_f32(-149));
        assert_eq!(nvfp4_tensor_scale(1e300), f32::MAX);
        assert!(nvfp4_tensor_scale(f64::NAN).is_nan());
        assert_eq!(nvfp4_tensor_scale(-2688.0), 1.0);
    }
}
