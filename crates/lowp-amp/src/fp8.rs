//! FP8 with per-tensor scales: Transformer Engine's delayed scaling.
//!
//! E4M3 spans 2^-9 to 448 and E5M2 2^-16 to 57344: far too little range to hold a tensor as
//! it comes. So each tensor is multiplied by a scale before it is rounded to FP8 (saturating,
//! as TE's casts do), and the matrix product divides the scales back out. *Delayed* scaling
//! takes the scale from the amax (largest magnitude) that the same tensor slot had in recent
//! iterations, so the cast needs one pass over the data, not two:
//!
//! * every cast records the amax of its (unscaled) input into the first entry of the slot's
//!   history, the one for the current iteration ([`ScalingMeta::quantize`]);
//! * after the iteration, [`ScalingMeta::update`] reduces the history (`max` over all of its
//!   `amax_history_len` entries, or the `most_recent` one) to an amax, sets
//!   `scale = fp8_max / amax / 2^margin` (keeping the previous scale when that amax is 0 or
//!   not finite), and rolls the history by one, clearing the entry for the next iteration.
//!
//! This is TE's `amax_and_scale_update` kernel step for step. The first iteration casts with
//! the initial scale 1, knowing nothing yet.
//!
//! The "hybrid" recipe ([`Fp8Format::Hybrid`], TE's default) casts forward tensors
//! (activations, weights) to E4M3, which has the precision, and gradients to E5M2, which has
//! the range.
//!
//! The matrix products are emulated exactly as an FP8 tensor core computes them: the FP8
//! operands are widened (exactly) to f32, multiplied (products of two FP8 values are exact in
//! f32) and accumulated in f32, and the result is multiplied by both inverse scales
//! ([`fp8_matmul`]).

use lowp_tensor::{DType, Error, Result, Tensor};
use serde::{Deserialize, Serialize};

/// Which FP8 formats the recipe uses (TE's `Format`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Fp8Format {
    /// E4M3 for every tensor.
    E4M3,
    /// E5M2 for every tensor.
    E5M2,
    /// E4M3 forward (activations, weights), E5M2 for gradients.
    Hybrid,
}

/// How the history is reduced to the amax a scale is computed from (TE's
/// `amax_compute_algo`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AmaxComputeAlgo {
    /// The largest amax in the history window.
    Max,
    /// The amax of the iteration just finished.
    MostRecent,
}

/// TE's `DelayedScaling` recipe. [`Default`] is TE's: margin 0, hybrid, a history of 1024,
/// `max`.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct DelayedScaling {
    /// Scales are divided by 2^margin, leaving that many binades of headroom above the amax.
    pub margin: i32,
    /// The formats.
    pub fp8_format: Fp8Format,
    /// Iterations of amax kept per tensor slot (at least 1).
    pub amax_history_len: usize,
    /// How the history is reduced.
    pub amax_compute_algo: AmaxComputeAlgo,
}

impl Default for DelayedScaling {
    fn default() -> Self {
        DelayedScaling {
            margin: 0,
            fp8_format: Fp8Format::Hybrid,
            amax_history_len: 1024,
            amax_compute_algo: AmaxComputeAlgo::Max,
        }
    }
}

impl DelayedScaling {
    /// The dtype of forward tensors: E4M3 (OCP's `f8e4m3fn`) unless the format is E5M2.
    pub fn forward_dtype(&self) -> DType {
        match self.fp8_format {
            Fp8Format::E5M2 => DType::F8E5M2,
            Fp8Format::E4M3 | Fp8Format::Hybrid => DType::F8E4M3FN,
        }
    }

    /// The dtype of gradients: E5M2 unless the format is E4M3.
    pub fn backward_dtype(&self) -> DType {
        match self.fp8_format {
            Fp8Format::E4M3 => DType::F8E4M3FN,
            Fp8Format::E5M2 | Fp8Format::Hybrid => DType::F8E5M2,
        }
    }

    /// The scale for a slot whose history reduces to `amax`: `fp8_max / amax / 2^margin`,
    /// or `previous` when `amax` is 0 or not finite (TE's rule; the division by `2^margin`
    /// is folded into `fp8_max` first, as TE's `scaled_max`).
    pub fn compute_scale(&self, amax: f32, fp8_max: f32, previous: f32) -> f32 {
        let scaled_max = fp8_max * 2f32.powi(-self.margin);
        if amax.is_finite() && amax > 0.0 {
            scaled_max / amax
        } else {
            previous
        }
    }

    /// Checks the recipe.
    pub fn validate(&self) -> Result<()> {
        if self.amax_history_len == 0 {
            return Err(Error::Argument {
                op: "DelayedScaling",
                message: "amax_history_len must be at least 1".into(),
            });
        }
        Ok(())
    }
}

/// The largest finite value of a float dtype (448 for E4M3, 57344 for E5M2).
pub fn dtype_max(dtype: DType) -> Result<f32> {
    let inf = Tensor::from_vec(vec![f32::INFINITY], &[1])?;
    Ok(inf.cast_saturating(dtype)?.item()? as f32)
}

/// The largest magnitude in a tensor, as an f32 (NaN if it holds a NaN; 0 when empty).
pub fn amax(x: &Tensor) -> Result<f32> {
    if x.numel() == 0 {
        return Ok(0.0);
    }
    Ok(x.abs()?.max(None)?.item()? as f32)
}

/// One tensor slot's FP8 state: its dtype, scale and amax history (TE's `fp8_meta` entry).
#[derive(Clone, Debug, PartialEq)]
pub struct ScalingMeta {
    dtype: DType,
    fp8_max: f32,
    scale: f32,
    /// `history[0]` is the current iteration's amax, then the previous iterations', newest
    /// first.
    history: Vec<f32>,
}

impl ScalingMeta {
    /// A slot cast to `dtype`, with scale 1 and an empty history of `history_len` entries.
    pub fn new(dtype: DType, history_len: usize) -> Result<ScalingMeta> {
        if dtype.format().is_none() {
            return Err(Error::Argument {
                op: "ScalingMeta",
                message: format!("{dtype} is not a lowp float format"),
            });
        }
        Ok(ScalingMeta {
            dtype,
            fp8_max: dtype_max(dtype)?,
            scale: 1.0,
            history: vec![0.0; history_len.max(1)],
        })
    }

    /// The dtype tensors of this slot are cast to.
    pub fn dtype(&self) -> DType {
        self.dtype
    }

    /// The current scale (the next cast multiplies by it).
    pub fn scale(&self) -> f32 {
        self.scale
    }

    /// The amax history, the current iteration first.
    pub fn history(&self) -> &[f32] {
        &self.history
    }

    /// Records an amax for the current iteration (the largest recorded counts).
    pub fn record(&mut self, amax: f32) {
        // NaN compares false, so a NaN amax is kept and then ignored by the update, as in TE.
        if amax.is_nan() || amax > self.history[0] {
            self.history[0] = amax;
        }
    }

    /// Ends the iteration: the new scale from the history, then the history rolled by one
    /// (the oldest entry dropped, a cleared entry for the next iteration in front).
    pub fn update(&mut self, recipe: &DelayedScaling) {
        let amax = match recipe.amax_compute_algo {
            AmaxComputeAlgo::MostRecent => self.history[0],
            AmaxComputeAlgo::Max => self.history.iter().copied().fold(0.0, f32::max),
        };
        self.scale = recipe.compute_scale(amax, self.fp8_max, self.scale);
        self.history.rotate_right(1);
        self.history[0] = 0.0;
    }

    /// Casts `x` to the slot's dtype with the current scale (saturating), recording its amax.
    pub fn quantize(&mut self, x: &Tensor) -> Result<Fp8Tensor> {
        self.record(amax(x)?);
        self.quantize_frozen(x)
    }

    /// [`ScalingMeta::quantize`] without recording (for evaluation, which should not move
    /// the scales training uses).
    pub fn quantize_frozen(&self, x: &Tensor) -> Result<Fp8Tensor> {
        let scaled = x.cast(DType::F32)?.mul(&Tensor::scalar(self.scale))?;
        Ok(Fp8Tensor {
            data: scaled.cast_saturating(self.dtype)?,
            scale_inv: 1.0 / self.scale,
        })
    }
}

/// A tensor in FP8 with its inverse scale: it stands for `data * scale_inv`.
#[derive(Clone, Debug, PartialEq)]
pub struct Fp8Tensor {
    /// The scaled values, in an FP8 dtype.
    pub data: Tensor,
    /// What the values are multiplied by to restore the tensor (`1 / scale`).
    pub scale_inv: f32,
}

impl Fp8Tensor {
    /// The tensor it stands for, in f32.
    pub fn dequantize(&self) -> Result<Tensor> {
        self.data
            .cast(DType::F32)?
            .mul(&Tensor::scalar(self.scale_inv))
    }
}

/// The product of two FP8 tensors as an FP8 tensor core gives it: `a.data x b.data` with
/// exact products and f32 accumulation, times `a.scale_inv * b.scale_inv`, in f32. With
/// `transpose_a`/`transpose_b` the operand's last two axes are swapped first (the backward
/// products need `x^T dy` and `dy w^T`).
pub fn fp8_matmul(
    a: &Fp8Tensor,
    transpose_a: bool,
    b: &Fp8Tensor,
    transpose_b: bool,
) -> Result<Tensor> {
    let wide = |t: &Fp8Tensor, tr: bool| -> Result<Tensor> {
        let w = t.data.cast(DType::F32)?;
        if tr { w.transpose() } else { Ok(w) }
    };
    let product = wide(a, transpose_a)?.matmul(&wide(b, transpose_b)?)?;
    product.mul(&Tensor::scalar(a.scale_inv * b.scale_inv))
}
