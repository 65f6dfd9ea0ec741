//! Checkpoint layouts: the names, dtypes and shapes a loader expects of a block-quantized
//! weight, which tensors it quantizes, and the `quantization_config` that tells it so.
//!
//! A [`Scheme`](crate::quant::Scheme) is numerics (which elements, which scales); a
//! [`Layout`] is a loader's contract. The same MXFP4 bytes are `gate_up_proj_blocks` in
//! transformers' gpt-oss layout and `weight_packed` in compressed-tensors'; the same NVFP4
//! second scale is multiplied in ModelOpt's layout (`weight_scale_2`) and divided by in
//! compressed-tensors' (`weight_global_scale`). Each layout is one module:
//!
//! | layout | loaders | schemes |
//! |---|---|---|
//! | [`transformers`] | transformers' own quantizers (`fp8`, `mxfp8`, `mxfp4`), vLLM | fp8-block, mxfp8, mxfp4 (gpt-oss's experts) |
//! | [`compressed_tensors`] | compressed-tensors (transformers, vLLM), as llm-compressor writes it | fp8-block, fp8-channel, mxfp8, mxfp4, nvfp4 |
//! | [`modelopt`] | vLLM's and TensorRT-LLM's ModelOpt readers | nvfp4 |
//!
//! [`recognise()`] reads every one of them back, and the published spellings they come from.

pub mod compressed_tensors;
mod dispatch;
mod layout;
pub mod modelopt;
mod placement;
pub mod recognise;
pub mod roles;
mod summary;
pub mod transformers;

pub use layout::Layout;
pub use placement::{Part, Placement, Second};
pub use recognise::{Quantized, Scaling, recognise, shape_key};
pub use roles::{ModelInfo, Role};
pub use summary::{Summary, module_of};
