//! `lowp kernels`: the tensor layer's kernel registry as an op x dtype matrix.

use crate::error::CliError;
use crate::output::{self, Cell, Column, Table};
use clap::{Args, ValueEnum};
use lowp_tensor::{Backend, DType, registry};
use serde_json::{Map, Value};

/// Arguments of `lowp kernels`.
#[derive(Args)]
pub struct KernelsArgs {
    /// Output style: an aligned matrix (x: a kernel is registered), a Markdown table, or a
    /// JSON object from op name to the list of dtype names it has kernels for.
    #[arg(long, value_enum, value_name = "STYLE", default_value_t = KernelsStyle::Table)]
    format: KernelsStyle,
}

/// Output styles of `lowp kernels`.
#[derive(Clone, Copy, ValueEnum)]
enum KernelsStyle {
    /// An aligned matrix.
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

/// Runs `lowp kernels`.
pub fn run(args: &KernelsArgs) -> Result<String, CliError> {
    let reg = registry();
    Ok(match args.format {
        KernelsStyle::Table => format!(
            "{}\n{} kernels for {} ops on the cpu backend. Element-wise math computes in f32 \
             for the 16-bit and narrower formats (f64 for f32, f64 and E8M0) and rounds once; \
             reductions, norms and matrix products accumulate in f32 (f64 for f64).\n",
            matrix().to_text(),
            reg.len(),
            reg.ops().len()
        ),
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
