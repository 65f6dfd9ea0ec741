//! The tensors that store a block-quantized weight in each scheme's checkpoint layout, and
//! their recognition in a model being read.
//!
//! | scheme      | tensors for a weight `W` of shape `[..., R, C]`                              |
//! |-------------|------------------------------------------------------------------------------|
//! | `fp8-block` | `W` F8_E4M3 `[..., R, C]`, `W_scale_inv` F32 `[..., ⌈R/128⌉, ⌈C/128⌉]`         |
//! | `mxfp8`     | `W` F8_E4M3 `[..., R, C]`, `W_scale` U8 (E8M0) `[..., R, ⌈C/32⌉]`               |
//! | `mxfp4`     | `W.blocks` U8 `[..., R, ⌈C/32⌉, 16]`, `W.scales` U8 (E8M0) `[..., R, ⌈C/32⌉]`   |
//! | `nvfp4`     | `W` U8 `[..., R, ⌈C/16⌉·8]`, `W_scale` F8_E4M3 `[..., R, ⌈C/16⌉]`, `W_scale_2` F32 `[]` |
//!
//! These are the names and shapes that DeepSeek-V3 and transformers' FP8 loader (`fp8-block`),
//! gpt-oss (`mxfp4`) and NVIDIA ModelOpt exports (`nvfp4`) use. Padding: a row whose length is
//! not a multiple of the block gets a partial last block, which costs a whole scale; the FP4
//! layouts pack whole blocks, so their data is padded with +0 elements to the block (the
//! shapes above), which is what gpt-oss's and ModelOpt's loaders expect of a padded weight.
//! The original column count is then recorded in the safetensors `__metadata__` under
//! `lowp.shape.W` (a JSON list), so that reading the file back restores `W`'s shape exactly;
//! without that key the padded shape is what comes back.
//!
//! Reading recognises these groups, plus a per-tensor scaled FP8 weight (`W` F8 with an F32
//! scalar `W_scale`, as ModelOpt's and compressed-tensors' FP8 exports write it, or lowp's own
//! `W.scale`), and transformers' spelling of gpt-oss's tensors (`W_blocks`, `W_scales`), and
//! checks their dtypes and shapes against each other: a `.blocks` without its
//! `.scales`, a scale grid of the wrong shape or packed data of the wrong length is an error
//! naming both tensors.

use crate::error::Error;
use crate::model::{Model, TensorRef};
use crate::quant::Scheme;
use safetensors::Dtype;
use std::collections::HashMap;

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

/// The metadata key holding a padded weight's original shape.
pub fn shape_key(name: &str) -> String {
    format!("lowp.shape.{name}")
}

/// The tensors storing the weight `name` of `shape` (at least 2-D) under `scheme`: the
/// element data first, then its scales, in the order of the module table.
pub fn parts(scheme: Scheme, name: &str, shape: &[usize]) -> Vec<Part> {
    let (lead, cols) = shape.split_at(shape.len() - 1);
    let cols = cols[0];
    let with = |last: &[usize]| -> Vec<usize> { lead.iter().chain(last).copied().collect() };
    let part = |name: String, dtype, shape| Part { name, dtype, shape };
    match scheme {
        Scheme::Fp8Block => {
            let (batch, rows) = lead.split_at(lead.len() - 1);
            let grid: Vec<usize> = batch
                .iter()
                .copied()
                .chain([rows[0].div_ceil(128), cols.div_ceil(128)])
                .collect();
            vec![
                part(name.to_string(), Dtype::F8_E4M3, shape.to_vec()),
                part(format!("{name}_scale_inv"), Dtype::F32, grid),
            ]
        }
        Scheme::Mxfp8 => vec![
            part(name.to_string(), Dtype::F8_E4M3, shape.to_vec()),
            part(
                format!("{name}_scale"),
                Dtype::U8,
                with(&[cols.div_ceil(32)]),
            ),
        ],
        Scheme::Mxfp4 => vec![
            part(
                format!("{name}.blocks"),
                Dtype::U8,
                with(&[cols.div_ceil(32), 16]),
            ),
            part(
                format!("{name}.scales"),
                Dtype::U8,
                with(&[cols.div_ceil(32)]),
            ),
        ],
        Scheme::Nvfp4 => vec![
            part(name.to_string(), Dtype::U8, with(&[cols.div_ceil(16) * 8])),
            part(
                format!("{name}_scale"),
                Dtype::F8_E4M3,
                with(&[cols.div_ceil(16)]),
            ),
            part(format!("{name}_scale_2"), Dtype::F32, Vec::new()),
        ],
    }
}

/// How a stored weight is scaled.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Layout {
    /// One of the block-scaled schemes.
    Blocks(Scheme),
    /// FP8 elements times one F32 scale for the whole tensor.
    PerTensor,
}

impl Layout {
    /// The name in reports.
    pub fn name(self) -> &'static str {
        match self {
            Layout::Blocks(s) => s.name(),
            Layout::PerTensor => "fp8 per-tensor",
        }
    }
}

/// A quantized weight found in a model: the tensors that store it and what it is.
#[derive(Clone, Debug)]
pub struct Quantized {
    /// How it is stored.
    pub layout: Layout,
    /// The weight's name (the tensors' common base).
    pub name: String,
    /// The weight's shape (padding removed when the metadata records it).
    pub shape: Vec<usize>,
    /// The element data.
    pub data: TensorRef,
    /// The scales (block scales, or the per-tensor scale).
    pub scales: TensorRef,
    /// NVFP4's per-tensor second scale.
    pub scale_2: Option<TensorRef>,
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
    let mut found = Vec::new();
    for &r in &refs {
        let t = model.entry(r);
        if let Some(q) = group(model, &by_name, &metadata, &t.name, r)? {
            found.push(q);
        }
    }
    Ok(found)
}

/// The group a tensor heads, if it heads one: `W.blocks`, or `W` with a `W_scale_inv`,
/// `W_scale` (+ `W_scale_2`) or `W.scale`.
fn group(
    model: &Model,
    by_name: &HashMap<&str, TensorRef>,
    metadata: &HashMap<String, String>,
    name: &str,
    r: TensorRef,
) -> Result<Option<Quantized>, Error> {
    let t = model.entry(r);
    let find = |n: String| by_name.get(n.as_str()).map(|&s| (s, model.entry(s)));
    let bad =
        |other: &str, why: String| Error::file(format!("tensors '{name}' and '{other}': {why}"));
    // gpt-oss's original checkpoint spells them `W.blocks`/`W.scales`, transformers' copy of
    // it `W_blocks`/`W_scales`; both are read, and lowp writes the first. A `_blocks` name is
    // common enough elsewhere that only U8 of shape [..., rows, blocks, 16] counts as MXFP4.
    let looks_packed = t.dtype == Dtype::U8 && t.shape.len() >= 3 && t.shape.last() == Some(&16);
    let mxfp4 = name
        .strip_suffix(".blocks")
        .map(|base| (base, ".scales"))
        .or_else(|| {
            name.strip_suffix("_blocks")
                .filter(|_| looks_packed)
                .map(|base| (base, "_scales"))
        });
    if let Some((base, scales_suffix)) = mxfp4 {
        let scales_name = format!("{base}{scales_suffix}");
        let Some((s, scales)) = find(scales_name.clone()) else {
            return Err(Error::file(format!(
                "tensor '{name}' holds MXFP4 blocks but '{scales_name}', their scales, is missing"
            )));
        };
        if t.dtype != Dtype::U8 || t.shape.len() < 3 || t.shape[t.shape.len() - 1] != 16 {
            return Err(bad(
                &scales_name,
                format!(
                    "MXFP4 blocks must be U8 of shape [..., rows, blocks, 16], not {} {:?}",
                    t.dtype, t.shape
                ),
            ));
        }
        check_e8m0(&scales_name, scales.dtype, name)?;
        if scales.shape[..] != t.shape[..t.shape.len() - 1] {
            return Err(bad(
                &scales_name,
                format!(
                    "scales of shape {:?} do not match blocks of shape {:?} (expected {:?})",
                    scales.shape,
                    t.shape,
                    &t.shape[..t.shape.len() - 1]
                ),
            ));
        }
        let stored = &t.shape[..t.shape.len() - 1];
        let padded = stored[stored.len() - 1] * 32;
        let shape = shape_of_base(stored, padded, 32, base, metadata)?;
        return Ok(Some(Quantized {
            layout: Layout::Blocks(Scheme::Mxfp4),
            name: base.to_string(),
            shape,
            data: r,
            scales: s,
            scale_2: None,
        }));
    }
    if let Some((s, inv)) = find(format!("{name}_scale_inv")) {
        let inv_name = format!("{name}_scale_inv");
        if t.dtype != Dtype::F8_E4M3 || t.shape.len() < 2 {
            return Err(bad(
                &inv_name,
                format!(
                    "block-scaled FP8 data must be F8_E4M3 of at least 2 dimensions, not {} {:?}",
                    t.dtype, t.shape
                ),
            ));
        }
        let want = parts(Scheme::Fp8Block, name, &t.shape).remove(1);
        if inv.dtype != Dtype::F32 || inv.shape != want.shape {
            return Err(bad(
                &inv_name,
                format!(
                    "the scales must be F32 of shape {:?} (one per 128x128 block), not {} {:?}",
                    want.shape, inv.dtype, inv.shape
                ),
            ));
        }
        return Ok(Some(Quantized {
            layout: Layout::Blocks(Scheme::Fp8Block),
            name: name.to_string(),
            shape: t.shape.clone(),
            data: r,
            scales: s,
            scale_2: None,
        }));
    }
    let scale_name = format!("{name}_scale");
    if let Some((s2, second)) = find(format!("{name}_scale_2")) {
        let Some((s, scale)) = find(scale_name.clone()) else {
            return Err(Error::file(format!(
                "tensor '{name}_scale_2' is an NVFP4 second scale but '{scale_name}' is missing"
            )));
        };
        if t.dtype != Dtype::U8 || t.shape.len() < 2 {
            return Err(bad(
                &scale_name,
                format!(
                    "NVFP4 data must be U8 of shape [..., rows, cols/2], not {} {:?}",
                    t.dtype, t.shape
                ),
            ));
        }
        let stored_cols = t.shape[t.shape.len() - 1];
        if !stored_cols.is_multiple_of(8) {
            return Err(bad(
                &scale_name,
                format!(
                    "NVFP4 data rows of {stored_cols} bytes are not whole blocks of 16 elements \
                 (8 bytes)"
                ),
            ));
        }
        let shape = shape_of_base(&t.shape, stored_cols * 2, 16, name, metadata)?;
        let want = parts(Scheme::Nvfp4, name, &shape);
        if scale.dtype != Dtype::F8_E4M3 || scale.shape != want[1].shape {
            return Err(bad(
                &scale_name,
                format!(
                    "the block scales must be F8_E4M3 of shape {:?} (one per 16 elements), not {} {:?}",
                    want[1].shape, scale.dtype, scale.shape
                ),
            ));
        }
        if second.dtype != Dtype::F32 || second.shape.iter().product::<usize>() != 1 {
            return Err(bad(
                &format!("{name}_scale_2"),
                format!(
                    "the second scale must be one F32, not {} {:?}",
                    second.dtype, second.shape
                ),
            ));
        }
        return Ok(Some(Quantized {
            layout: Layout::Blocks(Scheme::Nvfp4),
            name: name.to_string(),
            shape,
            data: r,
            scales: s,
            scale_2: Some(s2),
        }));
    }
    let is_fp8 = matches!(t.dtype, Dtype::F8_E4M3 | Dtype::F8_E5M2);
    for scale_name in [format!("{name}_scale"), format!("{name}.scale")] {
        let Some((s, scale)) = find(scale_name.clone()) else {
            continue;
        };
        if !is_fp8 {
            continue;
        }
        if scale.dtype == Dtype::F32 && scale.shape.iter().product::<usize>() == 1 {
            return Ok(Some(Quantized {
                layout: Layout::PerTensor,
                name: name.to_string(),
                shape: t.shape.clone(),
                data: r,
                scales: s,
                scale_2: None,
            }));
        }
        if t.dtype == Dtype::F8_E4M3
            && matches!(scale.dtype, Dtype::U8 | Dtype::F8_E8M0)
            && t.shape.len() >= 2
        {
            let want = parts(Scheme::Mxfp8, name, &t.shape).remove(1);
            if scale.shape != want.shape {
                return Err(bad(
                    &scale_name,
                    format!(
                        "MXFP8 scales must be of shape {:?} (one per 32 elements of a row), not {:?}",
                        want.shape, scale.shape
                    ),
                ));
            }
            return Ok(Some(Quantized {
                layout: Layout::Blocks(Scheme::Mxfp8),
                name: name.to_string(),
                shape: t.shape.clone(),
                data: r,
                scales: s,
                scale_2: None,
            }));
        }
        return Err(bad(
            &scale_name,
            format!(
                "an FP8 weight's scale must be one F32 (per tensor) or E8M0 bytes of shape \
             [..., rows, cols/32] (MXFP8), not {} {:?}",
                scale.dtype, scale.shape
            ),
        ));
    }
    Ok(None)
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
    if matches!(dtype, Dtype::U8 | Dtype::F8_E8M0) {
        Ok(())
    } else {
        Err(Error::file(format!(
            "tensors '{data}' and '{scales}': MX scales must be E8M0 bytes (U8 or F8_E8M0), not {dtype}"
        )))
    }
}
