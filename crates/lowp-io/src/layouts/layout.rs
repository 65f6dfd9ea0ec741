//! The loaders' layouts by name.

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
}
