//! How a quantized weight is written in a layout: its tensors, and how NVFP4's second scale
//! relates to the weight.

use safetensors::Dtype;

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
