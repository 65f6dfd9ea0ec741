//! [`ScaleSearch::Mse`](super::ScaleSearch::Mse): the candidate scales around the formula's,
//! and the choice of the one of least squared error.

use super::element::{Elem, Work};
use super::errors::block_error;
use super::options::{QuantOptions, ScaleSearch, ScaleType};
use super::scale::{Choice, mx_choice, nv_choice, spec_choice};
use super::source::{QuantSource, Scan};
use crate::quant::Scheme;
use crate::quant::divisor::{Divisor, SEG_BLOCKS};

/// The fp8-block factors [`ScaleSearch::Mse`] tries besides 1.
pub(super) const FP8_BLOCK_FACTORS: [f64; 10] =
    [0.99, 0.98, 0.97, 0.96, 0.95, 0.94, 0.93, 0.92, 0.91, 0.90];

/// The nvfp4 steps (in E4M3 patterns) [`ScaleSearch::Mse`] tries around the formula's scale.
pub(super) const NVFP4_STEPS: [i32; 6] = [1, -1, 2, -2, 3, -3];

/// How many candidates [`ScaleSearch::Mse`] tries besides the formula's scale.
pub(super) fn candidate_count(scheme: Scheme) -> usize {
    match scheme {
        Scheme::Fp8Block | Scheme::Fp8Channel => FP8_BLOCK_FACTORS.len(),
        Scheme::Mxfp8 | Scheme::Mxfp4 => 2,
        Scheme::Nvfp4 => NVFP4_STEPS.len(),
    }
}

/// Candidate `k` (`< candidate_count`) besides `spec` for a block of amax `amax`, or `None`
/// where the scale format cannot hold it.
pub(super) fn candidate(
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
pub(super) fn searched(scan: Scan, spec: Choice) -> bool {
    scan.nonfinite == 0 && !matches!(spec.div, Divisor::Zero)
}

/// [`ScaleSearch::Mse`] for the blocks of one segment, whose formula scales `best` holds
/// on entry (`scale_2`: nvfp4's tensor scale): candidate `k` of every block is tried in one pass over the segment, and a
/// block takes it where it has strictly less error than the best so far.
pub(super) fn search_segment<S: QuantSource, T: Elem>(
    scheme: Scheme,
    scale_2: f32,
    seg: &[S],
    scans: &[Scan],
    best: &mut [Choice],
    work: &mut Work<T>,
) {
    let (bc, n, nb) = (scheme.block_cols(), seg.len(), best.len());
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
    for k in 0..candidate_count(scheme) {
        let mut any = false;
        let mut cands = [None; SEG_BLOCKS];
        for b in 0..nb {
            if searched(scans[b], spec[b]) {
                let amax = scans[b].amax;
                cands[b] = candidate(scheme, spec[b], amax, scale_2, ScaleType::F32, k);
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

/// The scale of a block scanned whole (fp8-block's and fp8-channel's, larger than a
/// segment): the formula's, or with [`ScaleSearch::Mse`] the candidate whose nearest-rounded
/// elements give the least error, `error_of` measuring a divisor over the whole block.
#[inline(always)]
pub(super) fn whole_block_choice<T: Elem>(
    scheme: Scheme,
    opts: &QuantOptions,
    scale_2: f32,
    scan: Scan,
    mut error_of: impl FnMut(Divisor) -> f64,
) -> Choice {
    let scale_type = opts.scale_type;
    let mut choice = spec_choice::<T>(scheme, scan.amax, scale_2, scale_type);
    if opts.search == ScaleSearch::Mse && searched(scan, choice) {
        let mut best = error_of(choice.div);
        let spec = choice;
        for k in 0..candidate_count(scheme) {
            let c = candidate(scheme, spec, scan.amax, scale_2, scale_type, k);
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
