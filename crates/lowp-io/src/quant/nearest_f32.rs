//! Rounding f32 sources to nearest under scales that are not powers of two (fp8-block, nvfp4),
//! without an f64 quotient per element.
//!
//! The general route ([`super::codec`]) divides each element in f64 and rounds the quotient,
//! which its lemma proves exact; an f64 division and an f64 conversion per element cost more
//! than reading and writing the element. For f32 sources rounded to nearest there are two
//! cheaper routes, each exact:
//!
//! * **E2M1 by thresholds** ([`e2m1`]). The element is decided by where `|x|` lies among the
//!   seven midpoints `m * d` between neighbouring E2M1 magnitudes (0, 0.5, 1, 1.5, 2, 3, 4,
//!   6), `d` the block's exact divisor: its magnitude code is the number of midpoints that
//!   `|x|` passes. At a midpoint the even code wins, so the midpoints after codes 0, 2, 4 and
//!   6 are passed only by `|x| > m d` and the others already by `|x| >= m d`; beyond the last
//!   (5 d) the code stays 7 (±6, saturation). `m d` is exact in f64 (3 + 28 bits). Each test
//!   becomes one comparison `|x| > bound` with an f32 `bound`: for `|x| > t` it is `t`
//!   rounded down to an f32 (an f32 above `t` is at least that value's successor, which is
//!   above `t` unless `t` is an f32 itself, when `t` is the bound), and for `|x| >= t` the
//!   largest f32 below `t` (an f32 at least `t` is exactly one above it). Both are found
//!   from `t` rounded to nearest by at most one step of its bits. Bounds beyond f32's range
//!   become `f32::MAX` (passed only by infinity, which saturates as in the general route).
//!   Non-negative f32s order as their bits do, so the comparisons are of integers, of `x`'s
//!   bits without the sign. A NaN's bits pass every bound; it takes code 0 and the opposite
//!   sign instead, the general route's element. A zero scale's bounds are infinity's bits,
//!   which nothing but NaN passes: every element is a signed zero.
//! * **E4M3 by f32 division** ([`e4m3`]), where the divisor `d` is itself an f32 (fp8-block's
//!   `scale_inv`). The f32 quotient `y = fl32(x / d)` is correctly rounded, and rounding is
//!   monotonic: every E4M3 tie and the overflow threshold 464 are f32s, so `y` lies in the
//!   same closed interval between neighbouring ties as `x / d`, and rounding `y` to E4M3
//!   gives the correctly rounded element unless `y` *is* a tie while `x / d` is not. Those
//!   elements are found by the tie's bit pattern and rounded again through the f64 quotient
//!   (the general route). E4M3's ties at or above 2^-6 are the f32s whose mantissa bits below
//!   the top three are `1000...0`; those below (odd multiples of 2^-10) become such an f32
//!   when 2^-6 is added, exactly. The test may also flag a few elements that are not ties
//!   (rounding the sum, or beyond the saturation point); they take the general route too,
//!   which is merely slower.

use super::codec::{Divisor, zeroed};
use lowp::prelude::*;
use lowp::{f4e2m1fn, f8e4m3fn};

/// The midpoints between neighbouring E2M1 magnitudes, in code order.
const E2M1_MIDPOINTS: [f64; 7] = [0.25, 0.75, 1.25, 1.75, 2.5, 3.5, 5.0];

/// `t` (positive) rounded down to an f32: `f32::MAX` beyond f32's range, 0 below its least
/// subnormal.
#[inline]
fn f32_at_or_below(t: f64) -> f32 {
    let f = t as f32;
    // `f > t` only if `f > 0`, so stepping down its bits gives its predecessor (MAX for inf).
    f32::from_bits(f.to_bits() - u32::from(f as f64 > t))
}

/// The largest f32 below `t` (positive): 0 below f32's least subnormal, `f32::MAX` beyond
/// f32's range. An f32 is at least `t` exactly when it exceeds this.
#[inline]
fn f32_below(t: f64) -> f32 {
    let f = t as f32;
    f32::from_bits(f.to_bits() - u32::from(f as f64 >= t))
}

/// The bits of the bound for midpoint `i` (`E2M1_MIDPOINTS[i]`) of a block of divisor `d`
/// (0 for a zero scale), for [`e2m1`]: code `i + 1` needs the magnitude bits of `x` to exceed
/// it (non-negative f32s order as their bits do). Under a zero scale it is infinity's, which
/// nothing finite or infinite exceeds (every element is a signed zero).
#[inline(always)]
fn e2m1_bound(i: usize, d: f64) -> u32 {
    let t = E2M1_MIDPOINTS[i] * d;
    // Midpoints 1, 3 and 5 (after odd codes) round up to the even code: `|x| >= t`.
    let bound = if i % 2 == 1 {
        f32_below(t)
    } else {
        f32_at_or_below(t)
    };
    if d == 0.0 {
        f32::INFINITY.to_bits()
    } else {
        bound.to_bits()
    }
}

/// E2M1 elements of consecutive blocks of `block` values of `src` (`divs[b]` for block `b`),
/// rounded to nearest (ties to even, saturating) from the exact quotients, into
/// `dst[..src.len()]`. Returns `false`, writing nothing, when a divisor is a power of two (the
/// MX schemes' own f32 route is faster there).
pub(super) fn e2m1(src: &[f32], divs: &[Divisor], block: usize, dst: &mut [f4e2m1fn]) -> bool {
    const BLOCKS: usize = super::codec::SEG_BLOCKS;
    debug_assert!(divs.len() <= BLOCKS && src.len() <= divs.len() * block);
    let mut ds = [0f64; BLOCKS];
    for (x, &d) in ds.iter_mut().zip(divs) {
        *x = match d {
            Divisor::Zero => 0.0,
            Divisor::Div(d) => d,
            Divisor::Pow2(_) => return false,
        };
    }
    // Midpoint by midpoint over all the blocks, which runs on vectors.
    let mut bounds_by_midpoint = [[0u32; BLOCKS]; 7];
    for (i, bounds) in bounds_by_midpoint.iter_mut().enumerate() {
        for (b, &d) in bounds.iter_mut().zip(&ds) {
            *b = e2m1_bound(i, d);
        }
    }
    for (k, (s, o)) in src.chunks(block).zip(dst.chunks_mut(block)).enumerate() {
        let bounds: [u32; 7] = core::array::from_fn(|i| bounds_by_midpoint[i][k]);
        // Integer comparisons on lanes of a fixed width, so that they run on vectors.
        let (whole, rest) = s.split_at(s.len() / LANES * LANES);
        for (x, o) in whole.chunks_exact(LANES).zip(o.chunks_exact_mut(LANES)) {
            let x: &[f32; LANES] = x.try_into().expect("whole lanes");
            let bits: [u32; LANES] = core::array::from_fn(|j| x[j].to_bits());
            // Below 2^31, so compared as i32s: one instruction (SSE2 has no unsigned one).
            let magnitudes: [i32; LANES] = core::array::from_fn(|j| (bits[j] & 0x7fff_ffff) as i32);
            let mut count = [0u32; LANES];
            for &b in &bounds {
                for j in 0..LANES {
                    count[j] += u32::from(magnitudes[j] > b as i32);
                }
            }
            let patterns: [u8; LANES] = core::array::from_fn(|j| e2m1_pattern(bits[j], count[j]));
            for (o, p) in o.iter_mut().zip(patterns) {
                *o = f4e2m1fn::from_bits(p);
            }
        }
        for (&x, o) in rest.iter().zip(&mut o[whole.len()..]) {
            let bits = x.to_bits();
            let count = bounds
                .iter()
                .map(|&b| u32::from(bits & 0x7fff_ffff > b))
                .sum();
            *o = f4e2m1fn::from_bits(e2m1_pattern(bits, count));
        }
    }
    true
}

/// Lanes of the comparisons in [`e2m1`]: nvfp4's block.
const LANES: usize = 16;

/// The E2M1 pattern of the f32 of bits `bits` whose magnitude exceeds `count` bounds: the
/// sign and the count. A NaN (magnitude bits above infinity's, which exceed every bound) takes
/// code 0 and the opposite sign, as the general route rounds it.
#[inline(always)]
fn e2m1_pattern(bits: u32, count: u32) -> u8 {
    let nan = bits & 0x7fff_ffff > f32::INFINITY.to_bits();
    let code = if nan { 0 } else { count };
    let sign = ((bits >> 28) & 8) ^ if nan { 8 } else { 0 };
    (sign | code) as u8
}

/// Whether `y` may be an E4M3 tie (a midpoint between neighbouring magnitudes, 464 among
/// them): always when it is one, sometimes when not (see the module doc).
#[inline]
fn may_be_e4m3_tie(y: f32) -> bool {
    let a = y.abs();
    let lifted = if a < E4M3_NORMAL { a + E4M3_NORMAL } else { a };
    lifted.to_bits() & 0xF_FFFF == 0x8_0000
}

/// E4M3's smallest normal, 2^-6: below it ties are odd multiples of 2^-10.
const E4M3_NORMAL: f32 = 0.015625;

/// E4M3 elements of consecutive blocks of `block` values of `src` (`divs[b]` for block `b`),
/// rounded to nearest (ties to even, saturating to ±448) from the exact quotients, into
/// `dst[..src.len()]`; `quotients` is scratch of at least `dst.len()` values, and `dst` holds
/// at least `padded` values (the bulk conversion's whole blocks). Returns `false`, writing
/// nothing, unless every divisor is zero or a [`Divisor::Div`] holding an f32.
pub(super) fn e4m3(
    src: &[f32],
    divs: &[Divisor],
    block: usize,
    padded: usize,
    quotients: &mut [f32],
    dst: &mut [f8e4m3fn],
) -> bool {
    let f32_divisor = |d: Divisor| match d {
        Divisor::Zero => true,
        Divisor::Pow2(_) => false,
        Divisor::Div(d) => (d as f32) as f64 == d,
    };
    if !divs.iter().all(|&d| f32_divisor(d)) {
        return false;
    }
    let n = src.len();
    for ((s, y), &d) in src.chunks(block).zip(quotients.chunks_mut(block)).zip(divs) {
        match d {
            Divisor::Div(d) => {
                let d = d as f32;
                s.iter().zip(y).for_each(|(&x, y)| *y = x / d);
            }
            _ => s
                .iter()
                .zip(y)
                .for_each(|(&x, y)| *y = zeroed(x as f64) as f32),
        }
    }
    quotients[n..padded].fill(0.0);
    dst[..padded].convert_from_f32_slice_saturating(&quotients[..padded]);
    for (((y, x), o), &d) in quotients[..n]
        .chunks(block)
        .zip(src.chunks(block))
        .zip(dst.chunks_mut(block))
        .zip(divs)
    {
        // One pass without branches finds whether the block has any; most have none.
        let Divisor::Div(d) = d else { continue };
        if !y.iter().fold(false, |any, &y| any | may_be_e4m3_tie(y)) {
            continue;
        }
        for ((&y, &x), o) in y.iter().zip(x).zip(o) {
            if may_be_e4m3_tie(y) {
                *o = f8e4m3fn::from_f64_saturating(x as f64 / d);
            }
        }
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The general route's element: the f64 quotient rounded to nearest by lowp's engine.
    fn reference<T: LowpFloat>(x: f32, d: Divisor) -> T {
        let q = match d {
            Divisor::Zero if x.is_nan() => x as f64,
            Divisor::Zero => 0f64.copysign(x as f64),
            Divisor::Pow2(_) => unreachable!("not on these routes"),
            Divisor::Div(d) => x as f64 / d,
        };
        T::from_f64_saturating(q)
    }

    /// `x` and its f32 neighbours, both signs.
    fn around(x: f32) -> [f32; 6] {
        [
            x,
            x.next_up(),
            x.next_down(),
            -x,
            -x.next_up(),
            -x.next_down(),
        ]
    }

    /// Divisors as the schemes make them: nvfp4's E4M3 scales times tensor scales from
    /// tiny to huge, and f32 scales for fp8-block.
    fn nvfp4_divisors() -> Vec<f64> {
        let mut out = Vec::new();
        for scale_2 in [
            2f32.powi(-149),
            1e-30,
            3.7e-3,
            0.1,
            1.0,
            1.7e9,
            3e35,
            f32::MAX,
        ] {
            for bits in 1..0x7fu8 {
                out.push(f8e4m3fn::from_bits(bits).to_f64() * scale_2 as f64);
            }
        }
        out
    }

    /// Every E2M1 element is a non-decreasing step function of `|x|` for both routes, so
    /// agreeing at and beside each of the threshold route's steps (and at 0, the largest
    /// f32s and the non-finite values) means agreeing on every f32: a step of the general
    /// route between two of those points would make it differ at one of them.
    #[test]
    fn e2m1_thresholds_round_every_f32_as_the_f64_quotient_does() {
        for d in nvfp4_divisors() {
            let div = Divisor::Div(d);
            let bounds: [u32; 7] = core::array::from_fn(|i| e2m1_bound(i, d));
            let mut xs: Vec<f32> = bounds
                .iter()
                .flat_map(|&b| around(f32::from_bits(b)))
                .collect();
            for m in E2M1_MIDPOINTS {
                xs.extend(around(f32_at_or_below(m * d)));
            }
            xs.extend([
                0.0,
                -0.0,
                f32::MAX,
                -f32::MAX,
                f32::INFINITY,
                -f32::INFINITY,
            ]);
            xs.extend([f32::NAN, -f32::NAN, 2f32.powi(-149), -2f32.powi(-149)]);
            let mut got = vec![f4e2m1fn::ZERO; xs.len()];
            for (x, g) in xs.chunks(16).zip(got.chunks_mut(16)) {
                assert!(e2m1(x, &[div], 16, g));
            }
            for (&x, g) in xs.iter().zip(&got) {
                let want = reference::<f4e2m1fn>(x, div);
                assert_eq!(
                    g.to_bits(),
                    want.to_bits(),
                    "x {x:e} ({:#x}) / {d:e}",
                    x.to_bits()
                );
            }
        }
    }

    #[test]
    fn bounds_round_to_the_neighbouring_f32s() {
        let one_up = 1f64 + 2f64.powi(-30); // between 1 and the next f32
        for (t, at_or_below, below) in [
            (1.0, 1.0f32, 1f32.next_down()),
            (one_up, 1.0, 1.0),
            (2f64.powi(-160), 0.0, 0.0),
            (2f64.powi(-149), 2f32.powi(-149), 0.0),
            (f32::MAX as f64, f32::MAX, f32::MAX.next_down()),
            (1e300, f32::MAX, f32::MAX),
        ] {
            assert_eq!(f32_at_or_below(t), at_or_below, "{t:e}");
            assert_eq!(f32_below(t), below, "{t:e}");
        }
    }

    #[test]
    fn e2m1_under_a_zero_scale_keeps_only_signs() {
        let xs = [
            1.0f32,
            -2.0,
            0.0,
            -0.0,
            f32::INFINITY,
            -f32::INFINITY,
            f32::NAN,
        ];
        let mut got = [f4e2m1fn::ZERO; 7];
        assert!(e2m1(&xs, &[Divisor::Zero], 16, &mut got));
        for (&x, g) in xs.iter().zip(&got) {
            assert_eq!(
                g.to_bits(),
                reference::<f4e2m1fn>(x, Divisor::Zero).to_bits(),
                "{x}"
            );
        }
        assert!(!e2m1(&xs, &[Divisor::Pow2(3)], 16, &mut got));
    }

    /// The midpoints between neighbouring finite E4M3 magnitudes, and 464 (between 448 and
    /// the missing 480).
    fn e4m3_ties() -> Vec<f64> {
        let mut ties: Vec<f64> = (0..0x7eu8)
            .map(|b| (f8e4m3fn::from_bits(b).to_f64() + f8e4m3fn::from_bits(b + 1).to_f64()) / 2.0)
            .collect();
        ties.push(464.0);
        ties
    }

    /// Each E4M3 tie `t` (and 464), for many f32 divisors `d`: the f32s nearest `t d` and
    /// their neighbours, whose f32 quotients land on the tie though the exact ones do not,
    /// besides random values; every element is the f64 quotient's.
    #[test]
    fn e4m3_by_f32_division_rounds_as_the_f64_quotient_does() {
        let ties = e4m3_ties();
        let mut state = 3u64;
        let mut random = || {
            state = state.wrapping_mul(6364136223846793005).wrapping_add(1);
            f32::from_bits((state >> 32) as u32)
        };
        let (mut landed_on_ties, mut checked) = (0usize, 0usize);
        for _ in 0..300 {
            let d = random().abs();
            if !(d.is_finite() && d > 0.0) {
                continue;
            }
            let div = Divisor::Div(d as f64);
            let mut xs: Vec<f32> = Vec::new();
            for &t in &ties {
                let p = t * d as f64;
                xs.extend(around(f32_at_or_below(p)));
                xs.extend(around(f32_below(p).next_up()));
            }
            xs.extend((0..256).map(|_| random()));
            xs.extend([f32::INFINITY, f32::NAN, -0.0, f32::MAX]);
            for x in xs.chunks(128) {
                let n = x.len();
                let padded = n.next_multiple_of(64);
                let mut q = vec![0f32; padded];
                let mut got = vec![f8e4m3fn::ZERO; padded];
                assert!(e4m3(x, &[div], 128, padded, &mut q, &mut got));
                for (i, &x) in x.iter().enumerate() {
                    let want = reference::<f8e4m3fn>(x, div);
                    let (g, w) = (got[i].to_bits(), want.to_bits());
                    let both_nan = got[i].is_nan() && want.is_nan();
                    assert!(g == w || both_nan, "x {x:e} / {d:e}: {g:#x}, want {w:#x}");
                    // The case the fix-up is for: the f32 quotient is a tie, the exact one not.
                    let on_tie = ties.contains(&(q[i] as f64));
                    landed_on_ties += usize::from(on_tie && x as f64 / d as f64 != q[i] as f64);
                    checked += 1;
                }
            }
        }
        assert!(checked > 100_000, "{checked}");
        assert!(
            landed_on_ties > 1000,
            "only {landed_on_ties} quotients landed on a tie"
        );
    }

    #[test]
    fn e4m3_ties_are_recognised_by_their_bits() {
        for tie in e4m3_ties() {
            assert!(may_be_e4m3_tie(tie as f32), "{tie:e}");
            assert!(may_be_e4m3_tie(-tie as f32), "{tie:e}");
        }
        for b in 1..0x7fu8 {
            let value = f8e4m3fn::from_bits(b).to_f32();
            assert!(!may_be_e4m3_tie(value), "{value:e}");
        }
        // Not routes of this one: MX's powers of two, and divisors that are not f32s.
        for div in [Divisor::Pow2(1), Divisor::Div(0.1)] {
            let (mut q, mut out) = ([0.0; 64], [f8e4m3fn::ZERO; 64]);
            assert!(!e4m3(&[1.0], &[div], 32, 64, &mut q, &mut out), "{div:?}");
        }
    }
}
