//! Rounding f32 sources to nearest under scales that are not powers of two (fp8-block, nvfp4),
//! without an f64 quotient per element.
//!
//! The general route (the codec's `source`) divides each element in f64 and rounds the quotient,
//! which its lemma proves exact; an f64 division and an f64 conversion per element cost more
//! than reading and writing the element. For f32 sources rounded to nearest there are
//! cheaper routes, each exact:
//!
//! * **E2M1 by the reciprocal** ([`e2m1`]), where every divisor `d` of the segment has a
//!   reciprocal `r = fl32(1 / d)` (through f64) that is a normal f32. The f32 product `y =
//!   fl32(x r)` is then within a relative 2^-22.9 of `x / d` (two roundings of at most 2^-24
//!   each, and the f64 one of 2^-53) wherever `y` is a normal f32, and lowp's vector path rounds
//!   `y` to E2M1. Rounding is monotonic, so that element is the correctly rounded one unless
//!   an E2M1 tie (0.25, 0.75, 1.25, 1.75, 2.5, 3.5, 5; and 7, where saturation to ±6 takes
//!   over) lies between `y` and `x / d` or on `y`. Such a tie `t` is then within 3 f32 steps
//!   of `y` (`|y - t| <= 2^-22.9 |x / d|`, and a step of `y`'s binade is at least 2^-24 of
//!   it; no tie lies just below a power of two, so none is reached across a binade below),
//!   and every tie has at most two bits after the point (its bits end in 21 zeros): each `y`
//!   in [0.125, 8) within 8 steps of such a number is rounded again from the exact quotient
//!   (false positives cost only time). Outside that range nothing is flagged and nothing
//!   needs to be: below 0.125 (a subnormal `y` included, off by at most 2^-150 more) both
//!   quotients lie below the first tie and give ±0 with `x`'s sign; from 8 on
//!   (an infinite `y` included, when `x r` overflows) both saturate to ±6. A zero scale's
//!   elements are the signed zeros of [`zeroed`], NaN staying NaN, rounded by the same vector
//!   path as the general route's.
//! * **E2M1 by thresholds** (`e2m1_by_thresholds`), for segments with a divisor whose
//!   reciprocal is not a normal f32 (scales near the ends of f32's range). The element is
//!   decided by where `|x|` lies among the
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

use super::divisor::{Divisor, SEG_BLOCKS, zeroed};
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
/// `dst[..src.len()]`, and those elements widened to f32 into `widened[..src.len()]` (as
/// [`LowpFloat::to_f32`] gives them: the grid value with the element's sign). `quotients` is
/// scratch; `dst`, `widened` and `quotients` hold at least `padded` values (the bulk
/// conversions' whole blocks). By the reciprocal where every divisor's is a normal f32, else by
/// the thresholds (the module doc). Returns `false`, writing nothing, for blocks of other than
/// [`LANES`] values (nvfp4's) or when a divisor is a power of two (the MX schemes' own f32
/// route is faster there).
#[inline(always)] // into `quantize`'s vectorized job
pub(super) fn e2m1(
    src: &[f32],
    divs: &[Divisor],
    block: usize,
    padded: usize,
    quotients: &mut [f32],
    dst: &mut [f4e2m1fn],
    widened: &mut [f32],
) -> bool {
    const BLOCKS: usize = SEG_BLOCKS;
    debug_assert!(divs.len() <= BLOCKS && src.len() <= divs.len() * block);
    let mut reciprocals = [0f32; BLOCKS];
    for (r, &d) in reciprocals.iter_mut().zip(divs) {
        *r = match d {
            Divisor::Zero => 0.0,
            Divisor::Div(d) => (1.0 / d) as f32,
            Divisor::Pow2(_) => return false,
        };
    }
    let usable = |(&r, &d): (&f32, &Divisor)| r.is_normal() || d == Divisor::Zero;
    if block != LANES || !reciprocals.iter().zip(divs).all(usable) {
        return e2m1_by_thresholds(src, divs, block, dst, widened);
    }
    for ((s, y), (&r, &d)) in src
        .chunks(block)
        .zip(quotients.chunks_mut(block))
        .zip(reciprocals.iter().zip(divs))
    {
        if d == Divisor::Zero {
            s.iter()
                .zip(y)
                .for_each(|(&x, y)| *y = zeroed(x as f64) as f32);
        } else {
            s.iter().zip(y).for_each(|(&x, y)| *y = x * r);
        }
    }
    round_quotients(src, divs, block, padded, quotients, dst, may_be_e2m1_tie);
    dst[..padded].convert_to_f32_slice(&mut widened[..padded]);
    true
}

/// Whether the f32 quotient `y` of the reciprocal route of [`e2m1`] may round otherwise than
/// the exact one: always when an E2M1 tie (0.25, 0.75, 1.25, 1.75, 2.5, 3.5, 5, and 7, where
/// saturation takes over) lies between them or on `y`, sometimes when not. `y` is within
/// 2^-22.9 of the exact quotient, relatively (see the module doc), so such a tie is within 3
/// f32 steps of it; every tie has at most two bits after the point, so its bits end in 21
/// zeros. The test flags each `y` in [0.125, 8) within 8 steps of such a number.
#[inline(always)]
fn may_be_e2m1_tie(y: f32) -> bool {
    let bits = y.to_bits() & 0x7fff_ffff;
    // One comparison each: below 0.125 the difference wraps around to above the span.
    let in_range = bits.wrapping_sub(0.125f32.to_bits()) < 8f32.to_bits() - 0.125f32.to_bits();
    in_range & ((bits.wrapping_add(8) & 0x1f_ffff) < 16)
}

/// [`e2m1`] by the thresholds (the module doc), for any divisors but powers of two; `false`,
/// writing nothing, for those or for blocks of other than [`LANES`] values.
#[inline(always)] // into `quantize`'s vectorized job
fn e2m1_by_thresholds(
    src: &[f32],
    divs: &[Divisor],
    block: usize,
    dst: &mut [f4e2m1fn],
    widened: &mut [f32],
) -> bool {
    const BLOCKS: usize = SEG_BLOCKS;
    debug_assert!(divs.len() <= BLOCKS && src.len() <= divs.len() * block);
    if block != LANES {
        return false;
    }
    let mut ds = [0f64; BLOCKS];
    for (x, &d) in ds.iter_mut().zip(divs) {
        *x = match d {
            Divisor::Zero => 0.0,
            Divisor::Div(d) => d,
            Divisor::Pow2(_) => return false,
        };
    }
    // Midpoint by midpoint over all the blocks, which runs on vectors. Below 2^31, the bounds
    // are compared as i32s: one instruction (SSE2 and AVX2 have no unsigned one).
    let mut bounds_by_midpoint = [[0i32; BLOCKS]; 7];
    for (i, bounds) in bounds_by_midpoint.iter_mut().enumerate() {
        for (b, &d) in bounds.iter_mut().zip(&ds) {
            *b = e2m1_bound(i, d) as i32;
        }
    }
    // Whole blocks as arrays of a fixed length, so that each is straight-line vector code
    // with no loop of its own; then the segment's last block if it is shorter (a row's end).
    let whole_blocks = src
        .chunks_exact(LANES)
        .zip(dst.chunks_exact_mut(LANES))
        .zip(widened.chunks_exact_mut(LANES));
    for (k, ((x, o), w)) in whole_blocks.enumerate() {
        let bounds: [i32; 7] = core::array::from_fn(|i| bounds_by_midpoint[i][k]);
        let x: &[f32; LANES] = x.try_into().expect("a whole block");
        let o: &mut [f4e2m1fn; LANES] = o.try_into().expect("a whole block");
        let w: &mut [f32; LANES] = w.try_into().expect("a whole block");
        // One expression per lane, all seven comparisons in it, so that the compiler
        // vectorizes across the lanes (counting in 32-bit lanes, as they are compared).
        let patterns: [u32; LANES] = core::array::from_fn(|j| {
            let bits = x[j].to_bits();
            e2m1_pattern(bits, e2m1_count(bits, &bounds))
        });
        *o = core::array::from_fn(|j| f4e2m1fn::from_bits(patterns[j] as u8));
        *w = core::array::from_fn(|j| e2m1_value(patterns[j]));
    }
    let whole = src.len() / LANES;
    let at = whole * LANES;
    if at < src.len() {
        let bounds: [i32; 7] = core::array::from_fn(|i| bounds_by_midpoint[i][whole]);
        let tail = src[at..].iter().zip(&mut dst[at..]).zip(&mut widened[at..]);
        for ((&x, o), w) in tail {
            let p = e2m1_pattern(x.to_bits(), e2m1_count(x.to_bits(), &bounds));
            *o = f4e2m1fn::from_bits(p as u8);
            *w = e2m1_value(p);
        }
    }
    true
}

/// Lanes of the comparisons in [`e2m1`]: nvfp4's block.
const LANES: usize = 16;

/// How many of the bounds (bits, as i32s) the magnitude of the f32 of bits `bits` exceeds.
#[inline(always)]
fn e2m1_count(bits: u32, bounds: &[i32; 7]) -> u32 {
    let m = (bits & 0x7fff_ffff) as i32;
    bounds.iter().map(|&b| u32::from(m > b)).sum()
}

/// The E2M1 pattern of the f32 of bits `bits` whose magnitude exceeds `count` bounds: the
/// sign and the count. A NaN (magnitude bits above infinity's, which exceed every bound) takes
/// code 0 and the opposite sign, as the general route rounds it.
#[inline(always)]
fn e2m1_pattern(bits: u32, count: u32) -> u32 {
    let nan = bits & 0x7fff_ffff > f32::INFINITY.to_bits();
    let code = if nan { 0 } else { count };
    let sign = ((bits >> 28) & 8) ^ if nan { 8 } else { 0 };
    sign | code
}

/// The f32 of E2M1 pattern `p` (0..16): code `c` is 0, 0.5 (2^-1, the subnormal), or for `c
/// >= 2` the normal `(1 + (c & 1) / 2) * 2^((c >> 1) - 1)`; the sign is bit 3. The exponent
/// formula gives code 1 its 2^-1 too, so only its mantissa bit and code 0 need masking. Masks,
/// not branches, so that [`e2m1`] computes it in the vector lanes it classifies in.
#[inline(always)]
fn e2m1_value(p: u32) -> f32 {
    let c = p & 7;
    let normal = u32::from(c >= 2);
    let magnitude = ((c >> 1) + 126) << 23 | (c & normal) << 22;
    let nonzero = 0u32.wrapping_sub(u32::from(c != 0));
    f32::from_bits(magnitude & nonzero | (p & 8) << 28)
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
#[inline(always)] // into `quantize`'s vectorized job
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
    round_quotients(src, divs, block, padded, quotients, dst, may_be_e4m3_tie);
    true
}

/// The common end of the f32 routes: the f32 quotients of `src` (`quotients[..src.len()]`, of
/// consecutive blocks of `block` values under `divs`) rounded by lowp's vector path into
/// `dst[..padded]` (the quotients padded with zeros to whole blocks of the bulk conversion),
/// then each element whose quotient `may_be_tie` flags rounded again from its exact f64
/// quotient (the general route, exact by the lemma of the codec's `source`). Elements under a zero scale have no
/// quotient to redo.
#[inline(always)]
fn round_quotients<T: LowpFloat>(
    src: &[f32],
    divs: &[Divisor],
    block: usize,
    padded: usize,
    quotients: &mut [f32],
    dst: &mut [T],
    may_be_tie: impl Fn(f32) -> bool,
) {
    let n = src.len();
    quotients[n..padded].fill(0.0);
    dst[..padded].convert_from_f32_slice_saturating(&quotients[..padded]);
    let quotients = &quotients[..n];
    // One pass without branches over the segment finds whether it has any; most have none.
    let flagged = quotients
        .iter()
        .fold(0u32, |any, &y| any | u32::from(may_be_tie(y)));
    if flagged == 0 {
        return;
    }
    let blocks = quotients.chunks(block).zip(src.chunks(block)).zip(divs);
    for (k, ((y, x), &d)) in blocks.enumerate() {
        let Divisor::Div(d) = d else { continue };
        for (i, (&y, &x)) in y.iter().zip(x).enumerate() {
            if may_be_tie(y) {
                dst[k * block + i] = T::from_f64_saturating(x as f64 / d);
            }
        }
    }
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
    fn e2m1_rounds_every_f32_as_the_f64_quotient_does() {
        let (mut by_reciprocal, mut flagged) = (0, 0);
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
            let reciprocal = (1.0 / d) as f32;
            if reciprocal.is_normal() {
                by_reciprocal += 1;
                flagged += xs
                    .iter()
                    .filter(|&&x| may_be_e2m1_tie(x * reciprocal))
                    .count();
            }
            for (route, (got, widened)) in both_routes(&xs, div).into_iter().enumerate() {
                for ((&x, g), w) in xs.iter().zip(&got).zip(&widened) {
                    let want = reference::<f4e2m1fn>(x, div);
                    assert_eq!(
                        g.to_bits(),
                        want.to_bits(),
                        "route {route}: x {x:e} ({:#x}) / {d:e}",
                        x.to_bits()
                    );
                    assert_eq!(w.to_bits(), want.to_f32().to_bits(), "{x:e} widened");
                }
            }
        }
        // Both of `e2m1`'s ways ran: the reciprocal with its fix-ups, and the thresholds for
        // divisors whose reciprocal is no normal f32.
        let divisors = nvfp4_divisors().len();
        assert!(
            by_reciprocal > divisors / 2 && by_reciprocal < divisors,
            "{by_reciprocal}"
        );
        assert!(flagged > 10_000, "{flagged}");
    }

    /// [`e2m1`]'s and [`e2m1_by_thresholds`]'s elements and widened values of `xs` under `div`,
    /// in blocks of 16 (with the padding `e2m1`'s bulk conversions take).
    fn both_routes(xs: &[f32], div: Divisor) -> [(Vec<f4e2m1fn>, Vec<f32>); 2] {
        let mut out = [(); 2].map(|()| (vec![f4e2m1fn::ZERO; xs.len()], vec![0f32; xs.len()]));
        let [(got, widened), (got_t, widened_t)] = &mut out;
        for (k, x) in xs.chunks(16).enumerate() {
            let at = k * 16;
            let (mut g, mut w, mut q) = ([f4e2m1fn::ZERO; 64], [0f32; 64], [0f32; 64]);
            assert!(e2m1(x, &[div], 16, 64, &mut q, &mut g, &mut w));
            got[at..at + x.len()].copy_from_slice(&g[..x.len()]);
            widened[at..at + x.len()].copy_from_slice(&w[..x.len()]);
            let (g, w) = (&mut got_t[at..], &mut widened_t[at..]);
            assert!(e2m1_by_thresholds(x, &[div], 16, g, w));
        }
        out
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
        for (got, widened) in both_routes(&xs, Divisor::Zero) {
            for ((&x, g), w) in xs.iter().zip(&got).zip(widened) {
                let want = reference::<f4e2m1fn>(x, Divisor::Zero);
                assert_eq!(g.to_bits(), want.to_bits(), "{x}");
                assert_eq!(w.to_bits(), want.to_f32().to_bits(), "{x} widened");
            }
        }
        let (mut g, mut w, mut q) = ([f4e2m1fn::ZERO; 64], [0f32; 64], [0f32; 64]);
        assert!(!e2m1(
            &xs,
            &[Divisor::Pow2(3)],
            16,
            64,
            &mut q,
            &mut g,
            &mut w
        ));
    }

    /// The integer decoding [`e2m1`] widens with is lowp's, on every pattern (the sign of zero
    /// included).
    #[test]
    fn e2m1_value_is_every_patterns_f32() {
        for p in 0..16u8 {
            let want = f4e2m1fn::from_bits(p).to_f32();
            assert_eq!(e2m1_value(p as u32).to_bits(), want.to_bits(), "{p:#x}");
        }
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
