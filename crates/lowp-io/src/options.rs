//! What to convert and how: the target, the options of a conversion, and which tensors the
//! name patterns select.

use crate::error::Error;
use crate::float_type::FloatType;
use crate::glob::glob;
use crate::layouts::Layout;
use crate::quant::{ElementRounding, QuantOptions, ScaleSearch, Scheme};
use crate::report::{TensorReport, Verdict};
use std::path::PathBuf;

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
    /// conversion still runs to the end and gives its report, with [`Report::written`](crate::Report::written) false;
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
}

/// An option of a conversion that only some targets take, by the name the library's messages
/// give it: the name of Python's `lowp.convert` keyword (`scale_search`), which a command line
/// spells its own way (`--scale-search`, see [`Options::validate_naming`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Setting {
    /// [`Options::rest`].
    Rest,
    /// [`Options::layout`].
    Layout,
    /// [`Options::activation_amax`].
    ActivationAmax,
    /// [`QuantOptions::rounding`] of [`Options::quant`].
    Rounding,
    /// [`QuantOptions::search`] of [`Options::quant`].
    ScaleSearch,
    /// [`Options::per_tensor_scale`], the per-tensor scaling of FP8 targets.
    Fp8Scale,
}

impl Setting {
    /// Every setting, in the order [`Options::validate`] checks them.
    pub const ALL: [Setting; 6] = [
        Setting::Rest,
        Setting::Layout,
        Setting::ActivationAmax,
        Setting::Rounding,
        Setting::ScaleSearch,
        Setting::Fp8Scale,
    ];

    /// The setting's name in the library's messages: `rest`, `layout`, `activation_amax`,
    /// `rounding`, `scale_search`, `fp8_scale`.
    pub fn name(self) -> &'static str {
        match self {
            Setting::Rest => "rest",
            Setting::Layout => "layout",
            Setting::ActivationAmax => "activation_amax",
            Setting::Rounding => "rounding",
            Setting::ScaleSearch => "scale_search",
            Setting::Fp8Scale => "fp8_scale",
        }
    }
}

impl Options {
    /// Checks that the options go together: [`Options::rest`], [`Options::layout`],
    /// [`Options::activation_amax`], a rounding other than nearest and a scale search other
    /// than the scheme's rule apply to the block-quantized schemes only, and
    /// [`Options::per_tensor_scale`] to the FP8 float types only. The error
    /// ([`Error::Invalid`]) names the first option given where it does not apply (by
    /// [`Setting::name`]), what it applies to and the target:
    ///
    /// ```
    /// use lowp_io::{FloatType, Options};
    ///
    /// let opts = Options {
    ///     rest: Some(FloatType::F16),
    ///     ..Options::new("model.safetensors", None, FloatType::BF16)
    /// };
    /// assert_eq!(
    ///     opts.validate().unwrap_err().to_string(),
    ///     "rest applies to the block-quantized schemes (fp8-block, fp8-channel, mxfp8, mxfp4, \
    ///      nvfp4), not to bf16"
    /// );
    /// ```
    ///
    /// [`convert`](crate::convert) and [`convert_with`](crate::convert_with) call it first.
    pub fn validate(&self) -> Result<(), Error> {
        self.validate_naming(|s| s.name().to_string())
    }

    /// [`Options::validate`], its message naming each option `name(setting)`: a front end's
    /// own spelling of it (`--scale-search` on a command line), the rest of the message the
    /// same.
    pub fn validate_naming(&self, name: impl Fn(Setting) -> String) -> Result<(), Error> {
        match self.misuse() {
            Some((setting, why)) => Err(Error::invalid(format!("{} {why}", name(setting)))),
            None => Ok(()),
        }
    }

    /// The first setting given where it does not apply, and why it does not.
    fn misuse(&self) -> Option<(Setting, String)> {
        let given = |setting: Setting| match setting {
            Setting::Rest => self.rest.is_some(),
            Setting::Layout => self.layout.is_some(),
            Setting::ActivationAmax => self.activation_amax.is_some(),
            Setting::Rounding => self.quant.rounding != ElementRounding::Nearest,
            Setting::ScaleSearch => self.quant.search != ScaleSearch::Spec,
            Setting::Fp8Scale => self.per_tensor_scale,
        };
        let applies = |setting: Setting| match (setting, self.to) {
            (Setting::Fp8Scale, Target::Float(t)) => t.is_fp8(),
            (Setting::Fp8Scale, Target::Scheme(_)) => false,
            (_, target) => matches!(target, Target::Scheme(_)),
        };
        let setting = Setting::ALL
            .into_iter()
            .find(|&s| given(s) && !applies(s))?;
        let why = match setting {
            Setting::Fp8Scale => {
                let fp8: Vec<&str> = FloatType::ALL
                    .into_iter()
                    .filter(|t| t.is_fp8())
                    .map(FloatType::name)
                    .collect();
                format!("applies to {}, not {}", fp8.join(" and "), self.to.name())
            }
            _ => format!(
                "applies to the block-quantized schemes ({}), not to {}",
                Scheme::ALL.map(Scheme::name).join(", "),
                self.to.name()
            ),
        };
        Some((setting, why))
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

#[cfg(test)]
mod tests {
    use super::*;

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

    #[test]
    fn validate_refuses_each_option_where_it_does_not_apply() {
        let schemes = "the block-quantized schemes (fp8-block, fp8-channel, mxfp8, mxfp4, nvfp4)";
        let bf16 = || Options::new(PathBuf::new(), None, FloatType::BF16);
        let quant = |rounding, search| QuantOptions {
            rounding,
            search,
            ..QuantOptions::default()
        };
        let cases = [
            (
                Options {
                    rest: Some(FloatType::F16),
                    ..bf16()
                },
                format!("rest applies to {schemes}, not to bf16"),
            ),
            (
                Options {
                    layout: Some(Layout::ModelOpt),
                    ..bf16()
                },
                format!("layout applies to {schemes}, not to bf16"),
            ),
            (
                Options {
                    activation_amax: Some(PathBuf::from("amax.json")),
                    ..bf16()
                },
                format!("activation_amax applies to {schemes}, not to bf16"),
            ),
            (
                Options {
                    quant: quant(ElementRounding::Stochastic { seed: 1 }, ScaleSearch::Spec),
                    ..bf16()
                },
                format!("rounding applies to {schemes}, not to bf16"),
            ),
            (
                Options {
                    quant: quant(ElementRounding::Nearest, ScaleSearch::Mse),
                    ..bf16()
                },
                format!("scale_search applies to {schemes}, not to bf16"),
            ),
            (
                Options {
                    per_tensor_scale: true,
                    ..bf16()
                },
                "fp8_scale applies to f8e4m3fn and f8e5m2, not bf16".to_string(),
            ),
            (
                Options {
                    per_tensor_scale: true,
                    ..Options::new(PathBuf::new(), None, Target::Scheme(Scheme::Mxfp8))
                },
                "fp8_scale applies to f8e4m3fn and f8e5m2, not mxfp8".to_string(),
            ),
        ];
        for (opts, want) in cases {
            let err = opts.validate().unwrap_err();
            assert!(matches!(err, Error::Invalid(_)), "{err}");
            assert_eq!(err.to_string(), want);
        }
        // A front end's own spelling of the option, the rest of the message the same.
        let flag = |s: Setting| format!("--{}", s.name().replace('_', "-"));
        let stochastic = Options {
            quant: quant(ElementRounding::Stochastic { seed: 1 }, ScaleSearch::Mse),
            ..bf16()
        };
        assert_eq!(
            stochastic.validate_naming(flag).unwrap_err().to_string(),
            format!("--rounding applies to {schemes}, not to bf16")
        );
        // Every option where it applies.
        let scheme = Options {
            rest: Some(FloatType::F16),
            layout: Some(Layout::ModelOpt),
            activation_amax: Some(PathBuf::from("amax.json")),
            quant: quant(ElementRounding::Stochastic { seed: 1 }, ScaleSearch::Mse),
            ..Options::new(PathBuf::new(), None, Target::Scheme(Scheme::Nvfp4))
        };
        assert_eq!(scheme.validate(), Ok(()));
        let fp8 = Options {
            per_tensor_scale: true,
            ..Options::new(PathBuf::new(), None, FloatType::F8E5M2)
        };
        assert_eq!(fp8.validate(), Ok(()));
    }
}
