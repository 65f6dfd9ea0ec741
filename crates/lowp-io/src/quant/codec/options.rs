//! How a chunk is quantized: element rounding, scale search and the type of fp8 scales.

/// How elements are rounded.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ElementRounding {
    /// To nearest, ties to even (saturating to the element format's largest finite value).
    #[default]
    Nearest,
    /// Stochastically, as lowp's stochastic conversions round (see [`lowp::Rounding`]): element
    /// `i` of the whole tensor uses [`lowp::bulk::random_bits`]`(seed, i)`, so the result does
    /// not depend on how the tensor is cut into chunks. Saturating, like `Nearest`.
    Stochastic {
        /// The seed of the random bits.
        seed: u64,
    },
}

impl ElementRounding {
    /// The names of the roundings, as [`ElementRounding::name`] gives them.
    pub const NAMES: [&'static str; 2] = ["nearest", "stochastic"];

    /// The rounding's name: `nearest` or `stochastic` (the seed is not part of it).
    pub fn name(self) -> &'static str {
        match self {
            ElementRounding::Nearest => "nearest",
            ElementRounding::Stochastic { .. } => "stochastic",
        }
    }

    /// The rounding of a [`name`](ElementRounding::name), stochastic rounding taking the
    /// random bits of `seed`; `None` for any other name.
    ///
    /// ```
    /// use lowp_io::quant::ElementRounding;
    /// assert_eq!(ElementRounding::parse("nearest", 7), Some(ElementRounding::Nearest));
    /// assert_eq!(
    ///     ElementRounding::parse("stochastic", 7),
    ///     Some(ElementRounding::Stochastic { seed: 7 })
    /// );
    /// assert_eq!(ElementRounding::parse("up", 7), None);
    /// ```
    pub fn parse(name: &str, seed: u64) -> Option<ElementRounding> {
        match name {
            "nearest" => Some(ElementRounding::Nearest),
            "stochastic" => Some(ElementRounding::Stochastic { seed }),
            _ => None,
        }
    }
}

/// How each block's scale is chosen.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ScaleSearch {
    /// The scheme's formula (see [`Scheme`](crate::quant::Scheme) and [`quantize`](super::quantize)).
    #[default]
    Spec,
    /// Per block, the candidate scale whose nearest-rounded elements give the least squared
    /// error `Σ(x - x̂)²`, the formula's own scale winning ties (so a block's error is never
    /// larger than with `Spec`, up to the rounding of the f64 sums). Candidates:
    ///
    /// * MX: the formula's exponent `E`, `E + 1` and `E - 1`, where E8M0 holds them;
    /// * nvfp4: the formula's E4M3 scale and the E4M3 values up to 3 steps above and below it
    ///   (non-negative and finite; a zero scale zeroes the block);
    /// * fp8-block: `f32(amax / 448 * f)` for `f` = 1 (the formula), 0.99, 0.98, ..., 0.90:
    ///   finer steps for all but the few largest elements of the block, which saturate.
    ///
    /// Blocks whose amax is zero and blocks with NaN or infinity keep the formula's scale.
    /// With [`ElementRounding::Stochastic`] the scale is chosen by the nearest-rounding error,
    /// then the elements are rounded stochastically.
    Mse,
}

impl ScaleSearch {
    /// Every way of choosing scales.
    pub const ALL: [ScaleSearch; 2] = [ScaleSearch::Spec, ScaleSearch::Mse];

    /// The name of the search: `spec` or `mse`.
    pub fn name(self) -> &'static str {
        match self {
            ScaleSearch::Spec => "spec",
            ScaleSearch::Mse => "mse",
        }
    }

    /// The search of a [`name`](ScaleSearch::name); `None` for any other name.
    ///
    /// ```
    /// use lowp_io::quant::ScaleSearch;
    /// assert_eq!(ScaleSearch::parse("mse"), Some(ScaleSearch::Mse));
    /// assert_eq!(ScaleSearch::parse("MSE"), None);
    /// ```
    pub fn parse(name: &str) -> Option<ScaleSearch> {
        ScaleSearch::ALL.into_iter().find(|s| s.name() == name)
    }
}

/// The float type that fp8-block's and fp8-channel's scales are rounded to.
///
/// The scale bytes [`quantize`](super::quantize) writes and [`dequantize`](super::dequantize) reads stay little-endian f32 in
/// every case; with `Bf16` or `F16` each of those f32s holds a value of that type, so a layout
/// that stores the scales in it (compressed-tensors gives a scale the dtype of the model's
/// weights, and a loader casts whatever the file holds to that dtype) converts them exactly.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ScaleType {
    /// f32 (DeepSeek-V3, transformers' fine-grained FP8).
    #[default]
    F32,
    /// bfloat16.
    Bf16,
    /// IEEE half precision.
    F16,
}

/// How a chunk is quantized: element rounding, scale choice and the type of fp8 scales. The
/// default is the schemes' own: nearest even, formula scales, f32.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct QuantOptions {
    /// How elements round.
    pub rounding: ElementRounding,
    /// How block scales are chosen.
    pub search: ScaleSearch,
    /// The type fp8-block's and fp8-channel's scales are rounded to (the other schemes'
    /// scales have their own formats).
    pub scale_type: ScaleType,
}
