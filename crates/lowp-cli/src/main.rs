//! `lowp`: what a low-precision number format does to your numbers.
//!
//! * `lowp formats` prints the properties of every format of the lowp crate;
//! * `lowp inspect VALUE` shows what rounding VALUE into each format gives;
//! * `lowp convert IN OUT --to TYPE` stores a checkpoint in another float type and reports
//!   what that cost, per tensor;
//! * `lowp kernels` prints the tensor layer's kernel registry as an op x dtype matrix;
//! * `lowp train` trains a small network on handwritten digits in f32, f16 (with and without
//!   loss scaling), bf16 or FP8, and `lowp train --compare` compares them;
//! * `lowp bench convert` measures bulk conversion throughput beside memcpy and `half`,
//!   `lowp bench convert-file` a whole-file conversion beside `cp`, and `lowp bench sum` and
//!   `lowp bench matmul` the tensor layer;
//! * `lowp error-table`, `lowp conversion-error` and `lowp accumulate` measure what the math
//!   functions, rounding from f32 and running sums cost in each format (the error tables
//!   docs/precision-analysis.md discusses), `lowp plot` draws the formats, and `lowp report`
//!   puts it all on one page.
//!
//! This file holds the command line (clap) and the exit codes; each command lives in its own
//! module, and [`output`] renders the tables they build.
#![forbid(unsafe_code)]

mod bench;
mod convert;
mod error;
mod interrupt;
mod kernel_matrix;
mod output;
mod printable;
mod progress;
mod train;

// The reports and analyses live in the library crate lowp-analysis, which the Python module
// shares; this binary adds the command line, progress bars, Ctrl-C and exit codes.
use lowp_analysis::{
    accumulate, conversion, error_table, formats, inspect, plot, registry, report,
};

use clap::{Args, Parser, Subcommand, ValueEnum};
use error::CliError;
use lowp::Format;
use std::io::Write;
use std::process::ExitCode;

/// The command line.
#[derive(Parser)]
#[command(
    name = "lowp",
    version,
    about = "What a low-precision number format does to your numbers",
    long_about = "What a low-precision number format does to your numbers: the properties of \
                  f16, bf16 and the FP8, FP6 and FP4 formats, and what rounding a value into \
                  each of them gives.\n\n\
                  Numbers are printed exactly when that takes at most 17 significant digits \
                  (65504, 0.0009765625, 5.9604644775390625e-8); longer ones are rounded to 6 \
                  digits and marked with ≈ (≈3.38953e38). Scientific notation is used below \
                  1e-4 and from 1e12 on. CSV and JSON give every number in full."
)]
struct Cli {
    /// The command to run.
    #[command(subcommand)]
    command: Command,
}

/// The commands.
#[derive(Subcommand)]
enum Command {
    /// Print one table of every format: widths, bias, limits and special values.
    Formats(FormatsArgs),
    /// Show what rounding a value into each format gives.
    ///
    /// Each row shows the result exactly, how the type prints it (the shortest decimal that
    /// reads back), its bits split into sign|exponent|mantissa, its two neighbours, the
    /// absolute and relative error against the input, and what happened: exact, rounded,
    /// subnormal, underflow to 0, or overflow to inf, to NaN or saturated to ±MAX, as the
    /// format's policy has it.
    Inspect(InspectArgs),
    /// Store a checkpoint (safetensors, .npy, .npz) in another float type, and report per
    /// tensor what that cost.
    ///
    /// Each tensor's row counts the values that overflowed, were flushed to zero, became
    /// subnormal or NaN, gives the largest and mean relative errors, and a verdict. With
    /// --dry-run nothing is written: the report says whether the checkpoint survives the type.
    Convert(convert::ConvertArgs),
    /// Print the tensor layer's kernel registry: which ops have a kernel for which dtype.
    Kernels(kernel_matrix::KernelsArgs),
    /// Measure throughput: `lowp bench convert` times bulk conversion of every format, `lowp
    /// bench convert-file` a whole safetensors file beside cp, `lowp bench sum` and `lowp
    /// bench matmul` the tensor layer's reduction and matrix product.
    Bench(bench::BenchArgs),
    /// The error of every element-wise math function in each format, on every input: against
    /// the exact result and against the same function run in f32.
    ///
    /// Each op runs as the tensor layer runs it (widened to f32, evaluated once, rounded once)
    /// on every finite value of the format inside the function's domain, and is compared with
    /// the exact result (f64 on the same input) and with the op run in f32. Overflows and NaNs
    /// are counted apart and left out of the errors; a nonzero result flushed to zero stays in
    /// them (relative error 1) and is also counted in the "to 0" column.
    /// docs/precision-analysis.md sets the f16 figures beside an earlier hand-measured table
    /// and explains each difference.
    ErrorTable(ErrorTableArgs),
    /// The error of rounding every f32 into each format, over the format's normal range and
    /// its range including subnormals, beside the theoretical bounds
    /// (docs/precision-analysis.md compares the f16 figures with hand-measured ones). Walks
    /// every f32 bit pattern in range on all cores: about a minute for all formats on two
    /// cores.
    ConversionError(ConversionErrorArgs),
    /// Sum N random values with the sum kept in the format, in f32, by Kahan's method in the
    /// format and pairwise: where the low-precision running sum stalls (its "truncation
    /// ceiling": in f16 a sum stops growing once it is about 2^11 times the values added),
    /// and the final errors.
    Accumulate(AccumulateArgs),
    /// Draw PNG pictures of the formats: bit layouts, the representable values on a log scale,
    /// and the relative rounding error against magnitude.
    Plot(PlotArgs),
    /// Run every analysis and write one Markdown page with the tables and pictures: which
    /// format should I use, and what does it cost me?
    Report(ReportArgs),
    /// Train a small perceptron on scikit-learn's handwritten digits in mixed precision.
    ///
    /// f16 and bf16 run the linear layers in the low-precision type with f32 master weights;
    /// f16 adds dynamic loss scaling (f16-noscale does not); fp8 runs the matrix products on
    /// E4M3 activations and weights and E5M2 gradients with delayed scaling. The loss is
    /// multiplied by 2^-20 (the learning rate divided by it), standing for a model with tiny
    /// gradients, so f16 without loss scaling loses its updates to underflow. Prints a line per
    /// epoch; --compare runs every precision and prints one table and a PNG of the losses.
    Train(train::TrainArgs),
}

/// Arguments of `lowp error-table`.
#[derive(Args)]
#[command(after_help = format!(
    "Formats: {}\nFunctions: {}",
    registry::names(),
    error_table::ordered(&[]).join(", ")
))]
struct ErrorTableArgs {
    /// Formats to measure, comma separated or repeated (default: every format).
    #[arg(long, value_name = "FORMAT", value_delimiter = ',', value_parser = parse_format)]
    formats: Vec<&'static Format>,

    /// Functions to measure, comma separated or repeated (default: every function).
    #[arg(long, value_name = "FUNCTION", value_delimiter = ',', value_parser = parse_function)]
    functions: Vec<&'static str>,

    /// Output style: an aligned table grouped by kind of function (trigonometric, logarithms,
    /// ...), Markdown, CSV, or JSON (one record per format and function).
    #[arg(long, value_enum, value_name = "STYLE", default_value_t = TableStyle::Table)]
    format: TableStyle,
}

/// Arguments of `lowp conversion-error`.
#[derive(Args)]
#[command(after_help = format!("Formats: {}", registry::names()))]
struct ConversionErrorArgs {
    /// Formats to measure, comma separated or repeated (default: every format).
    #[arg(long, value_name = "FORMAT", value_delimiter = ',', value_parser = parse_format)]
    formats: Vec<&'static Format>,

    /// Output style: an aligned table, Markdown, CSV, or JSON (one record per format and
    /// range).
    #[arg(long, value_enum, value_name = "STYLE", default_value_t = TableStyle::Table)]
    format: TableStyle,
}

/// Arguments of `lowp accumulate`.
#[derive(Args)]
#[command(after_help = format!("Formats: {}", registry::names()))]
struct AccumulateArgs {
    /// The number format to sum in (any but the E8M0 scale type, which has no zero).
    // `--format`, its old name, stays as a hidden alias: elsewhere `--format` is the output style.
    #[arg(long, alias = "format", value_name = "FORMAT", value_parser = parse_format,
          default_value = "f16")]
    dtype: &'static Format,

    /// How many values to sum, 1 to 100,000,000: digits (`1000000`, `1_000_000`) or a whole
    /// number in exponent notation (`1e6`).
    #[arg(long, value_name = "N", default_value_t = 100_000, value_parser = parse_count)]
    n: u64,

    /// The distribution the values are drawn from (in f64, then rounded into the format).
    #[arg(long, value_enum, value_name = "NAME", default_value_t = DistributionArg::Uniform)]
    distribution: DistributionArg,

    /// Seed of the random generator (the same seed gives the same values on every machine).
    #[arg(long, value_name = "SEED", default_value_t = 0)]
    seed: u64,

    /// Also draw the running sums into this PNG file.
    #[arg(long, value_name = "FILE")]
    plot: Option<std::path::PathBuf>,

    /// Print a JSON object instead of the text and table.
    #[arg(long)]
    json: bool,
}

/// The distributions of `lowp accumulate`.
#[derive(Clone, Copy, ValueEnum)]
enum DistributionArg {
    /// Uniform on [0, 1).
    Uniform,
    /// Normal, mean 0 and standard deviation 1.
    Normal,
}

/// Arguments of `lowp plot`.
#[derive(Args)]
struct PlotArgs {
    /// The directory to write layout.png, values.png and rounding-error.png into (created if
    /// missing).
    #[arg(long, value_name = "DIR")]
    out: std::path::PathBuf,
}

/// Arguments of `lowp report`.
#[derive(Args)]
#[command(after_help = format!("Formats: {}", registry::names()))]
struct ReportArgs {
    /// The directory to write report.md, its pictures and the full tables into (created if
    /// missing).
    #[arg(long, value_name = "DIR")]
    out: std::path::PathBuf,

    /// Formats to cover, comma separated or repeated (default: every format).
    #[arg(long, value_name = "FORMAT", value_delimiter = ',', value_parser = parse_format)]
    formats: Vec<&'static Format>,
}

/// Arguments of `lowp formats`.
#[derive(Args)]
struct FormatsArgs {
    /// Output style: an aligned table for people, a Markdown table, CSV, or a JSON array of
    /// objects with stable field names.
    #[arg(long, value_enum, value_name = "STYLE", default_value_t = TableStyle::Table)]
    format: TableStyle,
}

/// Output styles of `lowp formats`.
#[derive(Clone, Copy, ValueEnum)]
enum TableStyle {
    /// Aligned columns.
    Table,
    /// A GitHub-flavoured Markdown table.
    Markdown,
    /// Comma-separated values, numbers in full.
    Csv,
    /// A JSON array of objects.
    Json,
}

/// Arguments of `lowp inspect`.
#[derive(Args)]
#[command(after_help = format!("Formats: {}", registry::names()))]
struct InspectArgs {
    /// The number to inspect: a decimal (0.1, -2.5e3, 1e-8, 1e400, inf, -inf, nan, -nan) or a
    /// hexadecimal float (0x1.8p3, -0x1p-24, 0x1.8), each rounded once, exactly, into every
    /// format; or with --as a bit pattern in hex or binary (0x3c00, 0b0011110000000000). The
    /// nearest f64 stands in for the number in the error columns.
    #[arg(allow_hyphen_values = true)]
    value: String,

    /// Formats to round the value into, comma separated or repeated (default: every format,
    /// or none but the --as format).
    #[arg(long, value_name = "FORMAT", value_delimiter = ',', value_parser = parse_format)]
    to: Vec<&'static Format>,

    /// Read VALUE as a bit pattern of this format (a decimal VALUE is rounded into it first);
    /// the --to formats then convert that value.
    #[arg(long = "as", value_name = "FORMAT", value_parser = parse_format)]
    as_format: Option<&'static Format>,

    /// Output style: an aligned table for people or a JSON object for programs.
    #[arg(long, value_enum, value_name = "STYLE", default_value_t = InspectStyle::Table)]
    format: InspectStyle,
}

/// Output styles of `lowp inspect`.
#[derive(Clone, Copy, ValueEnum)]
enum InspectStyle {
    /// An input line and aligned columns.
    Table,
    /// A JSON object: the input and one record per format.
    Json,
}

/// clap's parser for format names.
fn parse_format(name: &str) -> Result<&'static Format, CliError> {
    Ok(registry::lookup(name)?)
}

/// clap's parser for `accumulate --n`: digits with `_` or `,` between them (`1_000_000`), or
/// a whole number in exponent notation (`1e6`, `2.5e5`), from 1 to 100,000,000.
fn parse_count(text: &str) -> Result<u64, String> {
    let digits: String = text.chars().filter(|&c| c != '_' && c != ',').collect();
    let n = match digits.parse::<u64>() {
        Ok(n) => n,
        Err(_) => match digits.parse::<f64>() {
            Ok(x) if x.fract() == 0.0 && (0.0..=1e18).contains(&x) => x as u64,
            Ok(_) => return Err(format!("'{text}' is not a whole number")),
            Err(_) => {
                return Err(format!(
                    "'{text}' is not a count: write digits (1000000, 1_000_000) or exponent \
                     notation (1e6)"
                ));
            }
        },
    };
    if (1..=100_000_000).contains(&n) {
        Ok(n)
    } else {
        Err(format!("{n} is out of range: give 1 to 100,000,000"))
    }
}

/// clap's parser for function names.
fn parse_function(name: &str) -> Result<&'static str, CliError> {
    Ok(error_table::parse_function(name)?)
}

/// A table in the chosen style.
fn render(table: &output::Table, style: TableStyle) -> String {
    match style {
        TableStyle::Table => table.to_text(),
        TableStyle::Markdown => table.to_markdown(),
        TableStyle::Csv => table.to_csv(),
        TableStyle::Json => output::json_text(&serde_json::Value::Array(table.to_json_records())),
    }
}

/// Runs the parsed command and returns what to print.
fn run(cli: Cli) -> Result<String, CliError> {
    match cli.command {
        Command::Formats(args) => Ok(render(&formats::table(), args.format)),
        Command::Inspect(args) => {
            let report = inspect::run(&args.value, args.as_format, &args.to, "--as FORMAT")?;
            Ok(match args.format {
                InspectStyle::Table => report.to_text(),
                InspectStyle::Json => report.to_json(),
            })
        }
        Command::Convert(args) => convert::run(&args),
        Command::Kernels(args) => kernel_matrix::run(&args),
        Command::Bench(args) => bench::run(&args),
        Command::ErrorTable(args) => {
            use error_table::{View, human, table};
            let rows = progress::with_control(|ctl| {
                error_table::run(&args.formats, &args.functions, ctl)
            })?;
            Ok(match args.format {
                TableStyle::Table => human(&rows, false),
                TableStyle::Markdown => human(&rows, true),
                style => render(&table(&rows, View::All), style),
            })
        }
        Command::ConversionError(args) => {
            let measured = progress::with_control(|ctl| conversion::run(&args.formats, ctl))?;
            Ok(render(&conversion::table(&measured), args.format))
        }
        Command::Accumulate(args) => run_accumulate(&args),
        Command::Plot(args) => {
            output::check_outputs(&[], &[("--out", Some(&args.out), output::Expect::Dir)])?;
            let paths = plot::write_all(&args.out, &plot::all()?)?;
            Ok(paths
                .iter()
                .map(|p| format!("wrote {}\n", p.display()))
                .collect())
        }
        Command::Report(args) => {
            output::check_outputs(&[], &[("--out", Some(&args.out), output::Expect::Dir)])?;
            let written = progress::with_control(|ctl| report::run(&args.out, &args.formats, ctl))?;
            Ok(format!(
                "wrote {} with {} pictures and the full tables (error-table.csv/json, \
                 conversion-error.csv/json) in {:.1} s\n",
                written.page.display(),
                written.pictures,
                written.seconds
            ))
        }
        Command::Train(args) => train::run(&args),
    }
}

/// Runs `lowp accumulate`: sums in the format, draws the running sums into `--plot` if given,
/// and answers the text (or JSON) to print.
fn run_accumulate(args: &AccumulateArgs) -> Result<String, CliError> {
    output::check_outputs(
        &[],
        &[("--plot", args.plot.as_deref(), output::Expect::File)],
    )?;
    let setup = accumulate::Setup {
        n: usize::try_from(args.n).map_err(|_| CliError::usage("--n is too large"))?,
        distribution: match args.distribution {
            DistributionArg::Uniform => accumulate::Distribution::Uniform,
            DistributionArg::Normal => accumulate::Distribution::Normal,
        },
        seed: args.seed,
    };
    let outcome = progress::with_control(|ctl| accumulate::run(args.dtype, &setup, ctl))?;
    let mut wrote = String::new();
    if let Some(file) = &args.plot {
        let picture = plot::running_sums(&outcome)?;
        interrupt::check_interrupted()?;
        output::write_atomically(file, &picture.png)?;
        wrote = format!("wrote {}\n", file.display());
    }
    if args.json {
        return Ok(output::json_text(&outcome.to_json()));
    }
    Ok(format!(
        "{}\n{}{wrote}",
        outcome.summary(),
        outcome.table().to_text()
    ))
}

/// Prints `error: …` on stderr and gives the error's exit code.
fn fail(err: &CliError) -> ExitCode {
    // Nothing sensible is left to do when stderr itself is gone.
    // Messages name files and tensors, whose names may hold terminal escapes.
    let _ = writeln!(
        std::io::stderr(),
        "error: {}",
        printable::printable(&err.to_string())
    );
    ExitCode::from(u8::try_from(err.code).unwrap_or(1))
}

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => match CliError::from_clap(&e) {
            Some(err) => return fail(&err),
            None => e.exit(),
        },
    };
    match run(cli).and_then(|text| output::emit(&text)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => fail(&err),
    }
}
