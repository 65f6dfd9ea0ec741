//! The driver: a chunk's rows quantized segment by segment (MX, nvfp4), band by band
//! (fp8-block) or row by row (fp8-channel).
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

use super::element::{Elem, Encoded, Work, encode};
use super::errors::{Errors, block_error, count_block, saturated_in, saturates};
use super::lengths::{check_bytes, rows_of};
use super::options::{QuantOptions, ScaleSearch};
use super::round::{padded, widen};
use super::scale::{Choice, spec_choices, stored_bits};
use super::search::{search_segment, whole_block_choice};
use super::source::{QuantSource, Scan};
use super::stats::QuantStats;
use crate::quant::Scheme;
use crate::quant::divisor::{Divisor, SEG, SEG_BLOCKS};
use lowp::{f4e2m1fn, f8e4m3fn};

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
/// * `tensor_scale`: nvfp4's `scale_2` from [`nvfp4_tensor_scale`](super::nvfp4_tensor_scale) of the whole tensor's
///   [`amax`](super::amax) (ignored by the other schemes); it must be finite and non-negative.
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
/// saturate to ±448 (E4M3) or ±6 (E2M1): exactly, from the real quotient (the proof is in `source`).
/// Subnormal inputs and subnormal elements are handled like any other value. FP4 elements are
/// packed two to a byte, the even element in the low nibble, each row padded with +0 nibbles
/// to whole blocks. Blocks with NaN or infinity: see this module's documentation.
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
                    search_segment(
                        self.scheme,
                        self.scale_2,
                        seg,
                        &scans[..nb],
                        &mut chosen[..nb],
                        &mut work,
                    );
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
            let choice =
                whole_block_choice::<T>(self.scheme, &self.opts, self.scale_2, scan, |div| {
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
            let choice =
                whole_block_choice::<T>(self.scheme, &self.opts, self.scale_2, scan, |div| {
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
