//! Cutting a block-scaled tensor into tiles: rectangles of its rows and columns that no block
//! crosses and that fit a thread's buffers, whatever the tensor's shape.
//!
//! A tensor `[..., R, C]` is seen as rows of `C` columns, every matrix's rows one after the
//! other. A tile holds whole blocks: its rows start at a multiple of the block's rows within
//! its matrix (128 for `fp8-block`, 1 otherwise) and its columns at a multiple of the block's
//! columns, and it ends at block boundaries or at the matrix's last row and the rows' last
//! column. Quantizing or decoding tile by tile therefore gives what the whole tensor would,
//! block for block; and since a tile's size is bounded by [`Budget`] rather than by a row's
//! length, so is the memory a thread needs, for a `[1, 2^28]` row as for a `[4096, 4096]`
//! matrix.
//!
//! `fp8-channel`'s block is a whole row. A row too long for the budget is cut into *pieces*
//! ([`Tile::col`] > 0 or [`Tile::cols`] < `C`), whose scale is chosen from passes over all of
//! them ([`crate::quant::LongRow`]) before any is rounded.

use crate::quant::Scheme;

/// The most a tile may take, in bytes of its widest buffer.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Budget {
    /// Bytes one element takes in that buffer (the source's size to quantize, 8 for the f64
    /// values of a decode).
    pub unit: usize,
    /// Bytes of a tile of the row-wise schemes, and of a piece of a long fp8-channel row.
    pub bytes: usize,
    /// Bytes of an fp8-block band of 128 rows kept whole: wider ones are cut into tiles of
    /// whole 128 x 128 blocks.
    pub band_bytes: usize,
}

/// A rectangle of a tensor: `rows` rows from row `row` (counted over every matrix), `cols`
/// columns from column `col`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Tile {
    /// The first row.
    pub row: usize,
    /// How many rows.
    pub rows: usize,
    /// The first column.
    pub col: usize,
    /// How many columns.
    pub cols: usize,
}

/// The columns of the last dimension, the rows of a matrix, and the matrices of `shape` (at
/// least 2-D).
fn dims(shape: &[usize]) -> (usize, usize, usize) {
    let n = shape.len();
    (shape[n - 1], shape[n - 2], shape[..n - 2].iter().product())
}

/// A tile's width for rows `rows` tall within `bytes`: a multiple of `align`, at least one
/// `align`, at most the whole row.
fn width(bytes: usize, unit: usize, rows: usize, align: usize, cols: usize) -> usize {
    let w = (bytes / (unit * rows.max(1))) / align * align;
    w.max(align).min(cols)
}

/// Cuts `rows` rows from `row`, all `cols` columns wide, into tiles at most `w` columns wide.
fn across(row: usize, rows: usize, cols: usize, w: usize, out: &mut Vec<Tile>) {
    let w = w.max(1);
    let mut col = 0;
    while col < cols {
        let width = w.min(cols - col);
        out.push(Tile {
            row,
            rows,
            col,
            cols: width,
        });
        col += width;
    }
}

/// The elements one fp8-channel piece of a long row is a multiple of: the codec's segment,
/// so that every piece's sums run over the same segments as the whole row's.
const PIECE_ALIGN: usize = 1024;

/// The tiles of a tensor of `shape` (at least 2-D) under `scheme`, in the tensor's order.
///
/// Row-wise schemes (MX, nvfp4, fp8-channel): runs of whole rows of about `budget.bytes`; a
/// row longer than that alone, in tiles of whole blocks (fp8-channel: pieces of a multiple of
/// 1024 elements). fp8-block: one band of 128 rows (fewer at a matrix's end) per tile while the
/// band fits `budget.band_bytes`, else the band in tiles of whole 128-column blocks. An empty
/// tensor has no tiles; rows of no columns make none either.
pub(crate) fn tiles(scheme: Scheme, shape: &[usize], budget: Budget) -> Vec<Tile> {
    let (cols, rows, matrices) = dims(shape);
    let mut out = Vec::new();
    if cols == 0 || rows == 0 || matrices == 0 {
        return out;
    }
    let unit = budget.unit.max(1);
    if scheme == Scheme::Fp8Block {
        let (tall, wide) = (scheme.block_rows(), scheme.block_cols());
        for m in 0..matrices {
            for r in (0..rows).step_by(tall) {
                let h = tall.min(rows - r);
                let w = if h * cols * unit <= budget.band_bytes {
                    cols
                } else {
                    width(budget.band_bytes, unit, h, wide, cols)
                };
                across(m * rows + r, h, cols, w, &mut out);
            }
        }
        return out;
    }
    let all_rows = rows * matrices;
    let row_bytes = cols * unit;
    if row_bytes <= budget.bytes {
        let per_tile = (budget.bytes / row_bytes).max(1);
        for r in (0..all_rows).step_by(per_tile) {
            across(r, per_tile.min(all_rows - r), cols, cols, &mut out);
        }
        return out;
    }
    let align = if scheme == Scheme::Fp8Channel {
        PIECE_ALIGN
    } else {
        scheme.block_cols()
    };
    let w = width(budget.bytes, unit, 1, align, cols);
    for r in 0..all_rows {
        across(r, 1, cols, w, &mut out);
    }
    out
}

/// The codec's offset in bytes of the scale of the tile's first block, in the scales of a
/// tensor of `shape` under `scheme` laid out as the codec writes them (fp8 scales as 4-byte
/// f32s): one scale row per row, or per band of 128 rows for fp8-block.
pub(crate) fn scale_offset(scheme: Scheme, shape: &[usize], tile: Tile) -> usize {
    let (cols, rows, _) = dims(shape);
    let scale_row = scheme.scale_row_bytes(cols);
    let per_block = if scheme.float_scales() { 4 } else { 1 };
    if scheme == Scheme::Fp8Channel {
        return tile.row * scale_row;
    }
    let block = tile.col / scheme.block_cols() * per_block;
    if scheme == Scheme::Fp8Block {
        let (m, r) = (tile.row / rows, tile.row % rows);
        let band = m * rows.div_ceil(scheme.block_rows()) + r / scheme.block_rows();
        return band * scale_row + block;
    }
    tile.row * scale_row + block
}

/// The offset in bytes of element `(row, col)` in the element data of a tensor whose rows have
/// `cols` columns (`col` a multiple of the block's columns, so whole bytes for FP4).
pub(crate) fn data_offset(scheme: Scheme, cols: usize, row: usize, col: usize) -> usize {
    row * scheme.data_row_bytes(cols) + col * scheme.bits_per_element() as usize / 8
}

/// The tiles of a stack of matrices `[E, in, out]` stored transposed as `[E, out, in]`
/// (gpt-oss's experts), row-wise scheme `scheme` along `in`: rectangles of the stored
/// matrices, so `rows` of `out` and `cols` of `in` (a multiple of the blocks' columns or
/// reaching the end), [`Tile::row`] counting stored rows over every matrix. Each covers at most
/// about `budget.bytes` of `unit`-byte elements.
pub(crate) fn transposed_tiles(scheme: Scheme, shape: &[usize], budget: Budget) -> Vec<Tile> {
    let (ins, outs, matrices) = dims(shape);
    let mut out = Vec::new();
    if outs == 0 || ins == 0 || matrices == 0 {
        return out;
    }
    let unit = budget.unit.max(1);
    let align = scheme.block_cols();
    // As many stored rows as leave room for one block of columns each, then as many columns
    // as fit beside them.
    let tall = (budget.bytes / (unit * align)).clamp(1, outs);
    for m in 0..matrices {
        for r in (0..outs).step_by(tall) {
            let h = tall.min(outs - r);
            across(
                m * outs + r,
                h,
                ins,
                width(budget.bytes, unit, h, align, ins),
                &mut out,
            );
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Checks that `tiles` cover every element of a `matrices x rows x cols` stack once, each
    /// tile within `max` elements (unless a single block is larger), starting and ending at
    /// block boundaries, and within one matrix where blocks are taller than a row (rows of
    /// row-wise blocks are independent, whichever matrix they belong to).
    fn check(
        tiles: &[Tile],
        (matrices, rows, cols): (usize, usize, usize),
        (tall, wide): (usize, usize),
        max: usize,
    ) {
        let mut seen = vec![0u8; matrices * rows * cols];
        for t in tiles {
            assert!(t.rows > 0 && t.cols > 0, "{t:?}");
            if tall > 1 {
                let last = t.row + t.rows - 1;
                assert_eq!(t.row / rows, last / rows, "crosses a matrix: {t:?}");
            }
            assert_eq!((t.row % rows) % tall, 0, "{t:?}");
            assert!(t.rows == tall || (t.row + t.rows) % rows == 0 || t.rows % tall == 0);
            assert_eq!(t.col % wide, 0, "{t:?}");
            assert!(t.cols % wide == 0 || t.col + t.cols == cols, "{t:?}");
            assert!(
                t.rows * t.cols <= max || t.cols <= wide,
                "{t:?} over {max} elements"
            );
            for r in t.row..t.row + t.rows {
                for c in t.col..t.col + t.cols {
                    seen[r * cols + c] += 1;
                }
            }
        }
        assert!(
            seen.iter().all(|&n| n == 1),
            "not every element exactly once"
        );
    }

    fn budget(unit: usize, bytes: usize) -> Budget {
        Budget {
            unit,
            bytes,
            band_bytes: 4 * bytes,
        }
    }

    #[test]
    fn tiles_cover_every_element_once_and_cross_no_block() {
        let shapes: [&[usize]; 9] = [
            &[1, 5000],
            &[3, 100],
            &[2, 300, 257],
            &[1, 1],
            &[129, 1000],
            &[7, 64],
            &[4, 3, 2, 33],
            &[256, 4096],
            &[1, 1 << 16],
        ];
        for scheme in Scheme::ALL {
            for shape in shapes {
                for bytes in [64usize, 512, 4096, 1 << 20] {
                    let b = budget(4, bytes);
                    let (cols, rows, matrices) = dims(shape);
                    let tiles = tiles(scheme, shape, b);
                    let wide = match scheme {
                        Scheme::Fp8Channel => 1,
                        s => s.block_cols(),
                    };
                    let max = if scheme == Scheme::Fp8Block {
                        (b.band_bytes / 4).max(128 * 128)
                    } else {
                        (bytes / 4).max(PIECE_ALIGN).max(cols.min(wide))
                    };
                    check(
                        &tiles,
                        (matrices, rows, cols),
                        (scheme.block_rows(), wide),
                        max,
                    );
                    if scheme == Scheme::Fp8Channel {
                        // Pieces of a long row are whole segments but for the row's last.
                        for t in &tiles {
                            assert!(t.col % PIECE_ALIGN == 0, "{t:?}");
                        }
                    }
                }
            }
        }
        for bytes in [64usize, 4096, 1 << 20] {
            for shape in [[2usize, 40, 96], [1, 2880, 5760], [3, 33, 17]] {
                let (ins, outs, m) = (shape[2], shape[1], shape[0]);
                let tiles = transposed_tiles(Scheme::Mxfp4, &shape, budget(2, bytes));
                check(&tiles, (m, outs, ins), (1, 32), (bytes / 2).max(32));
                for t in &tiles {
                    let last = t.row + t.rows - 1;
                    assert_eq!(t.row / outs, last / outs, "crosses a matrix: {t:?}");
                }
            }
        }
    }

    #[test]
    fn offsets_follow_the_layout() {
        // fp8-block, 2 matrices of 200 x 300: 2 bands each, 3 scales (12 bytes) a band.
        let shape = [2, 200, 300];
        let t = Tile {
            row: 328,
            rows: 72,
            col: 256,
            cols: 44,
        };
        assert_eq!(scale_offset(Scheme::Fp8Block, &shape, t), 3 * 12 + 2 * 4);
        assert_eq!(
            data_offset(Scheme::Fp8Block, 300, 328, 256),
            328 * 300 + 256
        );
        // nvfp4, rows of 40 columns: 3 scales and 24 data bytes (padded) a row.
        let t = Tile {
            row: 5,
            rows: 1,
            col: 32,
            cols: 8,
        };
        assert_eq!(scale_offset(Scheme::Nvfp4, &[9, 40], t), 5 * 3 + 2);
        assert_eq!(data_offset(Scheme::Nvfp4, 40, 5, 32), 5 * 24 + 16);
        assert_eq!(scale_offset(Scheme::Fp8Channel, &[9, 40], t), 5 * 4);
        assert_eq!(scale_offset(Scheme::Mxfp8, &[9, 40], t), 5 * 2 + 1);
    }
}
