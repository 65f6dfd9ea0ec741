//! compressed-tensors, as llm-compressor writes it and transformers (through the
//! compressed-tensors package) and vLLM load it: one config group targeting `Linear`, the
//! modules left unquantized in `ignore`.
//!
//! | scheme | tensors for a weight `W` `[R, C]` | format | scheme of the group |
//! |---|---|---|---|
//! | fp8-block | `W` F8_E4M3, `W_scale` `[⌈R/128⌉, C/128]` | `float-quantized` | `FP8_BLOCK`: block 128 x 128 weights, dynamic activations per group of 128 |
//! | fp8-channel | `W` F8_E4M3, `W_scale` `[R, 1]` | `float-quantized` | `FP8_DYNAMIC`: per-channel weights, dynamic activations per token |
//! | mxfp8 | `W` F8_E4M3, `W_scale` U8 (E8M0) `[R, C/32]` | `mxfp8-quantized` | `MXFP8A16` (weights only) |
//! | mxfp4 | `W_packed` U8 `[R, C/2]`, `W_scale` U8 (E8M0) `[R, C/32]` | `mxfp4-pack-quantized` | `MXFP4A16` |
//! | nvfp4 | `W_packed` U8 `[R, C/2]`, `W_scale` F8_E4M3 `[R, C/16]`, `W_global_scale` F32 `[1]` | `nvfp4-pack-quantized` | `NVFP4A16` (W4A16) |
//!
//! The FP8 schemes' scales have the dtype of the weights they replace (bf16 for a bf16 model):
//! compressed-tensors creates the scale parameter in that dtype and casts what the file holds
//! into it, so lowp chooses each scale in that type rather than have the loader round it.
//!
//! NVFP4's global scale is what the block scales are divided by: `x = q * s /
//! global_scale`. llm-compressor takes `global_scale = 448 * 6 / amax`, whose division is
//! rounded in every loader; lowp takes the power of two `1 / 2^k` where `2^k` is the smallest
//! power of two at or above `amax / (448 * 6)`, so that the division is exact in every loader
//! and the file holds the same values as in ModelOpt's convention (`q * s * 2^k`). The block
//! scales then reach up to between 224 and 448 rather than 448: the same relative precision,
//! one binade less of range below.
//!
//! Group schemes need whole groups in a row (compressed-tensors refuses the rest); a weight
//! whose columns are not, and fp8-block's whose columns are not whole blocks of 128, stays
//! unquantized and is listed in `ignore`.

use super::placement::{Part, Placement};
use super::summary::{Summary, skip_list};
use crate::quant::Scheme;
use safetensors::Dtype;
use serde_json::{Value, json};

/// Every scheme has a compressed-tensors format.
pub fn supports(_: Scheme) -> Result<(), String> {
    Ok(())
}

/// The tensors of the weight `name` of `shape` (2-D), fp8 scales stored as `scale_dtype`.
pub fn placement(scheme: Scheme, name: &str, shape: &[usize], scale_dtype: Dtype) -> Placement {
    let (rows, cols) = (shape[0], shape[1]);
    let parts = match scheme {
        Scheme::Fp8Block => vec![
            Part::new(name, Dtype::F8_E4M3, shape.to_vec()),
            Part::new(
                format!("{name}_scale"),
                scale_dtype,
                vec![rows.div_ceil(128), cols.div_ceil(128)],
            ),
        ],
        Scheme::Fp8Channel => vec![
            Part::new(name, Dtype::F8_E4M3, shape.to_vec()),
            Part::new(format!("{name}_scale"), scale_dtype, vec![rows, 1]),
        ],
        Scheme::Mxfp8 => vec![
            Part::new(name, Dtype::F8_E4M3, shape.to_vec()),
            Part::new(format!("{name}_scale"), Dtype::U8, vec![rows, cols / 32]),
        ],
        Scheme::Mxfp4 => vec![
            Part::new(format!("{name}_packed"), Dtype::U8, vec![rows, cols / 2]),
            Part::new(format!("{name}_scale"), Dtype::U8, vec![rows, cols / 32]),
        ],
        Scheme::Nvfp4 => vec![
            Part::new(format!("{name}_packed"), Dtype::U8, vec![rows, cols / 2]),
            Part::new(
                format!("{name}_scale"),
                Dtype::F8_E4M3,
                vec![rows, cols / 16],
            ),
            Part::new(format!("{name}_global_scale"), Dtype::F32, vec![1]),
        ],
    };
    Placement {
        parts,
        transposed: false,
    }
}

/// The `format` of a scheme.
pub fn format(scheme: Scheme) -> &'static str {
    match scheme {
        Scheme::Fp8Block | Scheme::Fp8Channel => "float-quantized",
        Scheme::Mxfp8 => "mxfp8-quantized",
        Scheme::Mxfp4 => "mxfp4-pack-quantized",
        Scheme::Nvfp4 => "nvfp4-pack-quantized",
    }
}

/// The group's `weights` and `input_activations` arguments.
fn arguments(scheme: Scheme) -> (Value, Value) {
    let float = |bits: u32, strategy: &str| {
        json!({
            "num_bits": bits, "type": "float", "symmetric": true, "dynamic": false,
            "strategy": strategy, "group_size": null, "block_structure": null, "actorder": null,
        })
    };
    let dynamic_fp8 = |strategy: &str, group: Option<u32>| {
        json!({
            "num_bits": 8, "type": "float", "symmetric": true, "dynamic": true,
            "strategy": strategy, "group_size": group, "block_structure": null, "actorder": null,
        })
    };
    let with = |mut v: Value, extra: Value| {
        if let (Some(o), Some(e)) = (v.as_object_mut(), extra.as_object()) {
            o.extend(e.clone());
        }
        v
    };
    match scheme {
        Scheme::Fp8Block => (
            with(float(8, "block"), json!({"block_structure": [128, 128]})),
            dynamic_fp8("group", Some(128)),
        ),
        Scheme::Fp8Channel => (float(8, "channel"), dynamic_fp8("token", None)),
        Scheme::Mxfp8 | Scheme::Mxfp4 => (
            with(
                float(scheme.bits_per_element(), "group"),
                json!({"group_size": 32, "scale_dtype": "torch.uint8", "zp_dtype": "torch.uint8"}),
            ),
            Value::Null,
        ),
        Scheme::Nvfp4 => (
            with(
                float(4, "tensor_group"),
                json!({
                    "group_size": 16,
                    "scale_dtype": "torch.float8_e4m3fn",
                    "zp_dtype": "torch.float8_e4m3fn",
                }),
            ),
            Value::Null,
        ),
    }
}

/// The `quantization_config`.
pub fn config(summary: &Summary) -> Value {
    let format = format(summary.scheme);
    let (weights, inputs) = arguments(summary.scheme);
    json!({
        "quant_method": "compressed-tensors",
        "format": format,
        "quantization_status": "compressed",
        "config_groups": {
            "group_0": {
                "targets": ["Linear"],
                "weights": weights,
                "input_activations": inputs,
                "output_activations": null,
                "format": format,
            }
        },
        "ignore": skip_list(&summary.unquantized),
        "kv_cache_scheme": null,
        "sparsity_config": {},
        "transform_config": {},
        "global_compression_ratio": null,
    })
}
