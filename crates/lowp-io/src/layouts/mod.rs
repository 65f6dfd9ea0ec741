//! Checkpoint layouts: the names, dtypes and shapes a loader expects of a block-quantized
//! weight, which tensors it quantizes, and the `quantization_config` that tells it so.
//!
//! A [`Scheme`] is numerics (which elements, which scales); a [`Layout`] is a loader's
//! contract. The same MXFP4 bytes are `gate_up_proj_blocks` in transformers' gpt-oss layout and
//! `weight_packed` in compressed-tensors'; the same NVFP4 second scale is multiplied in
//! ModelOpt's layout (`weight_scale_2`) and divided by in compressed-tensors'
//! (`weight_global_scale`). Each layout is one module:
//!
//! | layout | loaders | schemes |
//! |---|---|---|
//! | [`transformers`] | transformers' own quantizers (`fp8`, `mxfp8`, `mxfp4`), vLLM | fp8-block, mxfp8, mxfp4 (gpt-oss's experts) |
//! | [`compressed_tensors`] | compressed-tensors (transformers, vLLM), as llm-compressor writes it | fp8-block, fp8-channel, mxfp8, mxfp4, nvfp4 |
//! | [`modelopt`] | vLLM's and TensorRT-LLM's ModelOpt readers | nvfp4 |
//!
//! [`recognise()`] reads every one of them back, and the published spellings they come from.

pub mod compressed_tensors;
pub mod modelopt;
pub mod recognise;
pub mod roles;
pub mod transformers;

pub use recognise::{Quantized, Scaling, recognise, shape_key};
pub use roles::{ModelInfo, Role};

use crate::float_type::FloatType;
use crate::quant::{ScaleType, Scheme};
use safetensors::Dtype;
use serde_json::Value;

/// One tensor of an output layout.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Part {
    /// Its name.
    pub name: String,
    /// Its element type.
    pub dtype: Dtype,
    /// Its shape.
    pub shape: Vec<usize>,
}

impl Part {
    /// A part of `name`, `dtype` and `shape`.
    pub fn new(name: impl Into<String>, dtype: Dtype, shape: Vec<usize>) -> Part {
        Part {
            name: name.into(),
            dtype,
            shape,
        }
    }
}

/// How NVFP4's per-tensor second scale is stored.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Second {
    /// ModelOpt's `weight_scale_2`: `x = q * s * scale_2`.
    Multiply,
    /// compressed-tensors' `weight_global_scale`: `x = q * s / global_scale`.
    Divide,
}

/// How a weight quantized in a layout is written: its tensors (element data first, then the
/// scales, then NVFP4's second scale) and how the data relates to the weight.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Placement {
    /// The tensors, in the order data, scales, second scale.
    pub parts: Vec<Part>,
    /// Whether each matrix of the weight is stored transposed (gpt-oss's experts are `[E,
    /// in, out]` in the model and `[E, out, in/32, 16]` in transformers' MXFP4 layout, whose
    /// blocks run along the input).
    pub transposed: bool,
}

/// A loader's layout of a quantized checkpoint.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Layout {
    /// What transformers' own quantizers read: `fp8` (DeepSeek-V3's `weight_scale_inv`),
    /// `mxfp8`, and `mxfp4` for gpt-oss's experts.
    Transformers,
    /// compressed-tensors, as llm-compressor writes it and transformers and vLLM load it.
    CompressedTensors,
    /// NVIDIA ModelOpt's export, as vLLM and TensorRT-LLM read it.
    ModelOpt,
}

impl Layout {
    /// Every layout.
    pub const ALL: [Layout; 3] = [
        Layout::Transformers,
        Layout::CompressedTensors,
        Layout::ModelOpt,
    ];

    /// The name on the command line: `transformers`, `compressed-tensors`, `modelopt`.
    pub fn name(self) -> &'static str {
        match self {
            Layout::Transformers => "transformers",
            Layout::CompressedTensors => "compressed-tensors",
            Layout::ModelOpt => "modelopt",
        }
    }

    /// The layout of a [`Layout::name`], ignoring ASCII case (`compressed_tensors` too).
    ///
    /// ```
    /// use lowp_io::layouts::Layout;
    /// assert_eq!(Layout::parse("compressed_tensors"), Some(Layout::CompressedTensors));
    /// assert_eq!(Layout::parse("ModelOpt"), Some(Layout::ModelOpt));
    /// assert_eq!(Layout::parse("vllm"), None);
    /// ```
    pub fn parse(text: &str) -> Option<Layout> {
        Layout::ALL.into_iter().find(|l| {
            text.eq_ignore_ascii_case(l.name())
                || text.eq_ignore_ascii_case(&l.name().replace('-', "_"))
        })
    }

    /// The layout `lowp convert` writes when none is asked for: transformers' own where its
    /// quantizer reads the scheme for this model (fp8-block, mxfp8, and mxfp4 for gpt-oss),
    /// compressed-tensors otherwise (transformers loads that too, through compressed-tensors).
    pub fn auto(scheme: Scheme, info: &ModelInfo) -> Layout {
        if transformers::supports(scheme, info).is_ok() {
            Layout::Transformers
        } else {
            Layout::CompressedTensors
        }
    }

    /// Whether the layout can hold `scheme` for the model `info` describes; the error says
    /// why not and which layout can.
    pub fn supports(self, scheme: Scheme, info: &ModelInfo) -> Result<(), String> {
        match self {
            Layout::Transformers => transformers::supports(scheme, info),
            Layout::CompressedTensors => compressed_tensors::supports(scheme),
            Layout::ModelOpt => modelopt::supports(scheme),
        }
    }

    /// Whether the layout's loader reads a tensor of `role` quantized in `scheme` (the tensors
    /// `--only` may select).
    pub fn holds(self, scheme: Scheme, role: Role) -> bool {
        match self {
            Layout::Transformers => transformers::holds(scheme, role),
            Layout::CompressedTensors | Layout::ModelOpt => {
                matches!(role, Role::Linear | Role::Head | Role::Router)
            }
        }
    }

    /// Whether a tensor of `role` is quantized when `--only` does not say: the layout's
    /// linear weights (gpt-oss's experts for transformers' MXFP4), never the output head,
    /// embeddings or routers, which loaders keep in high precision.
    pub fn quantizes_by_default(self, scheme: Scheme, role: Role) -> bool {
        self.holds(scheme, role) && matches!(role, Role::Linear | Role::Experts { .. })
    }

    /// Whether a weight of `shape` can be held in `scheme`: the blocks the loader reads must
    /// tile it as it reads them. The error says why not.
    pub fn fits(self, scheme: Scheme, role: Role, shape: &[usize]) -> Result<(), String> {
        match self {
            Layout::Transformers => transformers::fits(scheme, role, shape),
            Layout::CompressedTensors | Layout::ModelOpt => columns_fit(scheme, shape, self),
        }
    }

    /// The tensors a weight `name` of `shape`, stored as `source`, is written as (a weight the
    /// layout [`holds`](Layout::holds) and that [`fits`](Layout::fits)).
    pub fn placement(
        self,
        scheme: Scheme,
        name: &str,
        shape: &[usize],
        source: FloatType,
    ) -> Placement {
        match self {
            Layout::Transformers => transformers::placement(scheme, name, shape),
            Layout::CompressedTensors => {
                compressed_tensors::placement(scheme, name, shape, scale_dtype(source))
            }
            Layout::ModelOpt => modelopt::placement(name, shape),
        }
    }

    /// The type fp8 scales are rounded to for a weight stored as `source`: compressed-tensors
    /// gives a scale the dtype of the model's weights (bf16, f16 or f32), and a loader casts
    /// whatever the file holds to it, so the scales are chosen in that type; the other layouts
    /// store f32.
    pub fn scale_type(self, source: FloatType) -> ScaleType {
        match (self, scale_dtype(source)) {
            (Layout::CompressedTensors, Dtype::BF16) => ScaleType::Bf16,
            (Layout::CompressedTensors, Dtype::F16) => ScaleType::F16,
            _ => ScaleType::F32,
        }
    }

    /// How NVFP4's second scale is stored.
    pub fn second(self) -> Second {
        match self {
            Layout::CompressedTensors => Second::Divide,
            Layout::Transformers | Layout::ModelOpt => Second::Multiply,
        }
    }

    /// The `quantization_config` of a model whose quantized weights `summary` describes.
    pub fn quantization_config(self, summary: &Summary) -> Value {
        match self {
            Layout::Transformers => transformers::config(summary),
            Layout::CompressedTensors => compressed_tensors::config(summary),
            Layout::ModelOpt => modelopt::config(summary),
        }
    }

    /// Files besides `config.json` the loader reads the quantization from (name, contents):
    /// ModelOpt's `hf_quant_config.json`.
    pub fn extra_files(self, summary: &Summary) -> Vec<(&'static str, Value)> {
        match self {
            Layout::ModelOpt => vec![(
                modelopt::HF_QUANT_CONFIG,
                modelopt::hf_quant_config(summary),
            )],
            Layout::Transformers | Layout::CompressedTensors => Vec::new(),
        }
    }
}

/// What a converted model's quantized weights are, for its configuration.
#[derive(Clone, Debug, PartialEq)]
pub struct Summary {
    /// The scheme.
    pub scheme: Scheme,
    /// The layout.
    pub layout: Layout,
    /// The modules left unquantized that a loader of the layout would otherwise look at
    /// (every module with a weight of 2 or more dimensions, `lm_head` always), sorted.
    pub unquantized: Vec<String>,
    /// Whether activations are quantized too (ModelOpt's W4A4, with their input scales).
    pub activations: bool,
}

/// The safetensors dtype of fp8 scales in compressed-tensors' layout for weights stored as
/// `source`: its own dtype when a loader keeps a scale in it, f32 otherwise.
fn scale_dtype(source: FloatType) -> Dtype {
    match source {
        FloatType::BF16 => Dtype::BF16,
        FloatType::F16 => Dtype::F16,
        _ => Dtype::F32,
    }
}

/// compressed-tensors and ModelOpt group quantization: the columns must be whole groups
/// (compressed-tensors refuses a row that is not, vLLM's kernels read whole groups); for
/// fp8-block, whole blocks of columns (rows may end in a partial block).
fn columns_fit(scheme: Scheme, shape: &[usize], layout: Layout) -> Result<(), String> {
    let cols = shape[shape.len() - 1];
    let group = match scheme {
        Scheme::Fp8Channel => return Ok(()),
        Scheme::Fp8Block => 128,
        s => s.block_cols(),
    };
    if shape.len() != 2 {
        return Err(format!(
            "{}-D: {} quantizes linear weights of 2 dimensions",
            shape.len(),
            layout.name()
        ));
    }
    if !cols.is_multiple_of(group) {
        return Err(format!(
            "{cols} columns are not whole groups of {group}, which {} requires",
            layout.name()
        ));
    }
    Ok(())
}

/// The module names of `names`, each without its last component (`.weight`, or a fused
/// expert tensor's name): what the loaders' skip lists name.
pub fn module_of(name: &str) -> &str {
    name.strip_suffix(".weight")
        .or_else(|| name.rsplit_once('.').map(|(m, _)| m))
        .unwrap_or(name)
}

/// The sorted skip list of `modules`, with `lm_head` added: a model whose head is tied to its
/// embedding has no `lm_head` tensor but still an `lm_head` module, which a loader would
/// otherwise take to be quantized.
pub(crate) fn skip_list(modules: &[String]) -> Vec<String> {
    let mut out: Vec<String> = modules.to_vec();
    if !out.iter().any(|m| m == "lm_head") {
        out.push("lm_head".to_string());
    }
    out.sort();
    out.dedup();
    out
}
