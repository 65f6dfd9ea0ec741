//! transformers' own quantizers: fine-grained FP8 (`quant_method: fp8`, DeepSeek-V3's
//! `weight_scale_inv`), MXFP8 (`quant_method: mxfp8`, the FP8 loader with E8M0 scales), and
//! MXFP4 for gpt-oss's MoE experts (`quant_method: mxfp4`).
//!
//! | scheme | tensors for a weight `W` | `quantization_config` |
//! |---|---|---|
//! | fp8-block | `W` F8_E4M3 `[R, C]`, `W_scale_inv` F32 `[R/128, C/128]` | `{quant_method: fp8, weight_block_size: [128, 128], ...}` |
//! | mxfp8 | `W` F8_E4M3 `[R, C]`, `W_scale_inv` U8 (E8M0) `[R, C/32]` | `{quant_method: mxfp8, weight_block_size: [1, 32], scale_fmt: ue8m0, ...}` |
//! | mxfp4 | experts `P` `[E, in, out]`: `P_blocks` U8 `[E, out, in/32, 16]`, `P_scales` U8 `[E, out, in/32]` | `{quant_method: mxfp4, ...}` |
//!
//! Every config lists in `modules_to_not_convert` each module left unquantized, so that the
//! loader does not take it for quantized.
//!
//! What the loaders read decides which weights fit. transformers' CPU path (its dequantizer,
//! what runs where no GPU kernel does) takes a weight's block size from the shape of its
//! scale grid: rows / grid rows by columns / grid columns. A weight whose rows or columns are
//! not whole blocks would be read with the wrong block size (200 rows in 2 blocks become
//! blocks of 100), so fp8-block and mxfp8 quantize only weights that are whole blocks, and
//! leave the others unquantized (and listed). gpt-oss's MXFP4 loader reads `in / 32` whole
//! blocks per output; experts whose `in` is not a multiple of 32 stay unquantized.

use super::placement::{Part, Placement};
use super::roles::{ModelInfo, Role};
use super::summary::{Summary, skip_list};
use crate::quant::Scheme;
use safetensors::Dtype;
use serde_json::{Value, json};

/// Whether transformers reads `scheme` for the model `info` describes.
pub fn supports(scheme: Scheme, info: &ModelInfo) -> Result<(), String> {
    match scheme {
        Scheme::Fp8Block | Scheme::Mxfp8 => Ok(()),
        Scheme::Mxfp4 if info.is_gpt_oss() => Ok(()),
        Scheme::Mxfp4 => Err(format!(
            "transformers reads MXFP4 only in gpt-oss's MoE experts, and this model is {}; \
             --layout compressed-tensors stores its linear weights in MXFP4 \
             (mxfp4-pack-quantized), which transformers and vLLM load",
            info.model_type.as_deref().map_or(
                "of no known type (no config.json)".to_string(),
                |t| format!("'{t}'")
            )
        )),
        Scheme::Fp8Channel => Err(
            "transformers' FP8 loader reads 128 x 128 blocks (fp8-block); FP8 per channel is \
             --layout compressed-tensors"
                .to_string(),
        ),
        Scheme::Nvfp4 => Err(
            "transformers cannot load pre-quantized NVFP4 checkpoints of its own; use --layout \
             compressed-tensors (nvfp4-pack-quantized: transformers and vLLM load it) or \
             --layout modelopt (vLLM, TensorRT-LLM)"
                .to_string(),
        ),
    }
}

/// Whether the loader reads a tensor of `role` quantized in `scheme`: every `nn.Linear` for
/// FP8 and MXFP8 (heads and routers that are linear layers included), only the experts for
/// MXFP4.
pub fn holds(scheme: Scheme, role: Role) -> bool {
    match scheme {
        Scheme::Mxfp4 => role == Role::Experts { transposed: true },
        _ => matches!(role, Role::Linear | Role::Head | Role::Router),
    }
}

/// Whether a weight of `shape` is read right (see the module doc).
pub fn fits(scheme: Scheme, role: Role, shape: &[usize]) -> Result<(), String> {
    let (rows, cols) = (shape[shape.len() - 2], shape[shape.len() - 1]);
    match scheme {
        Scheme::Fp8Block if !rows.is_multiple_of(128) || !cols.is_multiple_of(128) => Err(format!(
            "{rows} x {cols} is not whole 128 x 128 blocks, and transformers' dequantizer \
                 takes the block size from the scale grid's shape"
        )),
        Scheme::Mxfp8 if !cols.is_multiple_of(32) => Err(format!(
            "{cols} columns are not whole blocks of 32, which transformers' MXFP8 loader reads"
        )),
        Scheme::Mxfp4
            if role == (Role::Experts { transposed: true }) && !rows.is_multiple_of(32) =>
        {
            Err(format!(
                "an input of {rows} is not whole blocks of 32, which gpt-oss's MXFP4 loader reads"
            ))
        }
        _ => Ok(()),
    }
}

/// The tensors of the weight `name` of `shape`.
pub fn placement(scheme: Scheme, name: &str, shape: &[usize]) -> Placement {
    let (lead, cols) = (&shape[..shape.len() - 1], shape[shape.len() - 1]);
    let with = |last: &[usize]| -> Vec<usize> { lead.iter().chain(last).copied().collect() };
    match scheme {
        Scheme::Mxfp4 => {
            // gpt-oss's experts (the only tensors `holds` lets through) [E, in, out], stored
            // as [E, out, in/32, 16]: blocks along the input.
            let (e, i, o) = (shape[0], shape[1], shape[2]);
            Placement {
                parts: vec![
                    Part::new(format!("{name}_blocks"), Dtype::U8, vec![e, o, i / 32, 16]),
                    Part::new(format!("{name}_scales"), Dtype::U8, vec![e, o, i / 32]),
                ],
                transposed: true,
            }
        }
        Scheme::Mxfp8 => Placement {
            parts: vec![
                Part::new(name, Dtype::F8_E4M3, shape.to_vec()),
                Part::new(
                    format!("{name}_scale_inv"),
                    Dtype::U8,
                    with(&[cols.div_ceil(32)]),
                ),
            ],
            transposed: false,
        },
        _ => {
            let (batch, rows) = lead.split_at(lead.len() - 1);
            let grid: Vec<usize> = batch
                .iter()
                .copied()
                .chain([rows[0].div_ceil(128), cols.div_ceil(128)])
                .collect();
            Placement {
                parts: vec![
                    Part::new(name, Dtype::F8_E4M3, shape.to_vec()),
                    Part::new(format!("{name}_scale_inv"), Dtype::F32, grid),
                ],
                transposed: false,
            }
        }
    }
}

/// The `quantization_config`.
pub fn config(summary: &Summary) -> Value {
    let skipped = skip_list(&summary.unquantized);
    match summary.scheme {
        Scheme::Mxfp8 => json!({
            "quant_method": "mxfp8",
            "activation_scheme": "dynamic",
            "weight_block_size": [1, 32],
            "scale_fmt": "ue8m0",
            "modules_to_not_convert": skipped,
        }),
        Scheme::Mxfp4 => json!({
            "quant_method": "mxfp4",
            "modules_to_not_convert": skipped,
        }),
        _ => json!({
            "quant_method": "fp8",
            "fmt": "e4m3",
            "activation_scheme": "dynamic",
            "weight_block_size": [128, 128],
            "modules_to_not_convert": skipped,
        }),
    }
}
