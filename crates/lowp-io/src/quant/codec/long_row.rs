//! fp8-channel's rows too long to hold in memory at once. A row is one block with one scale,
//! chosen from the whole row: here it is chosen from passes over the row's pieces (its largest
//! magnitude, then with [`ScaleSearch::Mse`] every candidate's error), and each piece is then
//! rounded with it. The elements, the scale and the statistics are those [`super::quantize`]
//! gives the whole row: the choice compares the same candidates in the same order, and only
//! the order in which a candidate's error is summed over the pieces differs.

use super::element::{Elem, Encoded, Work, encode};
use super::errors::{Errors, block_error, count_block, saturated_in, saturates};
use super::options::{QuantOptions, ScaleSearch};
use super::round::widen;
use super::scale::{Choice, spec_choice, stored_bits};
use super::search::{candidate, candidate_count, searched};
use super::source::{QuantSource, Scan};
use super::stats::QuantStats;
use crate::quant::Scheme;
use crate::quant::divisor::SEG;
use lowp::f8e4m3fn;

/// The first pass over a long row: what its pieces hold, merged.
#[derive(Clone, Copy, Debug, Default)]
pub struct RowScan(Scan);

impl RowScan {
    /// The scan of one piece of a row.
    pub fn of<S: QuantSource>(piece: &[S]) -> RowScan {
        let mut scan = Scan::default();
        piece.chunks(SEG).for_each(|x| scan.merge(S::scan(x)));
        RowScan(scan)
    }

    /// Adds another piece's scan (in any order).
    pub fn merge(&mut self, other: RowScan) {
        self.0.merge(other.0);
    }
}

/// The scale of one long row of fp8-channel: the candidates after the first pass, and the
/// chosen one after [`LongRow::choose`].
#[derive(Clone, Debug)]
pub struct LongRow {
    opts: QuantOptions,
    scan: Scan,
    /// The formula's scale first, then [`ScaleSearch::Mse`]'s candidates in the order it tries
    /// them (only the formula's when the row is not searched).
    candidates: Vec<Choice>,
    chosen: Choice,
}

impl LongRow {
    /// The candidates for a row whose pieces scanned to `scan`, under `opts`; the formula's
    /// scale is chosen until [`LongRow::choose`] says otherwise.
    pub fn new(opts: &QuantOptions, scan: RowScan) -> LongRow {
        let scheme = Scheme::Fp8Channel;
        let scan = scan.0;
        let spec = spec_choice::<f8e4m3fn>(scheme, scan.amax, 0.0, opts.scale_type);
        let mut candidates = vec![spec];
        if opts.search == ScaleSearch::Mse && searched(scan, spec) {
            candidates.extend(
                (0..candidate_count(scheme))
                    .filter_map(|k| candidate(scheme, spec, scan.amax, 0.0, opts.scale_type, k)),
            );
        }
        LongRow {
            opts: *opts,
            scan,
            candidates,
            chosen: spec,
        }
    }

    /// Whether the choice needs a second pass ([`LongRow::errors`] of every piece): with
    /// [`ScaleSearch::Mse`], for a row that is neither zero nor holds NaN or infinity.
    pub fn searching(&self) -> bool {
        self.candidates.len() > 1
    }

    /// Each candidate's squared error over `piece`, rounding to nearest, added to `errors`
    /// (one per candidate, zeros to start with).
    pub fn errors<S: QuantSource>(&self, piece: &[S], errors: &mut [f64]) {
        let mut work = Work::<f8e4m3fn>::new();
        for (c, e) in self.candidates.iter().zip(errors.iter_mut()) {
            for x in piece.chunks(SEG) {
                work.trial(x, &[c.div], x.len());
                *e += block_error(x, &work.q[..x.len()], c.div.step()).1;
            }
        }
    }

    /// How many error sums [`LongRow::errors`] fills.
    pub fn candidate_count(&self) -> usize {
        self.candidates.len()
    }

    /// Chooses the candidate of least error over the whole row, the earlier on ties (the
    /// formula's before any other): `errors` is the sum of every piece's [`LongRow::errors`].
    pub fn choose(&mut self, errors: &[f64]) {
        let mut best = 0;
        for (k, e) in errors.iter().enumerate().skip(1) {
            if *e < errors[best] {
                best = k;
            }
        }
        self.chosen = self.candidates[best];
    }

    /// The row's stored scale: the chosen one's little-endian f32 bytes, or NaN / +infinity for
    /// a row holding NaN / only infinities beside zeros.
    pub fn scale_bytes(&self) -> [u8; 4] {
        stored_bits(Scheme::Fp8Channel, self.chosen, self.scan).to_le_bytes()
    }

    /// The statistics of the row as a block (its count, amax, non-finite elements and
    /// clipping), to merge once with those of its pieces.
    pub fn block_stats(&self) -> QuantStats {
        let mut stats = QuantStats::default();
        count_block::<f8e4m3fn>(&mut stats, self.scan, self.chosen.div);
        stats
    }

    /// Rounds `piece`, whose first element is element `first` of the tensor, with the chosen
    /// scale into `data` (one byte per element), and gives its elements' statistics.
    pub fn encode<S: QuantSource>(&self, piece: &[S], first: u64, data: &mut [u8]) -> QuantStats {
        let mut stats = QuantStats::default();
        let mut work = Work::<f8e4m3fn>::new();
        let mut errors = Errors::default();
        let div = self.chosen.div;
        for (k, x) in piece.chunks(SEG).enumerate() {
            let (c0, n) = (k * SEG, x.len());
            let encoded = encode(
                x,
                &[div],
                n,
                self.opts.rounding,
                first.wrapping_add(c0 as u64),
                &mut work.scratch,
                &mut work.elems,
                &mut work.q,
            );
            f8e4m3fn::store(&work.elems[..n], &mut data[c0..c0 + n]);
            if encoded == Encoded::Elements {
                widen(&work.elems, n, &mut work.q);
            }
            stats.elements += n as u64;
            if self.scan.nonfinite == 0 {
                errors.add(x, &work.q[..n], div.step());
            }
        }
        errors.into_stats(&mut stats);
        if saturates::<f8e4m3fn>(self.scan, div) {
            stats.saturated += saturated_in::<S, f8e4m3fn>(piece, div.step());
        }
        stats
    }
}
