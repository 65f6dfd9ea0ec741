//! `lowp error-table`: the error of every element-wise math function in each format, measured
//! on every input (the FP16 vs FP32 table that `docs/precision-analysis.md` discusses, extended
//! to every format and to the exact result).
//!
//! For each element-wise op and each format, the op the tensor layer really runs
//! ([`Tensor::unary`]: lowp's correctly rounded function, looked up in a table) is applied to
//! every finite value of the format inside the function's domain, and each result is compared
//!
//! * with the exact result: the f64 reference of [`lowp_tensor::ops::reference`] on the same
//!   (already rounded) input, whose own error (near 2^-53) is far below any format's; and
//! * with an FP32 computation, the method of the hand-measured FP16 table: the same op run on
//!   the input cast to f32 (so the f32 result, itself within an f32 ulp of exact).
//!
//! Errors are measured over the inputs whose exact result lies within the format's range and
//! whose output is not NaN or infinite; the others are counted apart and left out of the errors:
//! `overflows` (the exact result is beyond the largest finite value, or the output is
//! ±infinity) and `nans` (NaN out of an input inside the domain whose exact result is in range,
//! as E8M0's NaN for a negative result). `underflows` counts the nonzero exact results that came
//! out zero; those stay in the errors as well, with relative error 1, since the value really was
//! lost. Relative errors skip exact results of zero. Means weigh every input value alike
//! (each bit pattern once), so small magnitudes count as much as large ones.
//!
//! [`lowp::fit::FitStats`] measures a rounded slice against its source too, but is not used
//! here: it counts overflow from the source alone (an op that overflows in its f32 compute type
//! while the exact result fits would vanish from its counts), keeps saturated FP6/FP4 values in
//! the error statistics, and has no ulps.

use crate::error::Error;
use crate::format_grid::{Number, overflows, ulp};
use crate::output::{Cell, Column, Table};
use crate::progress::Control;
use lowp::Format;
use lowp::LowpFloat;
use lowp_tensor::ops::{UNARY_OPS, reference};
use lowp_tensor::{DType, Tensor};

/// The groups of functions, in table order, with the ops of each: the rows of the hand-measured
/// FP16 table `docs/precision-analysis.md` compares with, plus `log` with the logarithms, `abs`
/// with the rounding functions and `gelu` and `softplus` with the activations, which that table
/// did not measure.
pub const GROUPS: [(&str, &[&str]); 6] = [
    (
        "trigonometric",
        &[
            "sin", "cos", "atan", "acosh", "asinh", "tanh", "acos", "asin", "atanh",
        ],
    ),
    ("logarithms", &["log", "log2", "log10", "log1p"]),
    ("rounding", &["floor", "round", "relu", "ceil", "abs"]),
    ("roots", &["sqrt", "rsqrt"]),
    (
        "large outputs",
        &[
            "exp",
            "expm1",
            "tan",
            "cosh",
            "sinh",
            "reciprocal",
            "square",
            "tanh_shrink",
        ],
    ),
    (
        "activations",
        &[
            "logsigmoid",
            "sigmoid",
            "silu",
            "softsign",
            "gelu",
            "softplus",
        ],
    ),
];

/// The group of an op.
pub fn group_of(op: &str) -> &'static str {
    GROUPS
        .iter()
        .find(|(_, ops)| ops.contains(&op))
        .map(|(g, _)| *g)
        .expect("every unary op is in a group")
}

/// The ops in table order (grouped), limited to `asked` when it is not empty.
pub fn ordered(asked: &[&'static str]) -> Vec<&'static str> {
    GROUPS
        .iter()
        .flat_map(|(_, ops)| ops.iter().copied())
        .filter(|op| asked.is_empty() || asked.contains(op))
        .collect()
}

/// Checks an op name for `--functions`.
pub fn parse_function(name: &str) -> Result<&'static str, Error> {
    UNARY_OPS
        .iter()
        .copied()
        .find(|&op| op == name)
        .ok_or_else(|| {
            Error::invalid(format!(
                "unknown function '{name}'; valid functions: {}",
                ordered(&[]).join(", ")
            ))
        })
}

/// Error statistics against one reference.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Errors {
    /// Results measured.
    pub measured: u64,
    /// Results with a nonzero reference (the relative errors' count).
    pub measured_rel: u64,
    /// Largest `|y - ref|`.
    pub max_abs: f64,
    /// Largest `|y - ref| / |ref|`.
    pub max_rel: f64,
    /// Sum of `|y - ref|`.
    pub sum_abs: f64,
    /// Sum of `|y - ref| / |ref|`.
    pub sum_rel: f64,
    /// Largest `|y - ref|` in units of the format's spacing at `ref`.
    pub max_ulp: f64,
}

impl Errors {
    /// Adds a result `y` against `reference`, whose spacing in the format is `spacing`.
    fn add(&mut self, y: f64, reference: f64, spacing: f64) {
        let abs = (y - reference).abs();
        self.measured += 1;
        self.max_abs = self.max_abs.max(abs);
        self.sum_abs += abs;
        self.max_ulp = self.max_ulp.max(abs / spacing);
        if reference != 0.0 {
            let rel = abs / reference.abs();
            self.measured_rel += 1;
            self.max_rel = self.max_rel.max(rel);
            self.sum_rel += rel;
        }
    }

    /// Mean absolute error (0 with nothing measured).
    pub fn mean_abs(&self) -> f64 {
        mean(self.sum_abs, self.measured)
    }

    /// Mean relative error (0 with nothing measured).
    pub fn mean_rel(&self) -> f64 {
        mean(self.sum_rel, self.measured_rel)
    }
}

/// `sum / n`, 0 for none.
fn mean(sum: f64, n: u64) -> f64 {
    if n == 0 { 0.0 } else { sum / n as f64 }
}

/// One format and function.
#[derive(Clone, Debug, PartialEq)]
pub struct Row {
    /// The format.
    pub format: &'static str,
    /// The op.
    pub function: &'static str,
    /// Inputs run: the finite values of the format in the function's domain.
    pub inputs: u64,
    /// Against the exact (f64) result.
    pub exact: Errors,
    /// Against the f32 result.
    pub f32: Errors,
    /// Exact results beyond the format's range, or ±infinity out.
    pub overflows: u64,
    /// Nonzero exact results that came out zero.
    pub underflows: u64,
    /// NaNs out of inputs whose exact result is in range.
    pub nans: u64,
}

/// Every finite value of `T` in the domain of `op`, in bit-pattern order.
pub fn inputs<T: Number>(op: &str) -> Vec<T> {
    let domain = reference::of(op)
        .expect("every unary op has a reference")
        .domain;
    (0..1u32 << T::FORMAT.total_bits())
        .map(T::from_bits_u32)
        .filter(|x| {
            let v = LowpFloat::to_f64(*x);
            v.is_finite() && domain(v)
        })
        .collect()
}

/// Measures `functions` (default: all) in every format of `formats` (default: all), in table
/// order, reporting the functions done to `ctl`'s progress.
pub fn run(
    formats: &[&'static Format],
    functions: &[&'static str],
    ctl: &Control<'_>,
) -> Result<Vec<Row>, Error> {
    let formats = crate::registry::formats_or_all(formats);
    let ops = ordered(functions);
    ctl.progress
        .start((formats.len() * ops.len()) as u64, "functions");
    let rows = rows(&formats, &ops, ctl);
    ctl.progress.finish();
    rows
}

/// Measures `ops` in every format of `formats`, in that order.
pub(crate) fn rows(
    formats: &[&'static Format],
    ops: &[&'static str],
    ctl: &Control<'_>,
) -> Result<Vec<Row>, Error> {
    let mut rows = Vec::new();
    for f in formats {
        rows.extend(
            lowp::with_format!(f, T => measure::<T>(ops, ctl), else => Err(Error::no_type(f)))?,
        );
    }
    Ok(rows)
}

/// Measures `ops` on every input of `T`.
pub fn measure<T: Number>(ops: &[&'static str], ctl: &Control<'_>) -> Result<Vec<Row>, Error> {
    ops.iter()
        .map(|&op| {
            ctl.check()?;
            ctl.progress.message(&format!("{} {op}", T::FORMAT.name));
            let row = measure_op::<T>(op)?;
            ctl.progress.advance(1);
            Ok(row)
        })
        .collect()
}

/// Measures one op on every input of `T`.
pub fn measure_op<T: Number>(op: &'static str) -> Result<Row, Error> {
    let exact = reference::of(op)
        .expect("every unary op has a reference")
        .exact;
    let xs = inputs::<T>(op);
    let tensor_error = |e: lowp_tensor::Error| Error::failure(format!("{op}: {e}"));
    let input = Tensor::from_slice(&xs, &[xs.len()]).map_err(tensor_error)?;
    let out = input
        .unary(op)
        .and_then(|t| t.to_vec::<T>())
        .map_err(tensor_error)?;
    let out32 = input
        .cast(DType::F32)
        .and_then(|t| t.unary(op))
        .and_then(|t| t.to_vec::<f32>())
        .map_err(tensor_error)?;
    let format = T::FORMAT;
    let mut row = Row {
        format: format.name,
        function: op,
        inputs: xs.len() as u64,
        exact: Errors::default(),
        f32: Errors::default(),
        overflows: 0,
        underflows: 0,
        nans: 0,
    };
    for ((&x, &y), &y32) in xs.iter().zip(&out).zip(&out32) {
        let want = exact(LowpFloat::to_f64(x));
        let y = LowpFloat::to_f64(y);
        // An exact result beyond f64 (exp of a large bf16) is beyond every format too.
        let beyond = want.is_infinite() || overflows::<T>(want);
        if beyond || y.is_infinite() {
            row.overflows += 1;
            continue;
        }
        if y.is_nan() {
            row.nans += 1;
            continue;
        }
        if y == 0.0 && want != 0.0 {
            row.underflows += 1;
        }
        row.exact.add(y, want, ulp(&format, want));
        let y32 = y32 as f64;
        if y32.is_finite() {
            row.f32.add(y, y32, ulp(&format, y32));
        }
    }
    Ok(row)
}

/// Which statistics a table shows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum View {
    /// Everything, for CSV and JSON: one record per format and function.
    All,
    /// Against the exact result, with the counts (the first human table).
    Exact,
    /// Against the f32 result, the hand-measured FP16 table's method (the second human table).
    F32,
}

/// The table of `rows` (by format, then by group of functions); the human outputs name each
/// group once.
pub fn table(rows: &[Row], view: View) -> Table {
    use View::*;
    let stats = |keys: [&'static str; 5]| {
        let headers = ["max abs", "max rel", "mean abs", "mean rel", "max ulp"];
        keys.into_iter()
            .zip(headers)
            .map(|(k, h)| Column::right(k, h))
    };
    let mut columns = vec![
        Column::left("format", "format"),
        Column::left("group", "group"),
        Column::left("function", "function"),
        Column::right("inputs", "inputs"),
    ];
    if view != F32 {
        columns.extend(stats([
            "max_abs", "max_rel", "mean_abs", "mean_rel", "max_ulp",
        ]));
    }
    if view != Exact {
        columns.extend(stats([
            "f32_max_abs",
            "f32_max_rel",
            "f32_mean_abs",
            "f32_mean_rel",
            "f32_max_ulp",
        ]));
    }
    if view != F32 {
        columns.push(Column::right("overflows", "overflow"));
        columns.push(Column::right("underflows", "to 0"));
        columns.push(Column::right("nans", "NaN"));
    }
    if view == All {
        columns.push(Column::right("measured", "measured"));
    }
    let errors = |e: &Errors| {
        vec![
            error_cell(e.max_abs, e.measured),
            error_cell(e.max_rel, e.measured_rel),
            error_cell(e.mean_abs(), e.measured),
            error_cell(e.mean_rel(), e.measured_rel),
            error_cell(e.max_ulp, e.measured),
        ]
    };
    let mut out = Vec::with_capacity(rows.len());
    let mut last: Option<(&str, &str)> = None;
    for r in rows {
        let group = group_of(r.function);
        // People read a group's name once; programs get it on every record.
        let label = if view != All && last == Some((r.format, group)) {
            String::new()
        } else {
            group.to_string()
        };
        last = Some((r.format, group));
        let mut cells = vec![
            Cell::Text(r.format.to_string()),
            Cell::Text(label),
            Cell::Text(r.function.to_string()),
            Cell::Int(r.inputs as i64),
        ];
        if view != F32 {
            cells.extend(errors(&r.exact));
        }
        if view != Exact {
            cells.extend(errors(&r.f32));
        }
        if view != F32 {
            cells.push(Cell::Int(r.overflows as i64));
            cells.push(Cell::Int(r.underflows as i64));
            cells.push(Cell::Int(r.nans as i64));
        }
        if view == All {
            cells.push(Cell::Int(r.exact.measured as i64));
        }
        out.push(cells);
    }
    Table { columns, rows: out }
}

/// The human output: the table against the exact result, then the one against f32, each
/// under a line saying what it compares (Markdown tables when `markdown`).
pub fn human(rows: &[Row], markdown: bool) -> String {
    let render = |t: Table| {
        if markdown {
            t.to_markdown()
        } else {
            t.to_text()
        }
    };
    format!(
        "Against the exact result (f64 on the same input). Overflows and NaNs are counted apart \
         and left out of the errors; a nonzero result flushed to 0 stays in them (relative \
         error 1) and is also counted in \"to 0\":\n\n{}\nAgainst the same op run in f32 (the \
         FP16 vs FP32 comparison, which docs/precision-analysis.md sets beside an earlier \
         hand-measured table):\n\n{}",
        render(table(rows, View::Exact)),
        render(table(rows, View::F32))
    )
}

/// An error figure: exact when it is a dyadic value printed in full (a maximum absolute error
/// is a difference of two values), `≈` when it was divided; `-` when nothing was measured.
pub fn error_cell(x: f64, measured: u64) -> Cell {
    if measured == 0 {
        Cell::Empty
    } else if x == 0.0 || crate::number::Decimal::exact(x).is_some_and(|d| d.digits.len() <= 8) {
        Cell::Number(x)
    } else {
        Cell::Approx(x)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use lowp::{f4e2m1fn, f8e4m3fn, f16};

    #[test]
    fn groups_hold_every_op_once() {
        let mut all = ordered(&[]);
        assert_eq!(all.len(), UNARY_OPS.len());
        all.sort_unstable();
        let mut ops = UNARY_OPS.to_vec();
        ops.sort_unstable();
        assert_eq!(all, ops);
        assert_eq!(ordered(&["exp", "sin"]), ["sin", "exp"]);
        assert!(
            parse_function("sine")
                .unwrap_err()
                .to_string()
                .contains("tanh_shrink")
        );
    }

    #[test]
    fn f16_exp_overflows_exactly_above_ln_65504() {
        let row = measure_op::<f16>("exp").unwrap();
        assert_eq!(row.inputs, 63488); // every finite f16: 65536 minus 2 infinities, 2046 NaNs
        // Counted independently: the f16 values above ln(65504), whose exp is beyond
        // 65504 + 16 (the next f16 above ln(65504) is already past ln(65520)).
        let above = (0..=0xffffu32)
            .map(|b| f16::from_bits_u32(b).to_f64())
            .filter(|x| x.is_finite() && *x > 65504f64.ln())
            .count() as u64;
        let first = f16::from_f64(11.09375).to_bits_u32();
        assert_eq!(above, (0x7c00 - first) as u64); // 11.09375 up to 65504
        assert_eq!(row.overflows, above);
        assert_eq!(row.nans, 0);
        // exp of the f16 values below ln(2^-25) underflows to 0.
        assert!(row.underflows > 0 && row.exact.max_rel == 1.0);
        // Correctly rounded: within half an ulp.
        assert!(row.exact.max_ulp <= 0.5, "{}", row.exact.max_ulp);
        // At most half an ulp of the top binade.
        assert!(row.exact.max_abs > 15.0 && row.exact.max_abs <= 16.0);
    }

    /// The table's claim for every op in every format: half an ulp at most. (Against the f64
    /// reference, whose own error of a few f64 ulps shows only at near-ties, far below the
    /// 2^-30 allowed here; exact ties measure exactly 0.5.) E8M0 is the exception by
    /// definition: it has no zero, and a positive result below its smallest value 2^-127 is
    /// 2^-127 (`square(2^-127)` is 2^-254), a whole ulp from the exact result.
    #[test]
    fn every_op_is_within_half_an_ulp_in_every_format() {
        let ctl = crate::progress::Control::none();
        let formats: Vec<&'static Format> = Format::ALL.iter().collect();
        let rows = rows(&formats, &ordered(&[]), &ctl).unwrap();
        assert_eq!(rows.len(), Format::ALL.len() * UNARY_OPS.len());
        for row in rows.iter().filter(|r| r.format != "f8e8m0fnu") {
            assert!(
                row.exact.max_ulp <= 0.5 + 1.0 / (1u64 << 30) as f64,
                "{} {}: {} ulp",
                row.format,
                row.function,
                row.exact.max_ulp
            );
        }
    }

    #[test]
    fn exact_ops_have_no_error() {
        for op in ["floor", "ceil", "round", "relu", "abs"] {
            let row = measure_op::<f16>(op).unwrap();
            assert_eq!(row.exact.max_abs, 0.0, "{op}");
            assert_eq!(row.f32.max_abs, 0.0, "{op}");
            assert_eq!(row.inputs, 63488, "{op}");
        }
    }

    #[test]
    fn domains_and_correct_rounding() {
        let row = measure_op::<f16>("sqrt").unwrap();
        // 0x0000..=0x7bff and -0.
        assert_eq!(row.inputs, 0x7c00 + 1);
        assert!(row.exact.max_ulp <= 0.5);
        let row = measure_op::<f16>("log").unwrap();
        assert_eq!(row.inputs, 0x7c00 - 1);
        let row = measure_op::<f8e4m3fn>("reciprocal").unwrap();
        assert_eq!(row.inputs, 256 - 2 - 2); // no NaNs (2), no zeros (2)
        assert!(row.exact.max_ulp <= 0.5);
    }

    #[test]
    fn fp4_square_saturates_and_counts_overflow() {
        // FP4 E2M1: ±{0, 0.5, 1, 1.5, 2, 3, 4, 6}; x^2 beyond 7 (the tie above 6) overflows.
        let row = measure_op::<f4e2m1fn>("square").unwrap();
        assert_eq!(row.inputs, 16);
        assert_eq!(row.overflows, 6); // ±3, ±4, ±6
        assert_eq!(row.nans, 0);
    }

    #[test]
    fn table_groups_rows() {
        let rows = measure::<f8e4m3fn>(&ordered(&["sin", "cos", "exp"]), &Control::none()).unwrap();
        let text = table(&rows, View::Exact).to_text();
        let lines: Vec<&str> = text.lines().collect();
        assert!(
            lines[2].contains("trigonometric") && lines[2].contains("sin"),
            "{text}"
        );
        assert!(
            !lines[3].contains("trigonometric") && lines[3].contains("cos"),
            "{text}"
        );
        assert!(lines[4].contains("large outputs"), "{text}");
        let json = table(&rows, View::All).to_json_records();
        for key in [
            "format",
            "function",
            "inputs",
            "max_abs",
            "max_rel",
            "mean_abs",
            "mean_rel",
            "max_ulp",
            "overflows",
            "nans",
        ] {
            assert!(json[0].get(key).is_some(), "{key}");
        }
        assert_eq!(json[2]["group"], "large outputs");
        assert_eq!(json[1]["group"], "trigonometric");
        assert!(json[0].get("f32_max_rel").is_some());
        let both = human(&rows, false);
        assert!(both.contains("run in f32") && both.matches("function").count() == 2);
    }
}
