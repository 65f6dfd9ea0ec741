//! `lowp convert`: the command line of `lowp_io::convert`, its progress bar and its table.

use crate::error::CliError;
use crate::interrupt;
use crate::output::{self, Cell, Column, Table};
use clap::{Args, ValueEnum};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use lowp_io::report::significant;
use lowp_io::{FloatType, Options, Report};
use serde_json::{Value, json};
use std::io::IsTerminal;
use std::path::PathBuf;
use std::time::Instant;

/// Arguments of `lowp convert`.
#[derive(Args, Debug)]
#[command(after_help = AFTER_HELP)]
pub struct ConvertArgs {
    /// The checkpoint to read: a .safetensors, .npy or .npz file (recognised by its contents).
    #[arg(value_name = "IN")]
    input: PathBuf,

    /// The file to write, of the same kind as IN (not with --dry-run). Written to a temporary
    /// file beside it and renamed when complete; an existing OUT is replaced.
    #[arg(value_name = "OUT")]
    output: Option<PathBuf>,

    /// The float type to store: f32, f64, f16, bf16, f8e4m3fn or f8e5m2 (also bfloat16,
    /// float8_e4m3fn, F8_E4M3, ...). NumPy files take f16, f32 and f64 only.
    #[arg(long, value_name = "TYPE", value_parser = parse_type)]
    to: FloatType,

    /// Convert only the tensors whose names match PATTERN (`*` any characters, `?` one);
    /// comma separated or repeated. The others are copied unchanged.
    #[arg(long, value_name = "PATTERN", value_delimiter = ',')]
    only: Vec<String>,

    /// Store the tensors whose names match PATTERN as f32 instead of --to (norms, biases);
    /// comma separated or repeated.
    #[arg(long, value_name = "PATTERN", value_delimiter = ',')]
    keep_f32: Vec<String>,

    /// Saturate values beyond the target's range to ±MAX instead of ±inf or NaN.
    #[arg(long)]
    saturate: bool,

    /// How FP8 tensors are scaled: `none`, or `per-tensor`: each tensor multiplied by the
    /// largest power of two that keeps its largest magnitude within the format, and the
    /// inverse stored as an F32 scalar tensor NAME.scale (value = NAME * NAME.scale).
    #[arg(long, value_name = "MODE", value_enum, default_value_t = ScaleMode::None)]
    fp8_scale: ScaleMode,

    /// Print the report without writing anything: will the checkpoint survive this type?
    #[arg(long)]
    dry_run: bool,

    /// Also write the report to FILE as JSON.
    #[arg(long, value_name = "FILE")]
    report: Option<PathBuf>,
}

/// The end of `lowp convert --help`: the verdicts and where scales go.
const AFTER_HELP: &str = "\
Verdicts (per tensor):
  fail   values became inf or NaN: a finite value overflowed (without --saturate), or a
         non-NaN value was stored as NaN
  warn   values saturated (--saturate); or more than 0.1% of the elements flushed to zero;
         or more than 1% became subnormal; or the mean relative error exceeds the target's
         unit roundoff (2^-(mantissa bits + 1)): much of the tensor lies outside its range
  ok     only rounding within the range
  exact  every finite value stored exactly
  kept   not converted: not a float, not matched by --only, or already the target type

Tensors that are not floating point pass through untouched, as do names, shapes and the
safetensors __metadata__. Output tensors are ordered as the safetensors crate writes them
(widest type first, then by name).

With --fp8-scale per-tensor, a tensor W stored in FP8 was multiplied by a power of two s before
rounding, and W.scale (F32, shape []) holds 1/s: the values are restored as W * W.scale.
Exit codes: 0 done, 1 unreadable, malformed or unwritable file, 2 usage, 130 interrupted.";

/// The `--fp8-scale` modes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum ScaleMode {
    /// Values are rounded as they are.
    None,
    /// One power-of-two scale per tensor, stored as `NAME.scale`.
    PerTensor,
}

/// Runs `lowp convert` and returns what to print.
pub fn run(args: &ConvertArgs) -> Result<String, CliError> {
    match (&args.output, args.dry_run) {
        (None, false) => {
            return Err(CliError::usage(
                "give OUT, the file to write, or --dry-run to only see the report",
            ));
        }
        (Some(_), true) => {
            return Err(CliError::usage("--dry-run writes nothing: give IN alone"));
        }
        _ => {}
    }
    if args.fp8_scale == ScaleMode::PerTensor && !args.to.is_fp8() {
        return Err(CliError::usage(format!(
            "--fp8-scale applies to f8e4m3fn and f8e5m2, not {}",
            args.to.name()
        )));
    }
    if let Some(file) = &args.report {
        output::check_parent_dir(file)?;
    }
    let opts = Options {
        input: args.input.clone(),
        output: args.output.clone(),
        to: args.to,
        only: args.only.clone(),
        keep_f32: args.keep_f32.clone(),
        saturate: args.saturate,
        per_tensor_scale: args.fp8_scale == ScaleMode::PerTensor,
    };
    let start = Instant::now();
    let report = convert(&opts, std::io::stderr().is_terminal())?;
    let seconds = start.elapsed().as_secs_f64();
    if let Some(file) = &args.report {
        let command = json!({
            "input": opts.input.display().to_string(),
            "output": opts.output.as_ref().map(|p| p.display().to_string()),
            "dry_run": args.dry_run,
            "to": opts.to.name(),
            "only": opts.only,
            "keep_f32": opts.keep_f32,
            "saturate": opts.saturate,
            "fp8_scale": if opts.per_tensor_scale { "per-tensor" } else { "none" },
        });
        let value: Value = report.to_json(command, seconds);
        output::write_atomically(file, output::json_text(&value).as_bytes())?;
    }
    let out_name = opts.output.as_ref().map(|p| p.display().to_string());
    Ok(table(&report).to_text() + "\n" + &report.summary(out_name.as_deref(), seconds))
}

/// A progress bar by bytes on stderr, drawn only when stderr is a terminal.
pub struct Bar(ProgressBar);

impl Bar {
    /// A bar, drawn when `shown`; its length is set when the conversion starts.
    pub fn new(shown: bool) -> Bar {
        if !shown {
            return Bar(ProgressBar::hidden());
        }
        let bar = ProgressBar::with_draw_target(Some(0), ProgressDrawTarget::stderr());
        if let Ok(style) = ProgressStyle::with_template(
            "{bar:40} {bytes}/{total_bytes} {bytes_per_sec} eta {eta} {msg}",
        ) {
            bar.set_style(style);
        }
        Bar(bar)
    }
}

impl lowp_io::Progress for Bar {
    fn start(&self, total_bytes: u64) {
        self.0.set_length(total_bytes);
    }
    fn advance(&self, bytes: u64) {
        self.0.inc(bytes);
    }
    fn tensor(&self, name: &str) {
        self.0.set_message(name.to_string());
    }
    fn finish(&self) {
        self.0.finish_and_clear();
    }
}

/// A library error as the command reports it: a request that cannot be carried out is a
/// usage error (exit 2), a file that cannot be read, written or parsed exit 1, Ctrl-C 130.
pub fn cli_error(e: lowp_io::Error) -> CliError {
    match e {
        lowp_io::Error::Invalid(m) => CliError::usage(m),
        lowp_io::Error::File(m) => CliError::failure(m),
        lowp_io::Error::Cancelled => CliError {
            message: e.to_string(),
            code: crate::error::INTERRUPTED,
        },
    }
}

/// Runs a conversion with Ctrl-C watched, drawing a progress bar when `shown`.
pub fn convert(opts: &Options, shown: bool) -> Result<Report, CliError> {
    interrupt::watch_interrupts();
    let bar = Bar::new(shown);
    let result = lowp_io::convert_with(opts, &bar, interrupt::flag());
    lowp_io::Progress::finish(&bar);
    result.map_err(cli_error)
}

/// Parses `--to` (see [`FloatType::parse`]).
pub fn parse_type(text: &str) -> Result<FloatType, lowp_io::Error> {
    FloatType::parse(text)
}

/// The report as the table `lowp convert` prints; the JSON report has every figure
/// ([`Report::records`]).
fn table(report: &Report) -> Table {
    let scaled = report.tensors.iter().any(|t| t.scale.is_some());
    let mut columns = vec![
        Column::left("name", "tensor"),
        Column::left("types", "type"),
        Column::right("elements", "elements"),
        Column::right("overflowed", "overflow"),
        Column::right("flushed_to_zero", "to zero"),
        Column::right("subnormal", "subnormal"),
        Column::right("became_nan", "to NaN"),
        Column::right("max_rel", "max rel err"),
        Column::right("mean_rel", "mean rel err"),
    ];
    if scaled {
        columns.push(Column::right("scale_exp", "scale"));
    }
    columns.push(Column::left("verdict", "verdict"));
    columns.push(Column::left("why", "why"));
    let count = |n: u64| Cell::Int(i64::try_from(n).unwrap_or(i64::MAX));
    let percent = |x: f64| Cell::Text(format!("{}%", significant(100.0 * x)));
    let rows = report
        .tensors
        .iter()
        .map(|t| {
            let (verdict, why) = t.verdict(report.saturate);
            let mut row = vec![
                Cell::Text(t.name.clone()),
                Cell::Text(if t.stats.is_some() {
                    format!("{}→{}", t.from, t.to)
                } else {
                    t.from.clone()
                }),
                count(t.shape.iter().product()),
            ];
            match &t.stats {
                Some(s) => row.extend([
                    count(s.overflowed),
                    count(s.flushed_to_zero),
                    count(s.subnormal),
                    count(s.became_nan),
                    percent(s.max_rel_error),
                    percent(s.mean_rel_error()),
                ]),
                None => row.extend(std::iter::repeat_n(Cell::Empty, 6)),
            }
            if scaled {
                // Scales are powers of two: 2^-120 reads better than ≈7.52316e-37.
                row.push(t.scale.map_or(Cell::Empty, |s| {
                    Cell::Text(format!("2^{}", s.log2().round()))
                }));
            }
            row.push(Cell::Text(verdict.to_string()));
            row.push(Cell::Text(why));
            row
        })
        .collect();
    Table { columns, rows }
}
