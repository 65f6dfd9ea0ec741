//! What each layout asks of a weight and writes for it: a dispatch to the layout's module.

use super::layout::Layout;
use super::placement::{Placement, Second};
use super::roles::{ModelInfo, Role};
use super::summary::Summary;
use super::{compressed_tensors, modelopt, transformers};
use crate::float_type::FloatType;
use crate::quant::{ScaleType, Scheme};
use safetensors::Dtype;
use serde_json::Value;

impl Layout {
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
