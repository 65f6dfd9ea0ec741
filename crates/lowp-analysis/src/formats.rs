//! `lowp formats`: one table describing every format.
//!
//! Every figure comes from the library: the widths and bias from the `Format` description, the
//! limits from the types' constants (`EPSILON`, `MIN_POSITIVE_SUBNORMAL`, `MIN_POSITIVE`, `MAX`,
//! `DIGITS`) and the special-value policy from what the type's conversions actually do.

use crate::bits::hex;
use crate::output::{Cell, Column, Table};

use lowp::Format;
use lowp::format::NanEncoding;
use std::num::FpCategory;

/// The columns of the table, in order.
const COLUMNS: [Column; 18] = [
    Column::left("name", "format"),
    Column::right("total_bits", "bits"),
    Column::right("sign_bits", "sign"),
    Column::right("exponent_bits", "exp"),
    Column::right("mantissa_bits", "mant"),
    Column::right("bias", "bias"),
    Column::left("epsilon", "epsilon"),
    Column::left("min_positive_subnormal", "min subnormal"),
    Column::left("min_positive_normal", "min normal"),
    Column::left("max", "max"),
    Column::right("digits", "digits"),
    Column::left("has_infinity", "inf"),
    Column::left("nan", "NaN").human_only(),
    Column::left("nan_encoding", "NaN encoding").machine_only(),
    Column::right("nan_patterns", "NaN patterns").machine_only(),
    Column::left("nan_bits", "NaN bits").machine_only(),
    Column::left("zero", "zero"),
    Column::left("overflow", "overflow"),
];

/// The table of all formats.
pub fn table() -> Table {
    Table {
        columns: COLUMNS.to_vec(),
        rows: crate::registry::all().map(row).collect(),
    }
}

/// One format's row, matching [`COLUMNS`].
fn row(ops: &Format) -> Vec<Cell> {
    let f = ops;
    let nan_patterns: Vec<u32> = (0..=f.bits_mask())
        .filter(|&b| ops.classify(b) == FpCategory::Nan)
        .collect();
    let min_subnormal = if f.subnormals {
        Cell::Number(ops.min_positive_subnormal_value())
    } else {
        Cell::Empty
    };
    vec![
        Cell::Text(f.name.to_string()),
        Cell::Int(f.total_bits().into()),
        Cell::Int(f.signed.into()),
        Cell::Int(f.exponent_bits.into()),
        Cell::Int(f.mantissa_bits.into()),
        Cell::Int(f.bias.into()),
        Cell::Number(ops.epsilon()),
        min_subnormal,
        Cell::Number(ops.min_positive_value()),
        Cell::Number(ops.max_value()),
        Cell::Int(ops.digits().into()),
        Cell::Bool(f.has_infinity()),
        Cell::Text(nan_summary(ops, &nan_patterns)),
        Cell::Text(nan_encoding(f.nan).to_string()),
        Cell::Int(nan_patterns.len() as i64),
        f.nan_bits()
            .map_or(Cell::Empty, |b| Cell::Text(hex(b, f.total_bits()))),
        Cell::Text(zero_policy(ops).to_string()),
        Cell::Text(overflow_policy(ops).to_string()),
    ]
}

/// The NaN column a person reads: `none`, the patterns when there are one or two, or the IEEE
/// rule and how many patterns it covers.
fn nan_summary(ops: &Format, patterns: &[u32]) -> String {
    let bits = ops.total_bits();
    match patterns {
        [] => "none".to_string(),
        [_] | [_, _] => patterns
            .iter()
            .map(|&b| hex(b, bits))
            .collect::<Vec<_>>()
            .join(" "),
        _ => format!("ieee ({})", patterns.len()),
    }
}

/// The stable name of a NaN encoding.
fn nan_encoding(nan: NanEncoding) -> &'static str {
    match nan {
        NanEncoding::None => "none",
        NanEncoding::Ieee => "ieee",
        NanEncoding::AllOnes => "all_ones",
        NanEncoding::NegativeZero => "negative_zero",
    }
}

/// `signed` when -0 and +0 are distinct values, `unsigned` when -0.0 converts to the one zero,
/// `none` when 0.0 does not convert to a zero at all.
fn zero_policy(ops: &Format) -> &'static str {
    let pos = ops.from_f64(0.0);
    let neg = ops.from_f64(-0.0);
    if ops.classify(pos) != FpCategory::Zero {
        "none"
    } else if pos != neg && ops.classify(neg) == FpCategory::Zero {
        "signed"
    } else {
        "unsigned"
    }
}

/// What rounding a too-large finite value gives: `inf`, `nan` or `saturate` (±MAX).
fn overflow_policy(ops: &Format) -> &'static str {
    match ops.classify(ops.from_f64(f64::MAX)) {
        FpCategory::Infinite => "inf",
        FpCategory::Nan => "nan",
        _ => "saturate",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(name: &str) -> serde_json::Value {
        table()
            .to_json_records()
            .into_iter()
            .find(|r| r["name"] == name)
            .unwrap()
    }

    #[test]
    fn policies() {
        let f16 = record("f16");
        assert_eq!(f16["overflow"], "inf");
        assert_eq!(f16["zero"], "signed");
        assert_eq!(f16["nan_patterns"], 2046);
        assert_eq!(f16["nan_bits"], "0x7e00");
        let e4m3 = record("f8e4m3fn");
        assert_eq!(e4m3["overflow"], "nan");
        assert_eq!(e4m3["nan_patterns"], 2);
        let fnuz = record("f8e4m3fnuz");
        assert_eq!(fnuz["zero"], "unsigned");
        assert_eq!(fnuz["nan_bits"], "0x80");
        let e8m0 = record("f8e8m0fnu");
        assert_eq!(e8m0["zero"], "none");
        assert!(e8m0["min_positive_subnormal"].is_null());
        let fp4 = record("f4e2m1fn");
        assert_eq!(fp4["overflow"], "saturate");
        assert!(fp4["nan_bits"].is_null());
        assert_eq!(fp4["max"], 6.0);
    }
}
