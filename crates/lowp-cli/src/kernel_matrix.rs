//! `lowp kernels`: the tensor layer's kernel registry as an op x dtype matrix.

use crate::error::CliError;
use crate::output::{self, Cell, Column, Table};
use clap::{Args, ValueEnum};
use lowp_tensor::{Backend, DType, registry};
use serde_json::{Map, Value};

/// Arguments of `lowp kernels`.
#[derive(Args)]
pub struct KernelsArgs {
    /// Output style: an aligned matrix (x: a kernel is registered) fitted to the terminal's
    /// width (`COLUMNS`, else 80 when stdout is not a terminal), the dtype columns beyond it in
    /// further blocks below; a Markdown table; or a JSON object from op name to the list of
    /// dtype names it has kernels for.
    #[arg(long, value_enum, value_name = "STYLE", default_value_t = KernelsStyle::Table)]
    format: KernelsStyle,
}

/// Output styles of `lowp kernels`.
#[derive(Clone, Copy, ValueEnum)]
enum KernelsStyle {
    /// An aligned matrix, wrapped to the terminal's width.
    Table,
    /// A GitHub-flavoured Markdown table.
    Markdown,
    /// A JSON object: op name to dtype names.
    Json,
}

/// The matrix: one row per op (sorted by name), one column per dtype.
fn matrix() -> Table {
    let reg = registry();
    let mut columns = vec![Column::left("op", "op")];
    columns.extend(DType::ALL.iter().map(|d| Column::left(d.name(), d.name())));
    let rows = reg
        .ops()
        .into_iter()
        .map(|op| {
            let mut row = vec![Cell::Text(op.to_string())];
            row.extend(DType::ALL.iter().map(|&d| {
                let has = reg.contains(op, Backend::Cpu, d);
                Cell::Text(if has { "x" } else { "." }.to_string())
            }));
            row
        })
        .collect();
    Table { columns, rows }
}

/// The matrix as aligned text no wider than `width` columns: as many dtype columns as fit
/// beside the op column, the rest in further blocks below, each repeating the op column.
fn matrix_text(width: usize) -> String {
    let table = matrix();
    let (op, dtypes) = table.columns.split_at(1);
    let block = |range: std::ops::Range<usize>| Table {
        columns: op.iter().chain(&dtypes[range.clone()]).cloned().collect(),
        rows: table
            .rows
            .iter()
            .map(|row| {
                std::iter::once(&row[0])
                    .chain(&row[1 + range.start..1 + range.end])
                    .cloned()
                    .collect()
            })
            .collect(),
    };
    let widest = |text: &str| text.lines().map(|l| l.chars().count()).max().unwrap_or(0);
    let mut blocks = Vec::new();
    let mut start = 0;
    while start < dtypes.len() {
        // A block always takes one dtype, so a very narrow terminal still gets every column.
        let mut end = start + 1;
        let mut text = block(start..end).to_text();
        while end < dtypes.len() {
            let wider = block(start..end + 1).to_text();
            if widest(&wider) > width {
                break;
            }
            (text, end) = (wider, end + 1);
        }
        blocks.push(text);
        start = end;
    }
    blocks.join("\n")
}

/// `text` broken between words into lines of at most `width` columns (a longer word alone).
fn wrap(text: &str, width: usize) -> String {
    let mut out = String::new();
    let mut line = String::new();
    for word in text.split_whitespace() {
        let needed = line.chars().count() + 1 + word.chars().count();
        if !line.is_empty() && needed > width {
            out.push_str(&line);
            out.push('\n');
            line.clear();
        }
        if !line.is_empty() {
            line.push(' ');
        }
        line.push_str(word);
    }
    if !line.is_empty() {
        out.push_str(&line);
        out.push('\n');
    }
    out
}

/// The width to fit the table into: `COLUMNS` when set to a positive number, else the
/// terminal's width when stdout is one, else 80.
fn output_width() -> usize {
    if let Some(columns) = std::env::var("COLUMNS")
        .ok()
        .and_then(|c| c.trim().parse::<usize>().ok())
        .filter(|&c| c > 0)
    {
        return columns;
    }
    console::Term::stdout()
        .size_checked()
        .map_or(80, |(_, columns)| usize::from(columns))
}

/// Runs `lowp kernels`.
pub fn run(args: &KernelsArgs) -> Result<String, CliError> {
    let reg = registry();
    Ok(match args.format {
        KernelsStyle::Table => {
            let width = output_width();
            let note = format!(
                "{} kernels for {} ops on the cpu backend. Element-wise math computes in f32 \
                 for the 16-bit and narrower formats (f64 for f32, f64 and E8M0) and rounds \
                 once; reductions, norms and matrix products accumulate in f32 (f64 for f64). \
                 Inner loops here: {} (every path gives the same bits; on avx512bf16, bf16 \
                 matrix products take vdpbf16ps on the blocks where its flushing of subnormals \
                 cannot show, and fused multiply-adds elsewhere).",
                reg.len(),
                reg.ops().len(),
                lowp_tensor::SimdPath::best().name()
            );
            format!("{}\n{}", matrix_text(width), wrap(&note, width))
        }
        KernelsStyle::Markdown => matrix().to_markdown(),
        KernelsStyle::Json => {
            let object: Map<String, Value> = reg
                .ops()
                .into_iter()
                .map(|op| {
                    let dtypes = reg
                        .dtypes(op, Backend::Cpu)
                        .into_iter()
                        .map(|d| Value::String(d.name().to_string()))
                        .collect();
                    (op.to_string(), Value::Array(dtypes))
                })
                .collect();
            output::json_text(&Value::Object(object))
        }
    })
}
