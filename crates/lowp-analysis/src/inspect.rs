//! `lowp inspect`: what rounding one value into each format gives.
//!
//! A decimal VALUE is rounded once, directly from its digits, into each requested format (the
//! type's `FromStr`), and so is a hexadecimal float (`0x1.8p3`, from its exact binary value);
//! the nearest f64 stands in for it only in the error columns. A bit pattern (`0x3c00 --as f16`) is shown as a value of its format, and each
//! `--to` format gets that value rounded into it. A decimal with `--as` is first rounded into
//! the `--as` format, and the `--to` formats convert that result.
//!
//! Each row shows the exact result, how the type's `Display` prints it (the shortest decimal
//! that reads back), its bits and fields, its neighbours, the error against the value rounded,
//! and what happened (exact, rounded, subnormal, underflow, overflow to inf / NaN / ±MAX). For a
//! decimal VALUE the row also says when rounding the nearest f64 instead (as `half` and
//! ml_dtypes do) would give another result: the double rounding lowp avoids.

use crate::bits::{self, hex};
use crate::error::Error;
use crate::input::Input;
use crate::number;
use crate::output::{Cell, Column, Table, json_text};

use crate::rounding::{Outcome, OverflowTo, Rounded};
use lowp::Format;
use serde_json::{Value, json};
use std::num::FpCategory;

/// Significant digits up to which the header prints the input's f64 exactly.
const INPUT_EXACT_DIGITS: usize = 60;

/// One line of the report: a rounding and what it started from.
struct Line {
    /// The rounding.
    rounded: Rounded,
    /// `"input"` (the command-line value), `"bits"` (a pattern given with --as) or the name of
    /// the `--as` format the value was converted from.
    from: &'static str,
    /// For a decimal input: the bits that rounding the nearest f64 would give (`from_f64`), which
    /// differ from `rounded.bits` (the decimal rounded once) when going through f64 rounds twice.
    via_f64: Option<u32>,
}

impl Line {
    /// A line for `ops`: the decimal `text` rounded once into it when the value came from one
    /// (with what rounding `input`, its nearest f64, would give beside it), else `input` rounded.
    fn new(ops: &'static Format, input: f64, from: &'static str, text: Option<&str>) -> Self {
        let via_f64 = ops.from_f64(input);
        let direct = text.and_then(|t| crate::input::round_once(ops, t));
        let measured = match text {
            Some(t) if direct.is_some() => crate::input::measured_as(input, t),
            _ => input,
        };
        Line {
            rounded: Rounded::with_bits(ops, measured, direct.unwrap_or(via_f64)),
            from,
            via_f64: direct.map(|_| via_f64),
        }
    }

    /// What rounding through f64 would give, when it differs from the decimal rounded once.
    fn double_rounded(&self) -> Option<u32> {
        let r = &self.rounded;
        let nan = |b| r.ops.classify(b) == FpCategory::Nan;
        self.via_f64
            .filter(|&d| d != r.bits && !(nan(d) && nan(r.bits)))
    }
}

/// Everything `lowp inspect` prints.
pub struct Report {
    /// VALUE as typed.
    text: String,
    /// VALUE as read.
    input: Input,
    /// The `--as` format, if any.
    as_format: Option<&'static Format>,
    /// The lines, the `--as` one first.
    lines: Vec<Line>,
}

/// Works out the report for VALUE `text`, the `--as` format and the `--to` formats. `as_arg`
/// is how the caller's user names the `--as` format (`"--as FORMAT"`, `"source='FORMAT'"`),
/// for the error messages ([`Input::parse`]).
pub fn run(
    text: &str,
    as_format: Option<&'static Format>,
    to: &[&'static Format],
    as_arg: &str,
) -> Result<Report, Error> {
    let input = Input::parse(text, as_format, as_arg)?;
    let mut lines = Vec::new();
    let (source, targets): (f64, Vec<&'static Format>) = match (input, as_format) {
        (Input::Bits { ops, bits }, _) => {
            let value = ops.to_f64(bits);
            lines.push(Line {
                rounded: Rounded::with_bits(ops, value, bits),
                from: "bits",
                via_f64: None,
            });
            (value, to.to_vec())
        }
        (Input::Decimal(x), Some(ops)) => {
            let line = Line::new(ops, x, "input", Some(text));
            let value = line.rounded.value;
            lines.push(line);
            (value, to.to_vec())
        }
        (Input::Decimal(x), None) if to.is_empty() => (x, crate::registry::all().collect()),
        (Input::Decimal(x), None) => (x, to.to_vec()),
    };
    let from = as_format.map_or("input", |f| f.name);
    let decimal = as_format.is_none().then_some(text);
    let mut seen: Vec<&str> = lines.iter().map(|l| l.rounded.ops.name).collect();
    for ops in targets {
        if !seen.contains(&ops.name) {
            seen.push(ops.name);
            lines.push(Line::new(ops, source, from, decimal));
        }
    }
    Ok(Report {
        text: text.to_string(),
        input,
        as_format,
        lines,
    })
}

/// The columns of the table; the machine-only ones appear in JSON.
const COLUMNS: [Column; 23] = [
    Column::left("format", "format"),
    Column::left("from", "from").machine_only(),
    Column::left("value", "value"),
    Column::left("value_exact", "exact value").machine_only(),
    Column::left("prints_as", "prints as"),
    Column::left("bits", "bits"),
    Column::left("fields", "sign|exp|mantissa").human_only(),
    Column::left("sign", "sign").machine_only(),
    Column::left("exponent", "exponent").machine_only(),
    Column::left("mantissa", "mantissa").machine_only(),
    Column::left("next_down", "next down"),
    Column::left("next_down_bits", "next down bits").machine_only(),
    Column::left("next_up", "next up"),
    Column::left("next_up_bits", "next up bits").machine_only(),
    Column::left("abs_error", "abs error"),
    Column::left("rel_error", "rel error"),
    Column::left("category", "category").machine_only(),
    Column::left("status", "status").machine_only(),
    Column::left("overflow", "overflow").machine_only(),
    Column::left("subnormal", "subnormal").machine_only(),
    Column::left("via_f64_bits", "via f64 bits").machine_only(),
    Column::left("double_rounding", "double rounding").machine_only(),
    Column::left("result", "result"),
];

impl Report {
    /// The table of all lines (the Python module reads its cells directly, keeping infinities
    /// that JSON turns into null).
    pub fn table(&self) -> Table {
        Table {
            columns: COLUMNS.to_vec(),
            rows: self.lines.iter().map(row).collect(),
        }
    }

    /// A line describing the input, above the text table.
    fn header(&self) -> String {
        match self.input {
            Input::Bits { ops, bits } => format!(
                "input: {} as {} = {}",
                self.text,
                ops.name,
                number::readable(ops.to_f64(bits))
            ),
            Input::Decimal(x) => {
                // Each format rounds the number as written; say so when its f64 stand-in
                // (used for the errors) is not even close to it.
                let mut s = match self.input.f64_note(&self.text) {
                    Some(note) => format!("input: {note}"),
                    None => format!(
                        "input: {} (as f64: {})",
                        self.text,
                        number::readable_with(x, INPUT_EXACT_DIGITS, 17)
                    ),
                };
                if let Some(ops) = self.as_format {
                    s.push_str(&format!(", rounded to {} first", ops.name));
                }
                s
            }
        }
    }

    /// The aligned text report: the input line, a blank line and the table.
    pub fn to_text(&self) -> String {
        let mut s = self.header();
        if self.as_format.is_some() && self.lines.len() > 1 {
            s.push_str("; the other rows convert that value");
        }
        format!("{s}\n\n{}", self.table().to_text())
    }

    /// The JSON report: `{"input": {...}, "results": [...]}`.
    pub fn to_json(&self) -> String {
        let input = match self.input {
            Input::Bits { ops, bits } => json!({
                "text": self.text,
                "kind": "bits",
                "as": ops.name,
                "bits": hex(bits, ops.total_bits()),
                "value": Cell::Number(ops.to_f64(bits)).json(),
                "value_exact": number::exact_string(ops.to_f64(bits)),
            }),
            Input::Decimal(x) => json!({
                "text": self.text,
                "kind": if crate::input::HexFloat::parse(&self.text).is_some() {
                    "hex float"
                } else {
                    "decimal"
                },
                "as": self.as_format.map(|f| f.name),
                "value": Cell::Number(x).json(),
                "value_exact": number::exact_string(x),
                "note": self.input.f64_note(&self.text),
            }),
        };
        json_text(&json!({
            "input": input,
            "results": Value::Array(self.table().to_json_records()),
        }))
    }
}

/// One line's cells, matching [`COLUMNS`].
fn row(line: &Line) -> Vec<Cell> {
    let r = &line.rounded;
    let f = r.ops;
    let width = f.total_bits();
    let [sign, exponent, mantissa] = bits::fields(f, r.bits);
    let field = |s: String| {
        if s.is_empty() {
            Cell::Empty
        } else {
            Cell::Text(s)
        }
    };
    let neighbour = |b: Option<u32>| {
        (
            b.map_or(Cell::Empty, |b| Cell::Number(r.ops.to_f64(b))),
            b.map_or(Cell::Empty, |b| Cell::Text(hex(b, width))),
        )
    };
    let (down, down_bits) = neighbour(r.next_down());
    let (up, up_bits) = neighbour(r.next_up());
    let error = r.error();
    let measured = |x: Option<f64>, exact: bool| match x {
        None => Cell::Empty,
        Some(x) if exact => Cell::Number(x),
        Some(x) => Cell::Approx(x),
    };
    let abs = measured(error.map(|e| e.abs), error.is_some_and(|e| e.abs_exact));
    let rel = measured(
        error.and_then(|e| e.rel),
        error.is_some_and(|e| e.rel_exact),
    );
    let overflow = match r.outcome {
        Outcome::Overflow { to, .. } => Cell::Text(
            match to {
                OverflowTo::Inf => "inf",
                OverflowTo::Nan => "nan",
                OverflowTo::Max => "max",
            }
            .to_string(),
        ),
        _ => Cell::Empty,
    };
    vec![
        Cell::Text(f.name.to_string()),
        Cell::Text(line.from.to_string()),
        Cell::Number(r.value),
        Cell::Text(number::exact_string(r.value)),
        Cell::Text(r.ops.display(r.bits).to_string()),
        Cell::Text(hex(r.bits, width)),
        Cell::Text(bits::fields_joined(f, r.bits)),
        field(sign),
        field(exponent),
        field(mantissa),
        down,
        down_bits,
        up,
        up_bits,
        abs,
        rel,
        Cell::Text(category(r.category).to_string()),
        Cell::Text(r.outcome.id().to_string()),
        overflow,
        Cell::Bool(r.category == FpCategory::Subnormal),
        line.via_f64
            .map_or(Cell::Empty, |b| Cell::Text(hex(b, width))),
        Cell::Bool(line.double_rounded().is_some()),
        Cell::Text(match line.double_rounded() {
            Some(via_f64) => format!(
                "{}; through the nearest f64 it would double-round to {}",
                describe(r),
                number::readable(r.ops.to_f64(via_f64))
            ),
            None => describe(r),
        }),
    ]
}

/// The stable name of a category.
fn category(c: FpCategory) -> &'static str {
    match c {
        FpCategory::Nan => "nan",
        FpCategory::Infinite => "infinite",
        FpCategory::Zero => "zero",
        FpCategory::Subnormal => "subnormal",
        FpCategory::Normal => "normal",
    }
}

/// The result column: what happened, in words.
fn describe(r: &Rounded) -> String {
    let negative = r.input.is_sign_negative();
    let signed = |s: &str| {
        if negative {
            format!("-{s}")
        } else {
            s.to_string()
        }
    };
    match r.outcome {
        Outcome::Exact if r.category == FpCategory::Infinite => "exact (infinity)".to_string(),
        Outcome::Exact => "exact".to_string(),
        Outcome::Rounded => "rounded".to_string(),
        Outcome::Subnormal { exact: true } => "subnormal, exact".to_string(),
        Outcome::Subnormal { exact: false } => "subnormal, rounded".to_string(),
        Outcome::Underflow => format!("underflow to {}", signed_zero(r)),
        Outcome::Clamped => "below the smallest value (no zero): clamped to it".to_string(),
        Outcome::Overflow { to, from_infinity } => {
            let what = if from_infinity {
                format!("{} (no infinity)", signed("inf"))
            } else {
                "overflow".to_string()
            };
            match to {
                OverflowTo::Inf => format!("{what} to {}", signed("inf")),
                OverflowTo::Nan => format!("{what} to NaN"),
                OverflowTo::Max => format!("{what}, saturated to {}", signed("MAX")),
            }
        }
        Outcome::NotRepresentable => "not representable: NaN".to_string(),
        Outcome::Nan => "NaN".to_string(),
        Outcome::NanReplaced => format!("NaN (no NaN in format) to {}", number::readable(r.value)),
    }
}

/// `0` or `-0`, as the result's sign has it.
fn signed_zero(r: &Rounded) -> &'static str {
    if r.value.is_sign_negative() {
        "-0"
    } else {
        "0"
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::lookup;

    fn results(text: &str, as_format: Option<&str>, to: &[&str]) -> Vec<Value> {
        let to: Vec<_> = to.iter().map(|n| lookup(n).unwrap()).collect();
        let report = run(
            text,
            as_format.map(|n| lookup(n).unwrap()),
            &to,
            "--as FORMAT",
        )
        .unwrap();
        let v: Value = serde_json::from_str(&report.to_json()).unwrap();
        v["results"].as_array().unwrap().clone()
    }

    #[test]
    fn default_is_every_format() {
        assert_eq!(results("1", None, &[]).len(), 12);
    }

    #[test]
    fn bits_with_conversions() {
        let r = results("0x3c00", Some("f16"), &["bf16", "f16", "half"]);
        assert_eq!(r.len(), 2);
        assert_eq!(r[0]["from"], "bits");
        assert_eq!(r[0]["value"], 1.0);
        assert_eq!(r[1]["from"], "f16");
        assert_eq!(r[1]["bits"], "0x3f80");
    }

    #[test]
    fn decimal_with_as_rounds_first() {
        let r = results("0.1", Some("f16"), &["f8e4m3fn"]);
        assert_eq!(r[0]["bits"], "0x2e66");
        assert_eq!(r[1]["from"], "f16");
    }

    #[test]
    fn double_rounding_is_flagged() {
        // Just above the midpoint between the f16 values 1 and 1.0009765625: the nearest f64 is
        // the midpoint itself, which ties to even (1), while the decimal rounds up.
        let r = results("1.00048828125000001", None, &["f16", "bf16"]);
        assert_eq!(r[0]["bits"], "0x3c01");
        assert_eq!(r[0]["via_f64_bits"], "0x3c00");
        assert_eq!(r[0]["double_rounding"], true);
        assert!(
            r[0]["result"]
                .as_str()
                .unwrap()
                .contains("double-round to 1"),
            "{}",
            r[0]["result"]
        );
        assert_eq!(r[1]["double_rounding"], false);
        let r = results("nan", None, &["f16"]);
        assert_eq!(r[0]["double_rounding"], false);
        let r = results("0x3c00", Some("f16"), &["bf16"]);
        assert!(r[1]["via_f64_bits"].is_null());
    }

    #[test]
    fn negative_overflow_words() {
        let r = results("-1e9", None, &["f16", "f4e2m1fn", "f8e4m3fn"]);
        assert_eq!(r[0]["result"], "overflow to -inf");
        assert_eq!(r[1]["result"], "overflow, saturated to -MAX");
        assert_eq!(r[2]["result"], "overflow to NaN");
    }

    #[test]
    fn every_bit_pattern_of_every_format() {
        for ops in crate::registry::all() {
            for bits in 0..=ops.bits_mask() {
                let text = format!("0x{bits:x}");
                let report = run(
                    &text,
                    Some(ops),
                    &crate::registry::all().collect::<Vec<_>>(),
                    "--as FORMAT",
                )
                .unwrap_or_else(|e| panic!("{} {text}: {e}", ops.name));
                let first = &report.lines[0].rounded;
                assert_eq!(first.bits, bits);
                let expected = match first.category {
                    FpCategory::Nan => Outcome::Nan,
                    FpCategory::Subnormal => Outcome::Subnormal { exact: true },
                    _ => Outcome::Exact,
                };
                assert_eq!(first.outcome, expected, "{} {text}", ops.name);
                if ops.total_bits() <= 8 {
                    // Rendering never fails either (16-bit ones are too many to render).
                    assert!(report.to_text().contains(&hex(bits, ops.total_bits())));
                    serde_json::from_str::<Value>(&report.to_json()).unwrap();
                }
            }
        }
    }
}
