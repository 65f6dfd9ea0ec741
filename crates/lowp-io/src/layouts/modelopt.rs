//! NVIDIA ModelOpt's NVFP4 export, as vLLM's and TensorRT-LLM's ModelOpt readers take it.
//!
//! A weight `W` `[R, C]` of module `M` (`W = M.weight`) is stored as `W` U8 `[R, C/2]` (two
//! E2M1 elements a byte, the even one in the low nibble), `W_scale` F8_E4M3 `[R, C/16]` and
//! `W_scale_2` F32 `[]`: `x = q * s * scale_2`, with `scale_2 = amax / (448 * 6)` of the
//! whole tensor and `s = amax_block / (6 * scale_2)`. `quant_algo: NVFP4` means 4-bit
//! activations too, which a reader quantizes with `M.input_scale` (F32 `[]`, `amax / (448 *
//! 6)` of the layer's input as calibration measured it); without activation statistics the
//! weights-only `W4A16_NVFP4` is written, which vLLM runs with 16-bit activations.
//!
//! The configuration is written twice, as ModelOpt does: `config.json`'s
//! `quantization_config` (`quant_method: modelopt`, the skipped modules in `ignore`, the key
//! vLLM reads there) and `hf_quant_config.json` (`quantization.exclude_modules`, its older
//! spelling). Columns must be whole groups of 16.

use super::placement::{Part, Placement};
use super::summary::{Summary, skip_list};
use crate::quant::Scheme;
use safetensors::Dtype;
use serde_json::{Value, json};

/// ModelOpt's second configuration file.
pub const HF_QUANT_CONFIG: &str = "hf_quant_config.json";

/// ModelOpt's layout holds NVFP4 only.
pub fn supports(scheme: Scheme) -> Result<(), String> {
    match scheme {
        Scheme::Nvfp4 => Ok(()),
        other => Err(format!(
            "lowp writes ModelOpt's layout for nvfp4 only; {other} is --layout {}",
            if other == Scheme::Fp8Channel || other == Scheme::Mxfp4 {
                "compressed-tensors"
            } else {
                "transformers or --layout compressed-tensors"
            }
        )),
    }
}

/// The tensors of the weight `name` of `shape` (2-D).
pub fn placement(name: &str, shape: &[usize]) -> Placement {
    let (rows, cols) = (shape[0], shape[1]);
    Placement {
        parts: vec![
            Part::new(name, Dtype::U8, vec![rows, cols / 2]),
            Part::new(
                format!("{name}_scale"),
                Dtype::F8_E4M3,
                vec![rows, cols / 16],
            ),
            Part::new(format!("{name}_scale_2"), Dtype::F32, Vec::new()),
        ],
        transposed: false,
    }
}

/// The name of the input scale of the weight `name` (`M.weight` gives `M.input_scale`), if it
/// names a module's weight.
pub fn input_scale_name(name: &str) -> Option<String> {
    name.strip_suffix(".weight")
        .map(|m| format!("{m}.input_scale"))
}

/// ModelOpt's `quant_algo`: NVFP4 with activations, W4A16_NVFP4 without.
fn algorithm(summary: &Summary) -> &'static str {
    if summary.activations {
        "NVFP4"
    } else {
        "W4A16_NVFP4"
    }
}

/// Who wrote the file.
fn producer() -> Value {
    json!({"name": "lowp", "version": env!("CARGO_PKG_VERSION")})
}

/// `config.json`'s `quantization_config`.
pub fn config(summary: &Summary) -> Value {
    json!({
        "quant_method": "modelopt",
        "quant_algo": algorithm(summary),
        "group_size": 16,
        "kv_cache_quant_algo": null,
        "ignore": skip_list(&summary.unquantized),
        "producer": producer(),
    })
}

/// `hf_quant_config.json`.
pub fn hf_quant_config(summary: &Summary) -> Value {
    json!({
        "producer": producer(),
        "quantization": {
            "quant_algo": algorithm(summary),
            "kv_cache_quant_algo": null,
            "group_size": 16,
            "exclude_modules": skip_list(&summary.unquantized),
        }
    })
}
