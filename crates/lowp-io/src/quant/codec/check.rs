//! Checking the stored scales of quantized blocks: which ones decode to garbage.

use super::lengths::{check_bytes, rows_of};
use super::scale::{scale_bits, scale_factor_f64};
use crate::quant::Scheme;

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
/// (laid out as [`quantize`](super::quantize) writes them and [`dequantize`](super::dequantize) reads them, for fp8-block one band
/// of at most 128 rows): how many blocks there are, and how many have a bad scale.
///
/// A block is judged by the factor its elements are multiplied by when decoded: the float
/// scale (fp8-block, fp8-channel: the little-endian f32s [`dequantize`](super::dequantize) takes, bf16 and f16
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
