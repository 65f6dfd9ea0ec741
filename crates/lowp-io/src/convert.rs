//! A checkpoint (safetensors, `.npy`, `.npz`) stored in another float type, with a
//! per-tensor report of what that cost.
//!
//! [`convert`] decides per tensor what to do ([`Options::plan`]), writes the output header,
//! then moves each tensor's data through the conversion ([`crate::pipeline`]) into a temporary
//! file beside the output that is renamed into place only when everything succeeded
//! ([`TempOutput`]). The input is only ever opened for reading.

use crate::block_convert::{self, Rounding};
use crate::error::Error;
use crate::files::{self, TempOutput};
use crate::float_type::FloatType;
use crate::layouts::Layout;
use crate::model::Model;
use crate::pipeline::{self, Action, Files, Segment};
use crate::progress::{Control, NoProgress, Progress};
use crate::quant::{QuantOptions, Scheme};
use crate::report::{Report, TensorReport, Verdict};
use crate::{numpy, write_model};
use lowp::fit::FitStats;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;

/// What a checkpoint is stored as (`--to`): a float type, or a block-quantized scheme.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Target {
    /// Every float tensor stored in this type; quantized weights found in the input are
    /// decoded to it.
    Float(FloatType),
    /// The weights block-quantized in this scheme (see [`crate::selection::Selection::decide`]); the other
    /// tensors kept, or stored as [`Options::rest`].
    Scheme(Scheme),
}

impl Target {
    /// Parses `--to`: a scheme name (`fp8-block`, `mxfp8`, `mxfp4`, `nvfp4`) or a float type
    /// ([`FloatType::parse`]).
    pub fn parse(text: &str) -> Result<Target, Error> {
        if let Some(s) = Scheme::parse(text) {
            return Ok(Target::Scheme(s));
        }
        FloatType::parse(text)
            .map(Target::Float)
            .map_err(|e| match e {
                Error::Invalid(m) => Error::Invalid(format!(
                    "{m}; or a block-quantized scheme: {}",
                    Scheme::ALL.map(Scheme::name).join(", ")
                )),
                e => e,
            })
    }

    /// The name on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Target::Float(t) => t.name(),
            Target::Scheme(s) => s.name(),
        }
    }
}

impl From<FloatType> for Target {
    fn from(t: FloatType) -> Target {
        Target::Float(t)
    }
}

/// What to convert, and how. The field comments name the `lowp convert` flag that sets each.
#[derive(Clone, Debug)]
pub struct Options {
    /// The input (`IN`): a safetensors, `.npy` or `.npz` file, recognised by its contents; or
    /// a model: a `model.safetensors.index.json`, or a directory holding one or a single
    /// `.safetensors` file.
    pub input: PathBuf,
    /// The output (`OUT`): a file of the same kind as the input, or a directory when the
    /// input is a model; `None` for a dry run, which measures every tensor and writes nothing.
    pub output: Option<PathBuf>,
    /// The target type or scheme (`--to`).
    pub to: Target,
    /// With a scheme: the float type for the tensors the scheme leaves (`--rest`; `None`:
    /// they stay as they are).
    pub rest: Option<FloatType>,
    /// With a scheme: how elements are rounded and scales chosen (`--rounding`, `--seed`,
    /// `--scale-search`).
    pub quant: QuantOptions,
    /// With a scheme: the loader the checkpoint is laid out for (`--layout`; `None`: the
    /// layout transformers reads, see [`Layout::auto`]).
    pub layout: Option<Layout>,
    /// With nvfp4 in ModelOpt's layout: a JSON object mapping each quantized linear layer's
    /// module name to the largest magnitude of its input seen in calibration
    /// (`--activation-amax`), which makes the checkpoint W4A4 (`quant_algo: NVFP4`, with an
    /// `input_scale` per layer); `None` writes weights only (`W4A16_NVFP4`). Every quantized
    /// layer needs its entry; entries of other modules (a calibration run also sees `lm_head`)
    /// are not used.
    pub activation_amax: Option<PathBuf>,
    /// For a model directory: the largest output shard in bytes (`--shard-size`; `None`: the
    /// input's largest shard, or one file when the input is one).
    pub shard_size: Option<u64>,
    /// Glob patterns of the tensors to convert (`--only`; empty: every tensor, or with a
    /// scheme the tensors its layout quantizes by default, see
    /// [`Layout::quantizes_by_default`]). `*` matches any run of characters, `?` one
    /// character.
    pub only: Vec<String>,
    /// Glob patterns of the tensors to store as f32 instead (`--keep-f32`).
    pub keep_f32: Vec<String>,
    /// Saturate values beyond the target's range to ±MAX instead of ±inf or NaN
    /// (`--saturate`).
    pub saturate: bool,
    /// Scale each FP8 tensor by the power of two that fits its largest magnitude, storing the
    /// inverse as the F32 scalar `NAME.scale` (`--fp8-scale per-tensor`).
    pub per_tensor_scale: bool,
    /// Leave the output unwritten when a tensor's verdict is this or worse, or an `--only` or
    /// `--keep-f32` pattern matches no tensor (`--strict`; `None`: always write). The
    /// conversion still runs to the end and gives its report, with [`Report::written`] false;
    /// an existing output is left as it was.
    pub strict: Option<Verdict>,
}

impl Options {
    /// Options that convert every float tensor of `input` to `to` and write `output` (`None`:
    /// a dry run), without saturation or scaling.
    pub fn new(
        input: impl Into<PathBuf>,
        output: Option<PathBuf>,
        to: impl Into<Target>,
    ) -> Options {
        Options {
            input: input.into(),
            output,
            to: to.into(),
            rest: None,
            quant: QuantOptions::default(),
            layout: None,
            activation_amax: None,
            shard_size: None,
            only: Vec::new(),
            keep_f32: Vec::new(),
            saturate: false,
            per_tensor_scale: false,
            strict: None,
        }
    }
}

/// What happens to one tensor.
#[derive(Clone, Debug, Default)]
pub struct Plan {
    /// Its float type, if it has one of ours.
    pub source: Option<FloatType>,
    /// The type it is converted to; `None`: copied as it is.
    pub target: Option<FloatType>,
    /// Why it is copied as it is.
    pub note: String,
    /// Whether it is scaled per tensor (FP8 with `--fp8-scale per-tensor`).
    pub scaled: bool,
    /// The name of its scale tensor, when scaled and writing.
    pub scale_name: Option<String>,
}

impl Options {
    /// Whether `--only` selects the tensor `name` (no `--only` selects every tensor).
    pub fn selects(&self, name: &str) -> bool {
        self.only.is_empty() || self.only.iter().any(|p| glob(p, name))
    }

    /// The `--only` patterns that match none of the reported tensors' names, in the order
    /// given.
    pub fn unmatched_only<'a>(&'a self, tensors: &[TensorReport]) -> Vec<&'a str> {
        unmatched(&self.only, tensors)
    }

    /// The `--keep-f32` patterns that match none of the reported tensors' names, in the order
    /// given: most likely a misspelt name, which would leave the tensors it meant converted.
    pub fn unmatched_keep_f32<'a>(&'a self, tensors: &[TensorReport]) -> Vec<&'a str> {
        unmatched(&self.keep_f32, tensors)
    }

    /// Whether [`Options::strict`] keeps the output of a conversion that gave `tensors` from
    /// being written: a verdict at its level or worse, or an `--only` or `--keep-f32` pattern
    /// that matches no tensor.
    pub fn refuses(&self, tensors: &[TensorReport]) -> bool {
        self.strict.is_some_and(|level| {
            tensors.iter().any(|t| t.verdict(self.saturate).0 <= level)
                || !self.unmatched_only(tensors).is_empty()
                || !self.unmatched_keep_f32(tensors).is_empty()
        })
    }

    /// The options for another model of a directory, whose tensors are reported under
    /// `prefix` (`2_Dense/`): `--only` and `--keep-f32` patterns that start with the prefix
    /// apply to its tensors by their own names, the prefix removed (`2_Dense/*` selects them
    /// all); the others match their own names as they do the main model's (`*.weight`).
    pub fn within(&self, prefix: &str) -> Options {
        let strip = |patterns: &[String]| {
            patterns
                .iter()
                .map(|p| p.strip_prefix(prefix).unwrap_or(p).to_string())
                .collect()
        };
        Options {
            only: strip(&self.only),
            keep_f32: strip(&self.keep_f32),
            ..self.clone()
        }
    }

    /// Whether `--keep-f32` names the tensor `name`.
    pub fn keeps_f32(&self, name: &str) -> bool {
        self.keep_f32.iter().any(|p| glob(p, name))
    }

    /// What a scheme does with a float tensor it leaves unquantized, for the report: stored
    /// as `--rest`'s type, or kept (`--rest` would convert it).
    pub fn rest_note(&self) -> String {
        match self.rest {
            Some(t) => format!("stored as {} (--rest)", t.name()),
            None => "--rest TYPE converts it".to_string(),
        }
    }

    /// What to do with the tensor `name` of float type `source` (`None`: not a float type
    /// we convert) when it is not quantized; `writing` is false in a dry run.
    pub fn plan(&self, name: &str, source: Option<FloatType>, writing: bool) -> Plan {
        let kept = |note: String| Plan {
            source,
            note,
            ..Plan::default()
        };
        let Some(from) = source else {
            return kept("not a float type lowp converts".to_string());
        };
        let to = match (self.to, self.rest) {
            _ if self.keeps_f32(name) => FloatType::F32,
            (Target::Float(to), _) => {
                if !self.selects(name) {
                    return kept("not matched by --only".to_string());
                }
                to
            }
            (Target::Scheme(_), Some(rest)) => rest,
            (Target::Scheme(_), None) => return kept(String::new()),
        };
        if to == from {
            return kept(format!("already {}", to.name()));
        }
        let scaled = self.per_tensor_scale && to.is_fp8();
        Plan {
            source,
            target: Some(to),
            note: String::new(),
            scaled,
            scale_name: (scaled && writing).then(|| format!("{name}.scale")),
        }
    }
}

/// The `patterns` that match none of the `tensors`' names, in the order given. Patterns
/// select a tensor of another model of a directory by its name within that model, while the
/// report names it after its folder or file (`2_Dense/linear.weight`): a pattern matching the
/// name after any `/` of a reported name matched, as it did when selecting.
fn unmatched<'a>(patterns: &'a [String], tensors: &[TensorReport]) -> Vec<&'a str> {
    let matches = |p: &str, name: &str| {
        glob(p, name)
            || name
                .match_indices('/')
                .any(|(i, _)| glob(p, &name[i + 1..]))
    };
    patterns
        .iter()
        .filter(|p| !tensors.iter().any(|t| matches(p, &t.name)))
        .map(String::as_str)
        .collect()
}

/// Whether `name` matches the glob `pattern`: `*` any run of characters (dots included), `?`
/// any one character, everything else itself.
pub fn glob(pattern: &str, name: &str) -> bool {
    let (p, n): (Vec<char>, Vec<char>) = (pattern.chars().collect(), name.chars().collect());
    // Iterative matching with one backtrack point (the last `*`): linear in practice, never
    // exponential.
    let (mut i, mut j) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while j < n.len() {
        if i < p.len() && (p[i] == '?' || p[i] == n[j]) {
            i += 1;
            j += 1;
        } else if i < p.len() && p[i] == '*' {
            star = Some((i, j));
            i += 1;
        } else if let Some((si, sj)) = star {
            i = si + 1;
            j = sj + 1;
            star = Some((si, sj + 1));
        } else {
            return false;
        }
    }
    p[i..].iter().all(|&c| c == '*')
}

/// Runs one tensor whose data is `base` (input and output offsets, bytes; its action is
/// ignored): copies it when the plan keeps it, converts it otherwise (after a first pass for
/// its scale when scaled). Gives the statistics and the scale, when converted.
pub(crate) fn run_tensor(
    opts: &Options,
    files: &Files<'_>,
    base: Segment,
    plan: &Plan,
    swap: bool,
    elements: u64,
) -> Result<(Option<FitStats>, Option<f64>), Error> {
    let (Some(to), Some(from)) = (plan.target, plan.source) else {
        if files.output.is_some() {
            pipeline::run(&base, files)?;
        } else {
            files.progress.add(base.bytes);
        }
        return Ok((None, None));
    };
    debug_assert_eq!(base.bytes, elements * from.size() as u64);
    let mut segment = Segment {
        width: from.size(),
        action: Action::Convert {
            from,
            to,
            swap,
            rounding: Rounding {
                saturate: opts.saturate,
                scale: 1.0,
            },
        },
        ..base
    };
    let mut scale = None;
    if plan.scaled {
        let s = block_convert::fp8_scale(to, pipeline::amax(&segment, files)?);
        if let Action::Convert { rounding, .. } = &mut segment.action {
            rounding.scale = s;
        }
        scale = Some(s);
    }
    let stats = pipeline::run(&segment, files)?;
    Ok((Some(stats), scale))
}

/// The kinds of file `lowp convert` reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// safetensors.
    Safetensors,
    /// A NumPy `.npy` array.
    Npy,
    /// A NumPy `.npz` archive.
    Npz,
}

impl Kind {
    /// The kind of the file `path` of `len` bytes, from its first bytes: `\x93NUMPY` is a
    /// `.npy`, a zip signature a `.npz`. A safetensors file starts with its header's length,
    /// which could spell a zip signature, but then has its JSON's `{` at byte 8, where a zip
    /// entry has its compression method; a name ending in `.npz` settles that case. Anything
    /// else is read as safetensors (whose reader says what is wrong with it), unless the name
    /// ends in `.npy` or `.npz`: then it is a damaged or mislabelled NumPy file, and the error
    /// says what its first bytes lack.
    fn of_file(file: &File, path: &Path, len: u64) -> Result<Kind, Error> {
        let mut head = [0u8; 9];
        let head = &mut head[..len.min(9) as usize];
        files::read_at(file, head, 0).map_err(|e| files::read_error(path, &e))?;
        let named = Kind::of_name(path);
        let zip = head.starts_with(b"PK\x03\x04") || head.starts_with(b"PK\x05\x06");
        if head.starts_with(b"\x93NUMPY") {
            return Ok(Kind::Npy);
        }
        if zip && (named == Some(Kind::Npz) || head.get(8) != Some(&b'{')) {
            return Ok(Kind::Npz);
        }
        let (kind, magic, spelled) = match named {
            Some(Kind::Npy) => (
                ".npy",
                &b"\x93NUMPY"[..],
                "the .npy magic string \\x93NUMPY",
            ),
            Some(Kind::Npz) => (".npz", &b"PK\x03\x04"[..], "a zip signature (PK\\x03\\x04)"),
            _ => return Ok(Kind::Safetensors),
        };
        let why = if len == 0 {
            "the file is empty".to_string()
        } else if head.len() < magic.len() && magic.starts_with(head) {
            format!("the file is only {len} bytes: truncated?")
        } else if head.get(8) == Some(&b'{') {
            format!("it does not start with {spelled}; it looks like a safetensors file")
        } else {
            format!("it does not start with {spelled}")
        };
        Err(Error::file(format!(
            "{}: not a NumPy {kind} file: {why}",
            path.display()
        )))
    }

    /// The kind a file name's extension says, if any.
    fn of_name(path: &Path) -> Option<Kind> {
        match path.extension()?.to_str()?.to_ascii_lowercase().as_str() {
            "safetensors" => Some(Kind::Safetensors),
            "npy" => Some(Kind::Npy),
            "npz" => Some(Kind::Npz),
            _ => None,
        }
    }

    /// The kind's name.
    fn name(self) -> &'static str {
        match self {
            Kind::Safetensors => "safetensors",
            Kind::Npy => ".npy",
            Kind::Npz => ".npz",
        }
    }
}

/// Converts as `opts` says and gives the report; nothing is written in a dry run (no
/// output). The same as [`convert_with`] without progress reports or a way to cancel.
///
/// ```
/// # fn main() -> Result<(), lowp_io::Error> {
/// # let dir = std::env::temp_dir().join(format!("lowp-io-doc-{}", std::process::id()));
/// # std::fs::create_dir_all(&dir).unwrap();
/// # let model = dir.join("model.safetensors");
/// # let header = br#"{"w":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}}"#;
/// # let mut bytes = (header.len() as u64).to_le_bytes().to_vec();
/// # bytes.extend(header);
/// # bytes.extend([0.1f32, 3.0].iter().flat_map(|x| x.to_le_bytes()));
/// # std::fs::write(&model, bytes).unwrap();
/// use lowp_io::{FloatType, Options, Verdict};
///
/// let out = dir.join("model_bf16.safetensors");
/// let report = lowp_io::convert(&Options::new(&model, Some(out.clone()), FloatType::BF16))?;
/// let w = &report.tensors[0];
/// assert_eq!((w.name.as_str(), w.to.as_str()), ("w", "BF16"));
/// assert_eq!(w.verdict(report.saturate).0, Verdict::Ok); // 0.1 rounded, 3.0 exact
/// assert_eq!(std::fs::metadata(&out).unwrap().len(), report.file_bytes_out);
/// # std::fs::remove_dir_all(&dir).unwrap();
/// # Ok(())
/// # }
/// ```
pub fn convert(opts: &Options) -> Result<Report, Error> {
    convert_with(opts, &NoProgress, &AtomicBool::new(false))
}

/// [`convert`], reporting progress to `progress` (from several threads) and stopping with
/// [`Error::Cancelled`] at the next block once `cancel` is set. Whatever the error, nothing is
/// left behind: the temporary output is removed and the output path is untouched. First it
/// removes the temporary outputs that killed runs left beside the output
/// ([`crate::leftovers`]), telling `progress` of each.
pub fn convert_with(
    opts: &Options,
    progress: &dyn Progress,
    cancel: &AtomicBool,
) -> Result<Report, Error> {
    let control = Control { progress, cancel };
    if let Target::Float(to) = opts.to {
        let given = [
            (opts.layout.is_some(), "a layout (--layout)"),
            (
                opts.activation_amax.is_some(),
                "activation amax (--activation-amax)",
            ),
        ];
        if let Some((_, what)) = given.iter().find(|(set, _)| *set) {
            return Err(Error::invalid(format!(
                "{what} applies to the block-quantized schemes ({}), not to {}",
                Scheme::ALL.map(Scheme::name).join(", "),
                to.name()
            )));
        }
    }
    if let Some(out) = &opts.output {
        // A model directory's files are inputs, whatever their names: never swept.
        let input_root = if opts.input.is_dir() || !Model::is_model_path(&opts.input) {
            opts.input.clone()
        } else {
            opts.input
                .parent()
                .filter(|p| !p.as_os_str().is_empty())
                .map_or_else(|| PathBuf::from("."), Path::to_path_buf)
        };
        for leftover in crate::leftovers::remove_beside_sparing(out, &input_root) {
            progress.removed_leftover(&leftover);
        }
    }
    if Model::is_model_path(&opts.input) {
        return convert_model(opts, control);
    }
    let (input, len) = files::open(&opts.input)?;
    let kind = Kind::of_file(&input, &opts.input, len)?;
    if kind == Kind::Safetensors {
        drop(input);
        return convert_model(opts, control);
    }
    if let Some(out) = &opts.output {
        files::check_distinct(&opts.input, out)?;
        if let Some(named) = Kind::of_name(out)
            && named != kind
        {
            return Err(Error::invalid(format!(
                "IN is a {} file but OUT {} names a {} file; lowp convert keeps the kind of file",
                kind.name(),
                out.display(),
                named.name()
            )));
        }
        if kind != Kind::Safetensors
            && let Target::Float(to) = opts.to
            && !to.in_numpy()
        {
            return Err(Error::invalid(format!(
                "NumPy files cannot hold {} (NumPy saves ml_dtypes arrays as raw bytes that do \
                 not say what they hold); use a .safetensors file, --to f16, or --dry-run",
                to.name()
            )));
        }
    }
    if kind != Kind::Safetensors && matches!(opts.to, Target::Scheme(_)) {
        return Err(Error::invalid(format!(
            "{} is a layout of safetensors tensors; NumPy files cannot hold it",
            opts.to.name()
        )));
    }
    let temp = opts.output.as_deref().map(TempOutput::create).transpose()?;
    progress.start(len);
    let output = temp
        .as_ref()
        .zip(opts.output.as_deref())
        .map(|(t, p)| (t.file(), p));
    let tensors = if kind == Kind::Npy {
        numpy::convert_npy(opts, &input, len, output, control)
    } else {
        numpy::convert_npz(opts, &input, output, control)
    };
    progress.finish();
    let tensors = tensors?;
    // Dropped uncommitted, a refused output is removed.
    let temp = temp.filter(|_| !opts.refuses(&tensors));
    let file_bytes_out = match &temp {
        Some(t) => t.file().metadata().map_err(|e| t.error(&e))?.len(),
        None => 0,
    };
    let written = temp.is_some();
    if let Some(t) = temp {
        t.commit()?;
    }
    Ok(Report {
        tensors,
        saturate: opts.saturate,
        file_bytes_in: len,
        file_bytes_out,
        written,
        skipped: Vec::new(),
        notes: Vec::new(),
    })
}

/// Converts a safetensors file or model ([`write_model`]) and gives the report.
fn convert_model(opts: &Options, control: Control<'_>) -> Result<Report, Error> {
    if let Some(out) = &opts.output
        && Model::is_model_path(&opts.input)
        && Kind::of_name(out).is_some()
    {
        return Err(Error::invalid(format!(
            "IN {} is a model directory, so OUT is written as one: give OUT as a directory name, \
             not {}",
            opts.input.display(),
            out.display()
        )));
    }
    if let Some(out) = &opts.output
        && !Model::is_model_path(&opts.input)
    {
        files::check_distinct(&opts.input, out)?;
        if out.is_dir() {
            return Err(Error::invalid(format!(
                "OUT {} is a directory, but IN is one safetensors file: give a file name (or \
                 give IN as the model's directory to write a model directory)",
                out.display()
            )));
        }
        if let Some(named) = Kind::of_name(out)
            && named != Kind::Safetensors
        {
            // IN was taken for safetensors because it is nothing else: if it is no safetensors
            // file either, that is the error to report, not the kinds of IN and OUT.
            let (input, len) = files::open(&opts.input)?;
            crate::safetensors::read_header(&input, &opts.input, len)?;
            return Err(Error::invalid(format!(
                "IN is a safetensors file but OUT {} names a {} file; lowp convert keeps the \
                 kind of file",
                out.display(),
                named.name()
            )));
        }
    }
    let result = write_model::convert(opts, control);
    control.progress.finish();
    let done = result?;
    Ok(Report {
        written: opts.output.is_some() && !opts.refuses(&done.tensors),
        tensors: done.tensors,
        saturate: opts.saturate,
        file_bytes_in: done.bytes_in,
        file_bytes_out: done.bytes_out,
        skipped: done.skipped,
        notes: done.notes,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn globs() {
        assert!(glob("*", "anything.at.all"));
        assert!(glob("*norm*", "model.layers.0.input_layernorm.weight"));
        assert!(glob("lm_head.?eight", "lm_head.weight"));
        assert!(!glob("*.bias", "layer.bias.x"));
        assert!(glob("a*b*c", "aXbYbZc"));
        assert!(!glob("a*b*c", "aXbYbZ"));
        assert!(glob("", ""));
        assert!(!glob("", "x"));
        // Many stars on a long name stay fast.
        assert!(!glob(&"*a".repeat(50), &"a".repeat(40)));
    }

    #[test]
    fn plans() {
        let opts = Options {
            only: vec!["*.weight".into()],
            keep_f32: vec!["*norm*".into()],
            per_tensor_scale: true,
            ..Options::new(PathBuf::new(), None, FloatType::F8E4M3FN)
        };
        let p = opts.plan("l.weight", Some(FloatType::F32), true);
        assert_eq!(p.target, Some(FloatType::F8E4M3FN));
        assert_eq!(p.scale_name.as_deref(), Some("l.weight.scale"));
        assert!(
            opts.plan("l.weight", Some(FloatType::F32), false)
                .scale_name
                .is_none()
        );
        assert_eq!(
            opts.plan("l.bias", Some(FloatType::F32), true).note,
            "not matched by --only"
        );
        let norm = opts.plan("norm.weight", Some(FloatType::BF16), true);
        assert_eq!((norm.target, norm.scaled), (Some(FloatType::F32), false));
        assert_eq!(
            opts.plan("norm.weight", Some(FloatType::F32), true).note,
            "already f32"
        );
        assert!(opts.plan("ids", None, true).target.is_none());
    }

    #[test]
    fn strict_refuses_a_pattern_that_matches_nothing() {
        let kept = |name: &str| TensorReport {
            name: name.into(),
            shape: vec![4],
            from: "F32".into(),
            to: "F32".into(),
            target: None,
            stats: None,
            scale: None,
            note: "kept".into(),
            bytes_in: 16,
            bytes_out: 16,
            quant: None,
            scale_check: None,
        };
        let tensors = [kept("a.norm.weight"), kept("a.bias")];
        let opts = |only: &[&str], keep: &[&str], strict| Options {
            only: only.iter().map(|p| p.to_string()).collect(),
            keep_f32: keep.iter().map(|p| p.to_string()).collect(),
            strict,
            ..Options::new(PathBuf::new(), None, FloatType::BF16)
        };
        let level = Some(Verdict::Fail);
        assert!(!opts(&["a.*"], &["*norm*"], level).refuses(&tensors));
        let typo = opts(&["a.*", "b.*"], &["*nrom*", "*norm*"], level);
        assert_eq!(typo.unmatched_only(&tensors), ["b.*"]);
        assert_eq!(typo.unmatched_keep_f32(&tensors), ["*nrom*"]);
        assert!(typo.refuses(&tensors));
        assert!(opts(&[], &["*nrom*"], level).refuses(&tensors));
        assert!(!opts(&[], &["*nrom*"], None).refuses(&tensors));
        // Another model of the directory: its tensors are selected by their own names.
        let dense = [kept("2_Dense/linear.weight")];
        assert!(
            opts(&["linear.weight"], &[], level)
                .unmatched_only(&dense)
                .is_empty()
        );
        assert!(
            opts(&["2_Dense/*"], &[], level)
                .unmatched_only(&dense)
                .is_empty()
        );
        assert_eq!(
            opts(&["linear.bias"], &[], level).unmatched_only(&dense),
            ["linear.bias"]
        );
    }

    /// A deterministic generator (splitmix64).
    struct Rng(u64);

    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let mut z = self.0;
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            z ^ (z >> 31)
        }
        fn below(&mut self, n: usize) -> usize {
            (self.next() % n.max(1) as u64) as usize
        }
    }

    /// Converts `bytes` as a file (dry run, then for real) and gives whether both failed;
    /// fails the test on a panic, naming the case.
    fn survives(dir: &Path, case: &str, bytes: &[u8], to: FloatType) -> bool {
        let input = dir.join("in.bin");
        std::fs::write(&input, bytes).unwrap();
        let out = dir.join("out.bin");
        let mut results = Vec::new();
        for output in [None, Some(out.clone())] {
            let opts = Options {
                per_tensor_scale: to.is_fp8(),
                ..Options::new(input.clone(), output, to)
            };
            let result = std::panic::catch_unwind(|| convert(&opts));
            match result {
                Ok(r) => results.push(r.is_err()),
                Err(_) => panic!("{case}: panicked"),
            }
        }
        // The real run never leaves a temporary file, and writes OUT only when it succeeds.
        let leftovers: Vec<_> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .filter(|n| n.to_string_lossy().contains(".tmp"))
            .collect();
        assert!(leftovers.is_empty(), "{case}: {leftovers:?}");
        assert_eq!(out.exists(), !results[1], "{case}");
        let _ = std::fs::remove_file(&out);
        results[0] && results[1]
    }

    /// Thousands of truncated and corrupted files, derived deterministically from the Python
    /// fixtures: none panics; every truncation and every lie about the header's length or a
    /// tensor's offsets is an error.
    #[test]
    fn corrupted_files_are_errors_never_panics() {
        let dir = std::env::temp_dir().join(format!("lowp-fuzz-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        // The fixtures are shared with the CLI's tests, which convert the same files end to end.
        let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("../lowp-cli/tests/data");
        let mut rng = Rng(42);
        let mut cases = 0;
        for name in [
            "model_f32.safetensors",
            "mixed.safetensors",
            "c_f32.npy",
            "fortran_f64_be.npy",
            "arrays.npz",
            "arrays_compressed.npz",
        ] {
            let good = std::fs::read(fixtures.join(name)).unwrap();
            let to = [FloatType::BF16, FloatType::F16, FloatType::F8E4M3FN][rng.below(3)];
            let to = if name.ends_with("safetensors") {
                to
            } else {
                FloatType::F16
            };
            // Every truncation is an error.
            for _ in 0..150 {
                let len = rng.below(good.len());
                let case = format!("{name} truncated to {len}");
                assert!(survives(&dir, &case, &good[..len], to), "{case}: accepted");
                cases += 1;
            }
            // Random bytes anywhere (header and body): errors or valid files, never panics.
            for _ in 0..250 {
                let mut bad = good.clone();
                let n = 1 + rng.below(4);
                for _ in 0..n {
                    let at = rng.below(bad.len());
                    bad[at] = rng.next() as u8;
                }
                survives(&dir, &format!("{name} with {n} random bytes"), &bad, to);
                cases += 1;
            }
            if !name.ends_with("safetensors") {
                continue;
            }
            let n = u64::from_le_bytes(good[..8].try_into().unwrap()) as usize;
            let header = std::str::from_utf8(&good[8..8 + n]).unwrap();
            // A header length that lies.
            for _ in 0..100 {
                let lie = match rng.below(3) {
                    0 => rng.next(),
                    1 => rng.below(n) as u64,
                    _ => (n + 1 + rng.below(good.len())) as u64,
                };
                let mut bad = good.clone();
                bad[..8].copy_from_slice(&lie.to_le_bytes());
                let case = format!("{name} with header length {lie}");
                assert!(survives(&dir, &case, &bad, to), "{case}: accepted");
                cases += 1;
            }
            // Offsets and shapes that lie: one number of the header replaced by another.
            let numbers: Vec<(usize, usize)> = header
                .char_indices()
                // Numbers in arrays (shapes and offsets), not digits in names.
                .filter(|&(i, c)| c.is_ascii_digit() && header[..i].ends_with(['[', ',']))
                .map(|(i, _)| {
                    let end = header[i..]
                        .find(|c: char| !c.is_ascii_digit())
                        .map_or(header.len(), |e| i + e);
                    (i, end)
                })
                .collect();
            for _ in 0..300 {
                let (start, end) = numbers[rng.below(numbers.len())];
                let old: u64 = header[start..end].parse().unwrap();
                let new = match rng.below(3) {
                    0 => old + 1 + rng.below(8) as u64,
                    1 => old.saturating_sub(1 + rng.below(8) as u64),
                    _ => rng.next() >> rng.below(64),
                };
                if new == old {
                    continue;
                }
                let text = format!("{}{new}{}", &header[..start], &header[end..]);
                let mut bad = (text.len() as u64).to_le_bytes().to_vec();
                bad.extend(text.as_bytes());
                bad.extend(&good[8 + n..]);
                let case = format!("{name} with {old} at {start} replaced by {new}");
                // A changed dimension of an empty tensor, or a shape whose product happens to
                // stay the same, can be a valid header; an offset cannot.
                let in_offsets =
                    header[..start].rfind("data_offsets") > header[..start].rfind("shape");
                let failed = survives(&dir, &case, &bad, to);
                assert!(failed || !in_offsets, "{case}: accepted");
                cases += 1;
            }
        }
        assert!(cases > 2000, "{cases}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
