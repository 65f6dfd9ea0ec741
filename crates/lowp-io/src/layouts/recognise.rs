//! Quantized weights recognised in a model being read, in every layout lowp writes and the
//! published spellings they come from.
//!
//! | spelling | tensors of a weight `W` | read as |
//! |---|---|---|
//! | DeepSeek-V3, transformers `fp8` | `W` F8_E4M3, `W_scale_inv` F32/BF16/F16 `[..., ⌈R/128⌉, ⌈C/128⌉]` | fp8-block |
//! | transformers `mxfp8` | `W` F8_E4M3, `W_scale_inv` U8/F8_E8M0 `[..., R, ⌈C/32⌉]` | mxfp8 |
//! | gpt-oss (original) | `W.blocks` U8 `[..., R, C/32, 16]`, `W.scales` U8 `[..., R, C/32]` | mxfp4 |
//! | gpt-oss (transformers) | `P_blocks` U8 `[E, out, in/32, 16]`, `P_scales` U8 `[E, out, in/32]` | mxfp4, `P` read back as `[E, in, out]` |
//! | ModelOpt | `W` U8 `[..., R, C/2]`, `W_scale` F8_E4M3 `[..., R, C/16]`, `W_scale_2` F32 (`M.input_scale` dropped) | nvfp4, `x = q * s * scale_2` |
//! | compressed-tensors | `W_packed` U8 `[R, C/2]`, `W_scale` F8_E4M3 `[R, C/16]`, `W_global_scale` F32 | nvfp4, `x = q * s / global_scale` |
//! | compressed-tensors | `W_packed` U8 `[R, C/2]`, `W_scale` U8 `[R, C/32]` | mxfp4 |
//! | compressed-tensors | `W` F8_E4M3, `W_scale` float `[R, 1]` | fp8-channel |
//! | compressed-tensors | `W` F8_E4M3, `W_scale` float `[⌈R/128⌉, ⌈C/128⌉]` | fp8-block |
//! | compressed-tensors, lowp | `W` F8_E4M3, `W_scale` U8 `[..., R, ⌈C/32⌉]` | mxfp8 |
//! | ModelOpt, compressed-tensors, lowp | `W` F8, `W_scale` or `W.scale`, one float `[]` or `[1]` | FP8 per tensor |
//!
//! `_blocks` is also a common name outside MXFP4, so only U8 of shape `[..., rows, blocks,
//! 16]` counts. The dtypes and shapes of a group are checked against each other: a `.blocks`
//! without its `.scales`, a scale grid of the wrong shape or packed data of the wrong length is
//! an error naming both tensors. An FP4 weight whose columns were padded to whole blocks gets
//! its shape back from the safetensors `__metadata__` key `lowp.shape.W` (a JSON list), which
//! earlier lowp outputs wrote; without it the padded shape is what comes back.

use super::placement::Second;
use crate::error::Error;
use crate::model::{Model, TensorRef};
use crate::quant::Scheme;
use safetensors::Dtype;
use std::collections::HashMap;

/// The metadata key holding a padded weight's original shape.
pub fn shape_key(name: &str) -> String {
    format!("lowp.shape.{name}")
}

/// How a stored weight is scaled.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scaling {
    /// One of the block-scaled schemes.
    Blocks(Scheme),
    /// FP8 elements times one float scale for the whole tensor.
    PerTensor,
}

impl Scaling {
    /// The name in reports.
    pub fn name(self) -> &'static str {
        match self {
            Scaling::Blocks(s) => s.name(),
            Scaling::PerTensor => "fp8 per-tensor",
        }
    }
}

/// A quantized weight found in a model: the tensors that store it and what it is.
#[derive(Clone, Debug)]
pub struct Quantized {
    /// How it is stored.
    pub scaling: Scaling,
    /// The weight's name in the model (`W` of `W_packed`, `P` of `P_blocks`).
    pub name: String,
    /// The weight's shape in the model (padding removed when the metadata records it;
    /// gpt-oss's transposed experts as `[E, in, out]`).
    pub shape: Vec<usize>,
    /// The element data.
    pub data: TensorRef,
    /// The scales (block scales, or the per-tensor scale).
    pub scales: TensorRef,
    /// NVFP4's per-tensor second scale.
    pub scale_2: Option<TensorRef>,
    /// Whether the second scale multiplies (ModelOpt) or divides (compressed-tensors).
    pub second: Second,
    /// Whether each matrix is stored transposed (`[E, out, in/32, 16]` for `[E, in, out]`).
    pub transposed: bool,
    /// Tensors of the group that decoding drops: ModelOpt's activation scale `M.input_scale`,
    /// which means nothing to a weight stored in a float type.
    pub dropped: Vec<TensorRef>,
}

impl Quantized {
    /// Every tensor of the group.
    pub fn tensors(&self) -> Vec<TensorRef> {
        [Some(self.data), Some(self.scales), self.scale_2]
            .into_iter()
            .flatten()
            .chain(self.dropped.iter().copied())
            .collect()
    }
}

/// Finds every quantized weight of `model`. A tensor belongs to at most one group; the
/// groups' tensors are consumed (the caller writes the weight in their place).
pub fn recognise(model: &Model) -> Result<Vec<Quantized>, Error> {
    let refs = model.tensors();
    let by_name: HashMap<&str, TensorRef> = refs
        .iter()
        .map(|&r| (model.entry(r).name.as_str(), r))
        .collect();
    let metadata = model.metadata().unwrap_or_default();
    let reader = Reader {
        model,
        by_name: &by_name,
        metadata: &metadata,
    };
    let mut found = Vec::new();
    for &r in &refs {
        if let Some(q) = reader.group(r)? {
            found.push(q);
        }
    }
    Ok(found)
}

/// What recognising a group looks at.
struct Reader<'a> {
    model: &'a Model,
    by_name: &'a HashMap<&'a str, TensorRef>,
    metadata: &'a HashMap<String, String>,
}

/// A tensor of the model: where it is, its dtype and shape.
struct Found<'a> {
    r: TensorRef,
    name: String,
    dtype: Dtype,
    shape: &'a [usize],
}

/// Whether `dtype` holds E8M0 bytes.
fn is_e8m0(dtype: Dtype) -> bool {
    matches!(dtype, Dtype::U8 | Dtype::F8_E8M0)
}

/// Whether `dtype` is a float type a scale is stored in.
fn is_float_scale(dtype: Dtype) -> bool {
    matches!(dtype, Dtype::F32 | Dtype::BF16 | Dtype::F16)
}

/// `shape` with its last dimension replaced by `last`.
fn with_last(shape: &[usize], last: &[usize]) -> Vec<usize> {
    shape[..shape.len() - 1]
        .iter()
        .chain(last)
        .copied()
        .collect()
}

/// The scale grid of fp8-block for data of `shape` (at least 2-D).
fn block_grid(shape: &[usize]) -> Vec<usize> {
    let n = shape.len();
    shape[..n - 2]
        .iter()
        .copied()
        .chain([shape[n - 2].div_ceil(128), shape[n - 1].div_ceil(128)])
        .collect()
}

impl<'a> Reader<'a> {
    /// The tensor called `name`, if the model has one.
    fn find(&self, name: &str) -> Option<Found<'a>> {
        self.by_name.get(name).map(|&r| {
            let e = self.model.entry(r);
            Found {
                r,
                name: name.to_string(),
                dtype: e.dtype,
                shape: &e.shape,
            }
        })
    }

    /// The group the tensor `r` heads, if it heads one: `W.blocks`/`P_blocks`, `W_packed`, or
    /// `W` with a `W_scale_inv`, `W_scale_2`, `W_scale` or `W.scale`.
    fn group(&self, r: TensorRef) -> Result<Option<Quantized>, Error> {
        let e = self.model.entry(r);
        let t = Found {
            r,
            name: e.name.clone(),
            dtype: e.dtype,
            shape: &e.shape,
        };
        let name = t.name.as_str();
        let looks_packed =
            t.dtype == Dtype::U8 && t.shape.len() >= 3 && t.shape.last() == Some(&16);
        if let Some(base) = name.strip_suffix(".blocks") {
            return self.mxfp4_blocks(&t, base, ".scales", false).map(Some);
        }
        if let Some(base) = name.strip_suffix("_blocks").filter(|_| looks_packed) {
            // transformers' spelling: gpt-oss's experts, stored [E, out, in/32, 16].
            let transposed = t.shape.len() >= 4;
            return self.mxfp4_blocks(&t, base, "_scales", transposed).map(Some);
        }
        if let Some(base) = name.strip_suffix("_packed")
            && t.dtype == Dtype::U8
            && let Some(scale) = self.find(&format!("{base}_scale"))
        {
            return self.packed(&t, base, scale).map(Some);
        }
        if let Some(inv) = self.find(&format!("{name}_scale_inv")) {
            return self.fp8_scaled(&t, inv).map(Some);
        }
        if let Some(second) = self.find(&format!("{name}_scale_2")) {
            return self.modelopt_nvfp4(&t, second).map(Some);
        }
        if !matches!(t.dtype, Dtype::F8_E4M3 | Dtype::F8_E5M2) {
            return Ok(None);
        }
        for scale_name in [format!("{name}_scale"), format!("{name}.scale")] {
            if let Some(scale) = self.find(&scale_name) {
                return self.fp8_scaled(&t, scale).map(Some);
            }
        }
        Ok(None)
    }

    /// An error about the tensors `a` and `b`.
    fn bad(a: &str, b: &str, why: String) -> Error {
        Error::file(format!("tensors '{a}' and '{b}': {why}"))
    }

    /// A group of `t` and its scale tensor.
    fn quantized(
        &self,
        t: &Found<'_>,
        scale: &Found<'_>,
        scaling: Scaling,
        name: &str,
    ) -> Quantized {
        Quantized {
            scaling,
            name: name.to_string(),
            shape: t.shape.to_vec(),
            data: t.r,
            scales: scale.r,
            scale_2: None,
            second: Second::Multiply,
            transposed: false,
            dropped: self.input_scale(name),
        }
    }

    /// ModelOpt's activation scale of the weight `name` (`M.input_scale` of `M.weight`).
    fn input_scale(&self, name: &str) -> Vec<TensorRef> {
        name.strip_suffix(".weight")
            .and_then(|m| self.find(&format!("{m}.input_scale")))
            .filter(|s| is_float_scale(s.dtype) && s.shape.iter().product::<usize>() == 1)
            .map(|s| s.r)
            .into_iter()
            .collect()
    }

    /// MXFP4 blocks `t` (`BASE.blocks` or `BASE_blocks`) and their scales.
    fn mxfp4_blocks(
        &self,
        t: &Found<'_>,
        base: &str,
        scales_suffix: &str,
        transposed: bool,
    ) -> Result<Quantized, Error> {
        let name = &t.name;
        let scales_name = format!("{base}{scales_suffix}");
        let Some(scales) = self.find(&scales_name) else {
            return Err(Error::file(format!(
                "tensor '{name}' holds MXFP4 blocks but '{scales_name}', their scales, is missing"
            )));
        };
        if t.dtype != Dtype::U8 || t.shape.len() < 3 || t.shape[t.shape.len() - 1] != 16 {
            return Err(Self::bad(
                name,
                &scales_name,
                format!(
                    "MXFP4 blocks must be U8 of shape [..., rows, blocks, 16], not {} {:?}",
                    t.dtype, t.shape
                ),
            ));
        }
        check_e8m0(&scales_name, scales.dtype, name)?;
        let stored = &t.shape[..t.shape.len() - 1];
        if scales.shape != stored {
            return Err(Self::bad(
                name,
                &scales_name,
                format!(
                    "scales of shape {:?} do not match blocks of shape {:?} (expected {stored:?})",
                    scales.shape, t.shape
                ),
            ));
        }
        let padded = stored[stored.len() - 1] * 32;
        let mut shape = shape_of_base(stored, padded, 32, base, self.metadata)?;
        if transposed {
            let n = shape.len();
            shape.swap(n - 2, n - 1);
        }
        Ok(Quantized {
            transposed,
            shape,
            ..self.quantized(t, &scales, Scaling::Blocks(Scheme::Mxfp4), base)
        })
    }

    /// compressed-tensors' packed FP4: `BASE_packed` `t` with `BASE_scale`, E4M3 scales and a
    /// `BASE_global_scale` (NVFP4) or E8M0 scales (MXFP4).
    fn packed(&self, t: &Found<'_>, base: &str, scale: Found<'_>) -> Result<Quantized, Error> {
        let name = &t.name;
        if t.shape.len() < 2 {
            return Err(Self::bad(
                name,
                &scale.name,
                format!(
                    "packed FP4 data must have 2 dimensions or more, not {:?}",
                    t.shape
                ),
            ));
        }
        let cols = t.shape[t.shape.len() - 1] * 2;
        let shape = with_last(t.shape, &[cols]);
        if scale.dtype == Dtype::F8_E4M3 {
            let global_name = format!("{base}_global_scale");
            let Some(global) = self.find(&global_name) else {
                return Err(Self::bad(
                    name,
                    &scale.name,
                    format!("NVFP4 data without its global scale '{global_name}'"),
                ));
            };
            let want = with_last(t.shape, &[cols.div_ceil(16)]);
            if !cols.is_multiple_of(16) || scale.shape != want {
                return Err(Self::bad(
                    name,
                    &scale.name,
                    format!(
                        "NVFP4 scales must have shape {want:?} (one per 16 of {cols} columns), \
                         not {:?}",
                        scale.shape
                    ),
                ));
            }
            check_one_f32(&global, name)?;
            return Ok(Quantized {
                shape,
                scale_2: Some(global.r),
                second: Second::Divide,
                ..self.quantized(t, &scale, Scaling::Blocks(Scheme::Nvfp4), base)
            });
        }
        check_e8m0(&scale.name, scale.dtype, name)?;
        let want = with_last(t.shape, &[cols.div_ceil(32)]);
        if !cols.is_multiple_of(32) || scale.shape != want {
            return Err(Self::bad(
                name,
                &scale.name,
                format!(
                    "MXFP4 scales must have shape {want:?} (one per 32 of {cols} columns), not \
                     {:?}",
                    scale.shape
                ),
            ));
        }
        Ok(Quantized {
            shape,
            ..self.quantized(t, &scale, Scaling::Blocks(Scheme::Mxfp4), base)
        })
    }

    /// FP8 data `t` with one scale tensor: per tensor (one float), per channel (`[..., R,
    /// 1]`), per 128 x 128 block (the grid), or MXFP8 (E8M0 `[..., R, ⌈C/32⌉]`).
    fn fp8_scaled(&self, t: &Found<'_>, scale: Found<'_>) -> Result<Quantized, Error> {
        let name = t.name.as_str();
        if !matches!(t.dtype, Dtype::F8_E4M3 | Dtype::F8_E5M2) {
            return Err(Self::bad(
                name,
                &scale.name,
                format!(
                    "scaled FP8 data must be F8_E4M3 or F8_E5M2, not {}",
                    t.dtype
                ),
            ));
        }
        let n = t.shape.len();
        // One scale for the whole tensor: ModelOpt's `[]`, compressed-tensors' `[1]`.
        if is_float_scale(scale.dtype)
            && scale.shape.len() <= 1
            && scale.shape.iter().product::<usize>() == 1
        {
            return Ok(self.quantized(t, &scale, Scaling::PerTensor, name));
        }
        let e4m3 = t.dtype == Dtype::F8_E4M3 && n >= 2;
        if e4m3 && is_float_scale(scale.dtype) {
            if scale.shape == with_last(t.shape, &[1]) {
                let scaling = Scaling::Blocks(Scheme::Fp8Channel);
                return Ok(self.quantized(t, &scale, scaling, name));
            }
            if scale.shape == block_grid(t.shape) {
                return Ok(self.quantized(t, &scale, Scaling::Blocks(Scheme::Fp8Block), name));
            }
        }
        if e4m3 && is_e8m0(scale.dtype) {
            let want = with_last(t.shape, &[t.shape[n - 1].div_ceil(32)]);
            if scale.shape == want {
                return Ok(self.quantized(t, &scale, Scaling::Blocks(Scheme::Mxfp8), name));
            }
            return Err(Self::bad(
                name,
                &scale.name,
                format!(
                    "MXFP8 scales must be of shape {want:?} (one per 32 elements of a row), not \
                     {:?}",
                    scale.shape
                ),
            ));
        }
        Err(Self::bad(
            name,
            &scale.name,
            format!(
                "an FP8 weight's scale must be one float (per tensor), floats of shape {:?} \
                 (per channel) or {:?} (one per 128 x 128 block), or E8M0 bytes of shape \
                 [..., rows, cols/32] (MXFP8); not {} {:?}",
                if n >= 2 {
                    with_last(t.shape, &[1])
                } else {
                    vec![1]
                },
                if n >= 2 { block_grid(t.shape) } else { vec![1] },
                scale.dtype,
                scale.shape
            ),
        ))
    }

    /// ModelOpt's NVFP4: `W` U8 with `W_scale` E4M3 and `W_scale_2`.
    fn modelopt_nvfp4(&self, t: &Found<'_>, second: Found<'_>) -> Result<Quantized, Error> {
        let name = t.name.as_str();
        let scale_name = format!("{name}_scale");
        let Some(scale) = self.find(&scale_name) else {
            return Err(Error::file(format!(
                "tensor '{name}_scale_2' is an NVFP4 second scale but '{scale_name}' is missing"
            )));
        };
        if t.dtype != Dtype::U8 || t.shape.len() < 2 {
            return Err(Self::bad(
                name,
                &scale_name,
                format!(
                    "NVFP4 data must be U8 of shape [..., rows, cols/2], not {} {:?}",
                    t.dtype, t.shape
                ),
            ));
        }
        let stored_cols = t.shape[t.shape.len() - 1];
        if !stored_cols.is_multiple_of(8) {
            return Err(Self::bad(
                name,
                &scale_name,
                format!(
                    "NVFP4 data rows of {stored_cols} bytes are not whole blocks of 16 elements \
                     (8 bytes)"
                ),
            ));
        }
        let shape = shape_of_base(t.shape, stored_cols * 2, 16, name, self.metadata)?;
        let want = with_last(&shape, &[shape[shape.len() - 1].div_ceil(16)]);
        if scale.dtype != Dtype::F8_E4M3 || scale.shape != want {
            return Err(Self::bad(
                name,
                &scale_name,
                format!(
                    "the block scales must be F8_E4M3 of shape {want:?} (one per 16 elements), \
                     not {} {:?}",
                    scale.dtype, scale.shape
                ),
            ));
        }
        check_one_f32(&second, name)?;
        Ok(Quantized {
            shape,
            scale_2: Some(second.r),
            ..self.quantized(t, &scale, Scaling::Blocks(Scheme::Nvfp4), name)
        })
    }
}

/// Checks that NVFP4's second scale is one F32.
fn check_one_f32(second: &Found<'_>, data: &str) -> Result<(), Error> {
    if second.dtype != Dtype::F32 || second.shape.iter().product::<usize>() != 1 {
        return Err(Reader::bad(
            data,
            &second.name,
            format!(
                "the second scale must be one F32, not {} {:?}",
                second.dtype, second.shape
            ),
        ));
    }
    Ok(())
}

/// The weight's shape from its stored (padded) shape `stored` whose last dimension holds
/// `padded_cols` elements, restored from the metadata's `lowp.shape.BASE` when present.
fn shape_of_base(
    stored: &[usize],
    padded_cols: usize,
    block: usize,
    base: &str,
    metadata: &HashMap<String, String>,
) -> Result<Vec<usize>, Error> {
    let key = shape_key(base);
    let mut shape = stored.to_vec();
    let Some(text) = metadata.get(&key) else {
        if let Some(last) = shape.last_mut() {
            *last = padded_cols;
        }
        return Ok(shape);
    };
    let original: Vec<usize> = serde_json::from_str(text)
        .map_err(|_| Error::file(format!("metadata {key}: '{text}' is not a shape")))?;
    let fits = original.len() == stored.len()
        && original[..original.len() - 1] == stored[..stored.len() - 1]
        && original
            .last()
            .is_some_and(|&c| c.div_ceil(block) * block == padded_cols);
    if !fits {
        return Err(Error::file(format!(
            "metadata {key}: shape {original:?} does not fit the stored shape {stored:?}"
        )));
    }
    shape = original;
    Ok(shape)
}

/// Checks that MXFP scales are E8M0 bytes.
fn check_e8m0(scales: &str, dtype: Dtype, data: &str) -> Result<(), Error> {
    if is_e8m0(dtype) {
        Ok(())
    } else {
        Err(Error::file(format!(
            "tensors '{data}' and '{scales}': MX scales must be E8M0 bytes (U8 or F8_E8M0), not {dtype}"
        )))
    }
}
