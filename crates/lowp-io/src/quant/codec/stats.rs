//! What quantizing cost: the statistics every stage adds to.

/// What quantizing cost, mergeable across chunks and threads ([`QuantStats::merge`]).
///
/// `signal` and `noise` are gathered over the blocks without NaN or infinity; `x̂` is the
/// exactly dequantized value ([`dequantize_f64`](super::dequantize_f64)). Everything is computed in f64 from the exact
/// `x` and `x̂`: for f32 sources `x²` and, short of extreme saturation, `x - x̂` are exact, and
/// only squaring the differences and summing round.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct QuantStats {
    /// Elements quantized.
    pub elements: u64,
    /// `Σ x²`.
    pub signal: f64,
    /// `Σ (x - x̂)²`.
    pub noise: f64,
    /// Blocks quantized (a partial block at a row's end counts as one).
    pub blocks: u64,
    /// Blocks where some element's scaled value `|x / scale|` lay beyond where rounding to
    /// nearest would overflow the element format (above 464 for E4M3, from 7 up for E2M1), so
    /// saturation to ±MAX changed it. Judged by nearest rounding whatever
    /// [`QuantOptions::rounding`](super::QuantOptions::rounding) is, and only for blocks without NaN or infinity.
    pub clipped_blocks: u64,
    /// Elements that were NaN or ±infinity.
    pub nonfinite: u64,
    /// The largest finite `|x|` (0 when there is none).
    pub amax: f64,
    /// Elements flushed to zero: a non-zero `x` whose element is ±0 (subnormal inputs
    /// included). Counted, as `signal` and `noise` are, only in blocks without NaN or infinity.
    pub flushed: u64,
    /// Elements saturated beyond the element format's top binade: `|x / scale|` at least
    /// `2^(emax + 1)` (512 for E4M3, 8 for E2M1), stored as ±MAX, so that saturation took
    /// more than an eighth (E4M3) or a quarter (E2M1) of the value. The schemes' formulas keep
    /// a block's elements below that bound (OCP MX's shared exponent clips only within the top
    /// binade, which [`QuantStats::clipped_blocks`] counts) unless the scale could not be
    /// chosen: clamped to the range of its own type (an f64 amax beyond what an f32 or E8M0
    /// scale reaches), or an nvfp4 block scale rounded among E4M3's subnormals, far below the
    /// tensor's amax. [`ScaleSearch::Mse`](super::ScaleSearch::Mse) may pass it where that lowers a block's squared
    /// error. Counted only in blocks without NaN or infinity.
    pub saturated: u64,
}

impl QuantStats {
    /// Adds `other`'s counts and sums to these, and keeps the larger amax.
    pub fn merge(&mut self, other: &QuantStats) {
        self.elements += other.elements;
        self.signal += other.signal;
        self.noise += other.noise;
        self.blocks += other.blocks;
        self.clipped_blocks += other.clipped_blocks;
        self.nonfinite += other.nonfinite;
        self.amax = self.amax.max(other.amax);
        self.flushed += other.flushed;
        self.saturated += other.saturated;
    }

    /// Signal-to-quantization-noise ratio in decibels, `10 log10(signal / noise)`: +infinity
    /// when the quantization was exact (`noise` is 0, an all-zero or empty chunk included),
    /// NaN when there were NaN or infinite inputs (the figure would describe only part of the
    /// tensor).
    pub fn sqnr_db(&self) -> f64 {
        if self.nonfinite > 0 {
            f64::NAN
        } else if self.noise == 0.0 {
            f64::INFINITY
        } else {
            10.0 * (self.signal / self.noise).log10()
        }
    }

    /// Relative Frobenius error `sqrt(noise / signal)` = ‖x - x̂‖ / ‖x‖: 0 when the
    /// quantization was exact, NaN when there were NaN or infinite inputs.
    pub fn rel_frobenius(&self) -> f64 {
        if self.nonfinite > 0 {
            f64::NAN
        } else if self.noise == 0.0 {
            0.0
        } else {
            (self.noise / self.signal).sqrt()
        }
    }

    /// The share of blocks that clipped, `clipped_blocks / blocks` (0 with no blocks).
    pub fn clipped_share(&self) -> f64 {
        if self.blocks == 0 {
            0.0
        } else {
            self.clipped_blocks as f64 / self.blocks as f64
        }
    }
}
