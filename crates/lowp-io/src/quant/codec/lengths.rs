//! The lengths a chunk's values and bytes must have, checked before any work.

use crate::quant::Scheme;

/// Rows of `cols` columns in `len` values, or why not.
pub(super) fn rows_of(
    what: &str,
    scheme: Scheme,
    len: usize,
    cols: usize,
) -> Result<usize, String> {
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
pub(super) fn check_bytes(
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
