//! Transposing rows of f32 into a sliver of the matrix product's packed `A`, four rows and four
//! steps at a time in SSE registers.
//!
//! [`crate::ops::gemm`] packs each block of `A` as slivers of `MR` rows, step by step: `MR`
//! values of one column of `A` side by side. Written one value at a time, every value is a
//! store of its own, and the stores bound the packing (1.4 cycles a value on a Zen 4, 6.7% of
//! an f32 product of n = 256). A 4 x 4 block transposed in registers takes four loads, eight
//! shuffles and four stores for sixteen values. The values are only moved, never changed, so
//! this gives the bits the plain loop gives; the tests compare the two on every path.

use super::Path;

/// Writes `rows[r][p]` at `sliver[p * MR + r]`, for every row `r < MR` and the steps `p` of
/// `sliver` (`sliver.len() / MR` of them) up to the last multiple of 4, and returns how many
/// steps it wrote: the transposition of `MR` rows (6 or 12: a multiple of 4, or of 4 plus 2)
/// into a sliver of [`crate::ops::gemm`]'s packed `A`, four steps at a time. It writes none
/// on the portable path or off x86-64; the caller moves the steps left one value at a time.
///
/// # Panics
///
/// If a row is shorter than `sliver.len() / MR`. An `MR` neither a multiple of 4 nor 2 more
/// than one does not compile.
pub(crate) fn rows_into_sliver<const MR: usize>(
    path: Path,
    rows: [&[f32]; MR],
    sliver: &mut [f32],
) -> usize {
    const {
        assert!(
            MR.is_multiple_of(4) || MR % 4 == 2,
            "rows: neither 4k nor 4k + 2"
        )
    };
    #[cfg(target_arch = "x86_64")]
    if path != Path::Portable {
        let done = sliver.len() / MR / 4 * 4;
        let rows = rows.map(|row| &row[..done]);
        for (q, steps) in sliver[..done * MR].chunks_exact_mut(4 * MR).enumerate() {
            let fours: [&[f32; 4]; MR] =
                core::array::from_fn(|r| rows[r][4 * q..4 * q + 4].try_into().expect("four"));
            // SAFETY: SSE2, all `four_steps` needs, is part of every x86-64 CPU.
            unsafe { four_steps::<MR>(fours, steps) };
        }
        return done;
    }
    let _ = (path, rows, sliver);
    0
}

/// Four steps of `MR` rows (`fours[r]` holds row `r`'s four values) into `steps`, `4 * MR`
/// values: step `i` at `steps[i * MR..(i + 1) * MR]`, in row order.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "sse2")]
#[inline]
fn four_steps<const MR: usize>(fours: [&[f32; 4]; MR], steps: &mut [f32]) {
    use core::arch::x86_64::{
        __m128, _mm_castps_pd, _mm_loadu_ps, _mm_movehl_ps, _mm_movelh_ps, _mm_storeh_pd,
        _mm_storel_pd, _mm_storeu_ps, _mm_unpackhi_ps, _mm_unpacklo_ps,
    };
    // SAFETY: SSE, which this function enables, is all `_mm_loadu_ps` needs; it reads the
    // four f32s of a live `&[f32; 4]`, with no alignment asked.
    let load = |four: &[f32; 4]| -> __m128 { unsafe { _mm_loadu_ps(four.as_ptr()) } };
    let store = |four: &mut [f32; 4], v: __m128| {
        // SAFETY: as `load`: it writes the four f32s of a live `&mut [f32; 4]`.
        unsafe { _mm_storeu_ps(four.as_mut_ptr(), v) }
    };
    let steps = &mut steps[..4 * MR];
    let mut r = 0;
    while r + 4 <= MR {
        // Rows r..r + 4 as [a0 a1 a2 a3], [b..], [c..], [d..]; the pairs' interleavings
        // [a0 b0 a1 b1], [a2 b2 a3 b3], [c0 d0 c1 d1], [c2 d2 c3 d3] give the columns.
        let [a, b, c, d] = [0, 1, 2, 3].map(|i| load(fours[r + i]));
        let (ab_low, ab_high) = (_mm_unpacklo_ps(a, b), _mm_unpackhi_ps(a, b));
        let (cd_low, cd_high) = (_mm_unpacklo_ps(c, d), _mm_unpackhi_ps(c, d));
        let columns = [
            _mm_movelh_ps(ab_low, cd_low),
            _mm_movehl_ps(cd_low, ab_low),
            _mm_movelh_ps(ab_high, cd_high),
            _mm_movehl_ps(cd_high, ab_high),
        ];
        for (i, column) in columns.into_iter().enumerate() {
            let at = i * MR + r;
            store((&mut steps[at..at + 4]).try_into().expect("four"), column);
        }
        r += 4;
    }
    if r < MR {
        // Two rows left: [a0 b0 a1 b1] and [a2 b2 a3 b3] hold each step's pair in a half.
        let (a, b) = (load(fours[r]), load(fours[r + 1]));
        let halves = [_mm_unpacklo_ps(a, b), _mm_unpackhi_ps(a, b)];
        for (h, half) in halves.into_iter().enumerate() {
            let half = _mm_castps_pd(half);
            let (low, high) = (2 * h * MR + r, (2 * h + 1) * MR + r);
            let low: &mut [f32; 2] = (&mut steps[low..low + 2]).try_into().expect("two");
            // SAFETY: SSE2, which this function enables, is all it needs; it writes 8 bytes,
            // the two f32s of a live `&mut [f32; 2]`, with no alignment asked.
            unsafe { _mm_storel_pd(low.as_mut_ptr().cast::<f64>(), half) };
            let high: &mut [f32; 2] = (&mut steps[high..high + 2]).try_into().expect("two");
            // SAFETY: as the store above.
            unsafe { _mm_storeh_pd(high.as_mut_ptr().cast::<f64>(), half) };
        }
    }
}
