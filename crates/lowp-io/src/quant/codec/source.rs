//! The source element types, `f32` and `f64`: scanning a block for its amax, and the
//! quotients `x / scale` handed to the rounding engine.
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

mod sealed {
    use crate::quant::codec::options::ElementRounding;
    use crate::quant::codec::round::{round_f32, round_f64};
    use crate::quant::divisor::{Divisor, SEG, pow2_f32, pow2_f64, zeroed};
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
                    let m = pow2_f64(-e);
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
                    let m = pow2_f32(-e);
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

pub(super) use sealed::{Scan, Scratch};

/// A source element type: `f32` or `f64`. Both are quantized exactly (see the module
/// documentation); f32 MX blocks take lowp's f32 vector paths, f32 fp8-block and nvfp4 blocks
/// rounded to nearest the f32 routes of `nearest_f32`, everything else f64
/// quotients.
pub trait QuantSource: Copy + Send + Sync + 'static + sealed::Sealed {}

impl QuantSource for f32 {}
impl QuantSource for f64 {}
