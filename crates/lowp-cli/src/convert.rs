//! `lowp convert`: the command line of `lowp_io::convert`, its progress bar and its table.

use crate::error::CliError;
use crate::interrupt;
use crate::output::{self, Cell, Column, Table};
use crate::printable::printable;
use clap::builder::PossibleValuesParser;
use clap::{Args, ValueEnum};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressState, ProgressStyle};
use lowp_io::layouts::Layout;
use lowp_io::quant::{ElementRounding, QuantOptions, ScaleSearch};
use lowp_io::report::significant;
use lowp_io::size::parse_size;
use lowp_io::{FloatType, Options, Report, Setting, Target, Verdict};
use serde_json::{Value, json};
use std::io::IsTerminal;
use std::path::PathBuf;
use std::time::Instant;

/// Arguments of `lowp convert`.
#[derive(Args, Debug)]
#[command(after_help = AFTER_HELP)]
pub struct ConvertArgs {
    /// The checkpoint to read: a .safetensors, .npy or .npz file (recognised by its contents),
    /// or a model: a model.safetensors.index.json, or a directory holding one or a single
    /// .safetensors file.
    #[arg(value_name = "IN")]
    input: PathBuf,

    /// The file to write, of the same kind as IN, or for a model a new directory (not with
    /// --dry-run). Written under a temporary name beside it and renamed when complete; an
    /// existing OUT file is replaced, a directory must be new or empty. OUT may not be IN (by
    /// any path or link), --report, a device (/dev/null), FIFO or socket (refused, never
    /// replaced or written through), nor end in '/' when IN is a file.
    #[arg(value_name = "OUT")]
    output: Option<PathBuf>,

    /// What to store: a float type (f32, f64, f16, bf16, f8e4m3fn, f8e5m2; also bfloat16,
    /// F8_E4M3, ...), or a block-quantized scheme for the weights: fp8-block, fp8-channel,
    /// mxfp8, mxfp4, nvfp4 (see --layout). A quantized IN stored as a float type is decoded. With --dry-run, several
    /// separated by commas are compared. NumPy files take f16, f32 and f64 only.
    #[arg(long, value_name = "TYPE", value_parser = parse_target, value_delimiter = ',', required = true)]
    to: Vec<Target>,

    /// With a scheme: store the tensors it does not quantize (1-D, not weights, not matched by
    /// --only) as TYPE instead of keeping them as they are.
    #[arg(long, value_name = "TYPE", value_parser = parse_type)]
    rest: Option<FloatType>,

    /// With a scheme: the loader the checkpoint is laid out for: `transformers` (its own
    /// fp8, mxfp8 and gpt-oss mxfp4 quantizers), `compressed-tensors` (what llm-compressor
    /// writes; transformers and vLLM load it) or `modelopt` (nvfp4, as vLLM reads ModelOpt
    /// exports). Default: transformers where it reads the scheme for this model, else
    /// compressed-tensors (see below).
    #[arg(long, value_name = "LAYOUT", value_parser = parse_layout)]
    layout: Option<Layout>,

    /// With nvfp4 in the modelopt layout: a JSON object of each quantized linear layer's input
    /// amax from your calibration run (`{"model.layers.0.self_attn.q_proj": 3.2, ...}`); the
    /// checkpoint then quantizes activations too (W4A4, an input_scale per layer). Without it
    /// the weights only are quantized (W4A16_NVFP4).
    #[arg(long, value_name = "FILE")]
    activation_amax: Option<PathBuf>,

    /// With a scheme: how elements are rounded: `nearest` (to nearest, ties to even) or
    /// `stochastic` (up or down with probability by distance; see --seed).
    #[arg(long, value_name = "MODE", default_value = "nearest",
          value_parser = PossibleValuesParser::new(ElementRounding::NAMES))]
    rounding: String,

    /// The seed of stochastic rounding: the same seed gives the same bytes.
    #[arg(long, value_name = "N", default_value_t = 0)]
    seed: u64,

    /// With a scheme: how each block's scale is chosen: `spec` (the scheme's rule) or `mse`
    /// (the rule's scale and its neighbours, whichever gives the block the least squared
    /// error).
    #[arg(long, value_name = "MODE", default_value = "spec",
          value_parser = PossibleValuesParser::new(ScaleSearch::ALL.map(ScaleSearch::name)))]
    scale_search: String,

    /// For a model directory: start a new shard when one would exceed SIZE: bytes, or with KB,
    /// MB, GB (powers of 1000) or K, KiB, M, MiB, G, GiB (powers of 1024). Default: the
    /// input's largest shard.
    #[arg(long, value_name = "SIZE", value_parser = parse_size)]
    shard_size: Option<u64>,

    /// Convert only the tensors whose names match PATTERN (`*` any characters, `?` one);
    /// comma separated or repeated. The others are copied unchanged. With a scheme, the
    /// tensors to quantize (default: tensors of 2 or more dimensions whose names end in
    /// `weight`, except embeddings and lm_head, which loaders keep in high precision).
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
    /// inverse stored as an F32 scalar tensor NAME.scale (value = NAME * NAME.scale), which
    /// the report's `scale` column shows.
    #[arg(long, value_name = "MODE", value_enum, default_value_t = ScaleMode::None)]
    fp8_scale: ScaleMode,

    /// Print the report without writing anything: will the checkpoint survive this type?
    #[arg(long)]
    dry_run: bool,

    /// Also write the report to FILE as JSON (a regular file, not IN or OUT; checked before
    /// the conversion starts).
    #[arg(long, value_name = "FILE")]
    report: Option<PathBuf>,

    /// Exit 1 when a tensor's verdict is `fail` (`--strict`, or `--strict=fail`), or `warn` or
    /// `fail` (`--strict=warn`), or an --only or --keep-f32 pattern matches no tensor. OUT is
    /// then not written (an existing OUT is left as it was); the report is printed, and
    /// --report written, all the same. With a model directory, an entry left out of it (a
    /// hidden file or folder, a temporary of a lowp run) is an error before any work.
    #[arg(long, value_name = "LEVEL", value_enum, num_args = 0..=1, require_equals = true,
          default_missing_value = "fail")]
    strict: Option<StrictLevel>,
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

Schemes (blocks along rows of the weight; C = columns):
  fp8-block    E4M3, one scale per 128 x 128 block      (DeepSeek-V3)
  fp8-channel  E4M3, one scale per row                   (llm-compressor's FP8_DYNAMIC)
  mxfp8        E4M3, one E8M0 scale per 32 of a row      (OCP MX)
  mxfp4        E2M1, one E8M0 scale per 32 of a row      (OCP MX, gpt-oss)
  nvfp4        E2M1, one E4M3 scale per 16 of a row and one F32 per tensor  (NVIDIA)
Layouts (--layout), which weights each quantizes, their names and config.json:
  transformers        fp8-block: W + W_scale_inv F32 [R/128, C/128]; mxfp8: W + W_scale_inv
                      U8 [R, C/32]: linear weights whose rows and columns are whole blocks.
                      mxfp4: gpt-oss's experts P [E, in, out] as P_blocks [E, out, in/32, 16]
                      + P_scales. quantization_config fp8 / mxfp8 / mxfp4.
  compressed-tensors  every scheme, linear weights whose columns are whole groups: W_packed
                      (FP4) or W (FP8) + W_scale (+ W_global_scale for nvfp4);
                      quantization_config compressed-tensors, format float-quantized,
                      mxfp8-quantized, mxfp4-pack-quantized or nvfp4-pack-quantized.
  modelopt            nvfp4: W U8 + W_scale F8_E4M3 + W_scale_2 F32 (+ input_scale with
                      --activation-amax); quantization_config modelopt + hf_quant_config.json.
  Default: transformers for fp8-block, mxfp8 and gpt-oss's mxfp4; compressed-tensors for
  the others. Embeddings, lm_head, routers and norms stay unquantized (--only selects a
  head or router); every module left unquantized is listed in the config's skip list.
A quantized weight verdict: fail if it held NaN/inf; warn if elements saturated past their
format's top binade (|x/scale| >= 512 for E4M3, 8 for E2M1), if more than 0.1% flushed to zero
(E4M3 elements; E2M1: more than 25%), or if its relative Frobenius error exceeds its elements'
unit roundoff (E4M3 2^-4, E2M1 2^-2); ok otherwise. Decoding a quantized weight (--to a float
type) also fails it when some block's scale is bad: NaN, inf, negative, or zero while the
block holds a non-zero element (E8M0 255, E4M3 0x7F/0xFF, an NVFP4 second scale that is NaN,
zero or negative); a zero scale over an all-zero block is what encoders write, and passes.

With --fp8-scale per-tensor, a tensor W stored in FP8 was multiplied by a power of two s before
rounding, and W.scale (F32, shape []) holds 1/s: the values are restored as W * W.scale. The
report's scale column (and the JSON's `scale`) shows that stored 1/s.

Exit codes: 0 done; 1 a missing, unreadable, malformed or unwritable file (the message names
the path and the reason), or with --strict a verdict at its level or an --only or --keep-f32
pattern that matches nothing (OUT not written); 2 usage; 130 interrupted.";

/// The `--strict` levels: the best verdict that still fails the run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum StrictLevel {
    /// Exit 1 on a `fail` verdict.
    Fail,
    /// Exit 1 on a `warn` or `fail` verdict.
    Warn,
}

impl StrictLevel {
    /// The verdict it stands for.
    fn verdict(self) -> Verdict {
        match self {
            StrictLevel::Fail => Verdict::Fail,
            StrictLevel::Warn => Verdict::Warn,
        }
    }
}

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
    if args.to.len() > 1 && !args.dry_run {
        return Err(CliError::usage(
            "several --to targets are compared with --dry-run; a conversion writes one",
        ));
    }
    let quant = QuantOptions {
        // clap has checked the names against these lists.
        rounding: ElementRounding::parse(&args.rounding, args.seed).unwrap_or_default(),
        search: ScaleSearch::parse(&args.scale_search).unwrap_or_default(),
        ..QuantOptions::default()
    };
    let options = |to: Target| Options {
        input: args.input.clone(),
        output: args.output.clone(),
        to,
        rest: args.rest,
        quant,
        layout: args.layout,
        activation_amax: args.activation_amax.clone(),
        shard_size: args.shard_size,
        only: args.only.clone(),
        keep_f32: args.keep_f32.clone(),
        saturate: args.saturate,
        per_tensor_scale: args.fp8_scale == ScaleMode::PerTensor,
        strict: args.strict.map(StrictLevel::verdict),
    };
    // lowp-io's rules on which options go together, each option named by its flag. A float
    // type compared beside a scheme leaves --rest, --rounding and --scale-search to the scheme.
    let schemes = args.to.iter().any(|t| matches!(t, Target::Scheme(_)));
    let options = |to: Target| {
        let full = options(to);
        match to {
            Target::Float(_) if schemes => Options {
                rest: None,
                quant: QuantOptions::default(),
                ..full
            },
            _ => full,
        }
    };
    let flag = |s: Setting| format!("--{}", s.name().replace('_', "-"));
    for &to in &args.to {
        options(to).validate_naming(flag).map_err(cli_error)?;
    }
    // IN before OUT: a missing input is the error to report (exit 1, with the system's
    // reason, as for any file that cannot be read), not what OUT would have to be for it.
    if let Err(e) = std::fs::metadata(&args.input) {
        return Err(CliError::failure(format!(
            "cannot open {}: {e}",
            args.input.display()
        )));
    }
    // Every output against the input and each other, before any work: OUT is a file, or a
    // directory when IN is a model directory or index.
    let out_kind = if lowp_io::model::Model::is_model_path(&args.input) {
        output::Expect::Dir
    } else {
        output::Expect::File
    };
    output::check_outputs(
        &[("IN", &args.input)],
        &[
            ("OUT", args.output.as_deref(), out_kind),
            ("--report", args.report.as_deref(), output::Expect::File),
        ],
    )?;
    let start = Instant::now();
    let mut reports = Vec::new();
    for &to in &args.to {
        reports.push((to, convert(&options(to), std::io::stderr().is_terminal())?));
    }
    let seconds = start.elapsed().as_secs_f64();
    // What was left out and what was decided: every target's run sees the same directory.
    if let Some((_, report)) = reports.first() {
        for skipped in &report.skipped {
            note(&format!("left out {skipped}"));
        }
        for line in &report.notes {
            note(line);
        }
    }
    if let Some(file) = &args.report {
        let mut runs = Vec::new();
        for (to, report) in &reports {
            let command = json!({
                "input": args.input.display().to_string(),
                "output": args.output.as_ref().map(|p| p.display().to_string()),
                "dry_run": args.dry_run,
                "to": to.name(),
                "rest": args.rest.map(FloatType::name),
                "rounding": quant.rounding.name(),
                "seed": args.seed,
                "scale_search": quant.search.name(),
                "layout": args.layout.map(Layout::name),
                "activation_amax": args.activation_amax.as_ref().map(|p| p.display().to_string()),
                "only": args.only,
                "keep_f32": args.keep_f32,
                "saturate": args.saturate,
                "fp8_scale": if args.fp8_scale == ScaleMode::PerTensor { "per-tensor" } else { "none" },
                "strict": args.strict.map(|l| format!("{l:?}").to_lowercase()),
            });
            runs.push(report.to_json(command, seconds));
        }
        let value: Value = if runs.len() == 1 {
            runs.remove(0)
        } else {
            json!({ "runs": runs })
        };
        output::write_atomically(file, output::json_text(&value).as_bytes())?;
    }
    let out_name = args.output.as_ref().map(|p| p.display().to_string());
    let mut text = if let [(_, report)] = reports.as_slice() {
        table(report).to_text() + "\n" + &report.summary(out_name.as_deref(), seconds)
    } else {
        comparison(&reports).to_text() + "\n" + &compared_summary(&reports, seconds)
    };
    // Every target's report has the same tensors, so one says what the patterns matched.
    let unmatched: Vec<String> = reports.first().map_or_else(Vec::new, |(to, r)| {
        let options = options(*to);
        let only = options.unmatched_only(&r.tensors).into_iter();
        let keep = options.unmatched_keep_f32(&r.tensors).into_iter();
        only.map(|p| format!("--only '{p}' matches no tensor"))
            .chain(keep.map(|p| format!("--keep-f32 '{p}' matches no tensor")))
            .collect()
    });
    let (failed, warned) = worst_counts(&reports);
    let Some(level) = args.strict else {
        for message in &unmatched {
            warn(message);
        }
        text += &strict_hint(failed, warned, args.dry_run);
        return Ok(text);
    };
    // lowp-io decided whether to write; what follows only says why.
    if !reports
        .iter()
        .any(|(to, r)| options(*to).refuses(&r.tensors))
    {
        return Ok(text);
    }
    let mut why = Vec::new();
    if failed > 0 {
        why.push(tensors(failed, "failed"));
    }
    if warned > 0 && level == StrictLevel::Warn {
        why.push(tensors(warned, "got warn"));
    }
    why.extend(unmatched);
    // The report is what tells the user what to fix: it goes out before the error.
    output::emit(&text)?;
    let flag = match level {
        StrictLevel::Fail => "--strict",
        StrictLevel::Warn => "--strict=warn",
    };
    let written = match &out_name {
        Some(out) => format!("; {out} not written"),
        None => String::new(),
    };
    Err(CliError::failure(format!(
        "{} ({flag}){written}",
        why.join(", ")
    )))
}

/// How many tensors failed and how many got a warning, in the worst of the reports (the
/// most of each over the targets compared).
fn worst_counts(reports: &[(Target, Report)]) -> (usize, usize) {
    let count = |report: &Report, verdict: Verdict| {
        report
            .verdict_counts()
            .iter()
            .find(|(v, _)| *v == verdict)
            .map_or(0, |(_, n)| *n)
    };
    reports.iter().fold((0, 0), |(f, w), (_, r)| {
        (
            f.max(count(r, Verdict::Fail)),
            w.max(count(r, Verdict::Warn)),
        )
    })
}

/// `N tensor(s) <what>`.
fn tensors(n: usize, what: &str) -> String {
    format!("{n} tensor{} {what}", if n == 1 { "" } else { "s" })
}

/// The line under the summary when some tensors failed or got a warning and `--strict` was
/// not given: the run still exits 0, and this says how to make it not.
fn strict_hint(failed: usize, warned: usize, dry_run: bool) -> String {
    let consequence = if dry_run {
        "exit 1"
    } else {
        "exit 1 without writing OUT"
    };
    match (failed, warned) {
        (0, 0) => String::new(),
        (0, w) => format!(
            "{}; --strict=warn makes this {consequence}.\n",
            tensors(w, "got warn")
        ),
        (f, 0) => format!(
            "{}; --strict makes this {consequence}.\n",
            tensors(f, "failed")
        ),
        (f, w) => format!(
            "{} and {w} got warn; --strict makes failures {consequence}, --strict=warn \
             warnings too.\n",
            tensors(f, "failed")
        ),
    }
}

/// Prints `note: …` on stderr, a line of its own, its names made printable.
fn note(message: &str) {
    use std::io::Write;
    // Nothing sensible is left to do when stderr itself is gone.
    let _ = writeln!(std::io::stderr(), "note: {}", printable(message));
}

/// Prints `warning: …` on stderr, a line of its own.
fn warn(message: &str) {
    use std::io::Write;
    // Nothing sensible is left to do when stderr itself is gone.
    let _ = writeln!(std::io::stderr(), "warning: {}", printable(message));
}

/// One row per tensor and one column of relative error per target: how several targets
/// compare on the same model.
fn comparison(reports: &[(Target, Report)]) -> Table {
    let mut columns = vec![
        Column::left("name", "tensor"),
        Column::right("elements", "elements"),
    ];
    // Each target's column is headed by its name; the line under the table says what the
    // figures are.
    columns.extend(
        reports
            .iter()
            .map(|(to, _)| Column::right(to.name(), to.name())),
    );
    let first = &reports[0].1;
    let rows = first
        .tensors
        .iter()
        .enumerate()
        .map(|(i, t)| {
            let mut row = vec![
                Cell::Text(printable(&t.name).into_owned()),
                Cell::Int(i64::try_from(t.shape.iter().product::<u64>()).unwrap_or(i64::MAX)),
            ];
            for (_, report) in reports {
                row.push(report.tensors.get(i).map_or(Cell::Empty, error_cell));
            }
            row
        })
        .collect();
    Table { columns, rows }
}

/// The table of a block quantization: per tensor its error as a whole (SQNR, relative
/// Frobenius error), the share of blocks whose scale clipped, and the bytes per parameter.
fn quant_table(report: &Report) -> Table {
    let columns = vec![
        Column::left("name", "tensor"),
        Column::left("types", "type"),
        Column::right("elements", "elements"),
        Column::right("sqnr_db", "SQNR dB"),
        Column::right("rel_error", "rel err"),
        Column::right("clipped", "clipped blocks"),
        Column::right("bytes_per_param", "bytes/param"),
        Column::left("verdict", "verdict"),
        Column::left("why", "why"),
    ];
    let rows = report
        .tensors
        .iter()
        .map(|t| {
            let (verdict, why) = t.verdict(report.saturate);
            let elements: u64 = t.shape.iter().product();
            let changed = t.quant.is_some() || t.stats.is_some();
            let mut row = vec![
                Cell::Text(if changed {
                    format!("{}→{}", t.from, t.to)
                } else {
                    t.from.clone()
                }),
                Cell::Int(i64::try_from(elements).unwrap_or(i64::MAX)),
            ];
            row.insert(0, Cell::Text(printable(&t.name).into_owned()));
            match &t.quant {
                Some(q) => row.extend([
                    Cell::Text(significant(q.stats.sqnr_db())),
                    Cell::Text(significant(q.stats.rel_frobenius())),
                    Cell::Text(lowp_io::report::percent(
                        q.stats.clipped_blocks,
                        q.stats.blocks,
                    )),
                ]),
                None => row.extend(std::iter::repeat_n(Cell::Empty, 3)),
            }
            row.push(Cell::Text(significant(
                t.bytes_out as f64 / elements.max(1) as f64,
            )));
            row.push(Cell::Text(verdict.to_string()));
            row.push(Cell::Text(why));
            row
        })
        .collect();
    Table { columns, rows }
}

/// A tensor's error as one figure: the relative Frobenius error of a quantized weight, the
/// mean relative error of a converted tensor, nothing for a kept one.
fn error_cell(t: &lowp_io::TensorReport) -> Cell {
    if let Some(q) = &t.quant {
        return Cell::Text(significant(q.stats.rel_frobenius()));
    }
    match &t.stats {
        Some(s) => Cell::Text(significant(s.mean_rel_error())),
        None => Cell::Empty,
    }
}

/// The summary lines of a comparison: each target's quantization summary and verdicts.
fn compared_summary(reports: &[(Target, Report)], seconds: f64) -> String {
    let mut out = String::from(
        "figures: relative Frobenius error ‖x - x̂‖/‖x‖ of a quantized weight, mean relative error \
         of a converted tensor\n",
    );
    for (to, report) in reports {
        let counts: Vec<String> = report
            .verdict_counts()
            .iter()
            .map(|(v, n)| format!("{n} {v}"))
            .collect();
        match report.quant_summary() {
            Some(q) => out += &format!("{} ({})\n", q.line(), counts.join(", ")),
            None => out += &format!("{}: {}\n", to.name(), counts.join(", ")),
        }
    }
    out + &format!("dry run: nothing written in {seconds:.2} s.\n")
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
        if let Ok(style) =
            ProgressStyle::with_template("{bar:40} {bytes}/{total_bytes} {rate} eta {eta} {msg}")
        {
            bar.set_style(style.with_key(
                "rate",
                |s: &ProgressState, w: &mut dyn std::fmt::Write| {
                    let _ = w.write_str(&crate::progress::byte_rate(s.per_sec()));
                },
            ));
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
        self.0.set_message(printable(name).into_owned());
    }
    fn finish(&self) {
        self.0.finish_and_clear();
    }
    fn removed_leftover(&self, leftover: &lowp_io::Leftover) {
        // A line of its own above the bar (printed whether or not the bar is shown).
        self.0.suspend(|| {
            use std::io::Write;
            let _ = writeln!(
                std::io::stderr(),
                "note: {}",
                printable(&leftover.to_string())
            );
        });
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

/// Parses `--rest` (see [`FloatType::parse`]).
pub fn parse_type(text: &str) -> Result<FloatType, lowp_io::Error> {
    FloatType::parse(text)
}

/// Parses `--to` (see [`Target::parse`]).
/// Parses `--layout`.
pub fn parse_layout(text: &str) -> Result<Layout, String> {
    Layout::parse(text).ok_or_else(|| {
        format!(
            "unknown layout '{text}': {}",
            Layout::ALL.map(Layout::name).join(", ")
        )
    })
}

pub fn parse_target(text: &str) -> Result<Target, lowp_io::Error> {
    Target::parse(text)
}

/// The report as the table `lowp convert` prints; the JSON report has every figure
/// ([`Report::records`]).
fn table(report: &Report) -> Table {
    if report.tensors.iter().any(|t| t.quant.is_some()) {
        return quant_table(report);
    }
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
                Cell::Text(printable(&t.name).into_owned()),
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
                // The factor NAME.scale stores, a power of two: 2^-11 reads better than
                // 0.00048828125.
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
