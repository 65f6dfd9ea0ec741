//! What each tensor of a model is, from the model's `config.json` and the tensor's name and
//! shape: the part a loader's quantizer looks at when it decides what to quantize.
//!
//! Loaders quantize modules, not tensor names: transformers' FP8 quantizer swaps every
//! `nn.Linear` for its FP8 module, compressed-tensors targets `Linear`, gpt-oss's MXFP4 loader
//! takes the MoE experts' fused tensors (`mlp.experts.gate_up_proj` `[E, H, 2I]`, whose names
//! do not end in `weight`). So a tensor's role is decided from what the configuration says of
//! the model (its vocabulary, its experts, its architecture) and the tensor's shape, the name
//! serving only where the shape cannot tell (an embedding of the hidden size).

use crate::error::Error;
use serde_json::Value;
use std::path::Path;

/// What a tensor is to a loader.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    /// The weight of a linear layer (`[out, in]`): what every layout quantizes by default.
    Linear,
    /// The output head (`lm_head`, a linear layer of `vocab_size` outputs): kept by default,
    /// as vLLM, ModelOpt and llm-compressor keep it.
    Head,
    /// An embedding table (tokens, positions, token types): no layout quantizes one.
    Embedding,
    /// An MoE router (`[experts, hidden]`): kept, as every quantizer keeps routers.
    Router,
    /// The fused weights of a model's MoE experts, one matrix per expert: `[E, in, out]` when
    /// `transposed` (gpt-oss: `x @ W[e]`), else `[E, out, in]`.
    Experts {
        /// Whether each expert's matrix is stored input-major.
        transposed: bool,
    },
    /// Anything else: norms, biases, scalars, convolutions, 3-D tensors of no known kind.
    Other,
}

impl Role {
    /// The name in reports.
    pub fn name(self) -> &'static str {
        match self {
            Role::Linear => "linear weight",
            Role::Head => "output head",
            Role::Embedding => "embedding",
            Role::Router => "MoE router",
            Role::Experts { .. } => "MoE experts",
            Role::Other => "not a linear weight",
        }
    }
}

/// What `config.json` says about a model, as far as tensor roles need it. Every field is
/// optional: a model without a config (a single `.safetensors` file) is judged by names and
/// shapes alone.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ModelInfo {
    /// `model_type` (`llama`, `qwen3`, `gpt_oss`, `bert`, ...).
    pub model_type: Option<String>,
    /// `vocab_size`.
    pub vocab_size: Option<usize>,
    /// `hidden_size`.
    pub hidden_size: Option<usize>,
    /// The number of MoE experts (`num_local_experts`, `num_experts` or `n_routed_experts`).
    pub experts: Option<usize>,
    /// `max_position_embeddings`.
    pub positions: Option<usize>,
    /// `type_vocab_size` (BERT's token types).
    pub token_types: Option<usize>,
}

impl ModelInfo {
    /// The information in the `config.json` of a model directory (`None`: none at all). A
    /// config that is not a JSON object is an error naming the file: a model directory whose
    /// config cannot be read cannot have its quantization described either. A multimodal
    /// config's `text_config` fills what the top level lacks.
    pub fn read(config: Option<&Path>) -> Result<ModelInfo, Error> {
        let Some(path) = config else {
            return Ok(ModelInfo::default());
        };
        let text = crate::files::read_small(path, crate::files::MAX_JSON, "a config")?;
        let value: Value = serde_json::from_slice(&text)
            .map_err(|e| Error::file(format!("{}: not valid JSON ({e})", path.display())))?;
        if !value.is_object() {
            return Err(Error::file(format!(
                "{}: not a JSON object",
                path.display()
            )));
        }
        Ok(ModelInfo::from_value(&value))
    }

    /// [`ModelInfo::read`] of a parsed configuration.
    pub fn from_value(config: &Value) -> ModelInfo {
        let text = config.get("text_config");
        let field = |keys: &[&str]| -> Option<usize> {
            [Some(config), text].into_iter().flatten().find_map(|v| {
                keys.iter()
                    .find_map(|k| v.get(k).and_then(Value::as_u64))
                    .and_then(|n| usize::try_from(n).ok())
            })
        };
        ModelInfo {
            model_type: config
                .get("model_type")
                .and_then(Value::as_str)
                .map(str::to_string),
            vocab_size: field(&["vocab_size"]),
            hidden_size: field(&["hidden_size", "d_model", "n_embd"]),
            experts: field(&["num_local_experts", "num_experts", "n_routed_experts"]),
            positions: field(&["max_position_embeddings", "n_positions"]),
            token_types: field(&["type_vocab_size"]),
        }
    }

    /// Whether the model is gpt-oss, whose experts transformers reads in MXFP4.
    pub fn is_gpt_oss(&self) -> bool {
        self.model_type.as_deref() == Some("gpt_oss")
    }

    /// The role of the tensor `name` of `shape`.
    ///
    /// * 2-D tensors named `*weight`: an embedding when the name says so (`embed`, `wte`,
    ///   `wpe`, or a table of the model's positions or token types named for them); outside
    ///   the numbered layers, the output head when the rows are the vocabulary; a router when
    ///   the rows are the experts and the columns the hidden size; a linear weight otherwise (a
    ///   layer's weight of the vocabulary's shape, a pooler of the positions' shape included).
    /// * 3-D tensors of a model with experts, named `*.experts.NAME` with the experts as
    ///   first dimension: fused experts (input-major for gpt-oss).
    /// * Everything else: [`Role::Other`].
    pub fn role(&self, name: &str, shape: &[usize]) -> Role {
        let leaf = name.rsplit('.').next().unwrap_or(name);
        match shape.len() {
            2 if name.ends_with("weight") => {
                let (rows, cols) = (shape[0], shape[1]);
                let named_embedding = ["embed", "wte", "wpe"].iter().any(|k| name.contains(k));
                let hidden = self.hidden_size.is_none_or(|h| h == cols);
                // Heads and embedding tables sit outside the stack of numbered layers; a
                // layer's linear weight may have any shape, the vocabulary's included.
                let in_layer = name
                    .split('.')
                    .any(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()));
                let table = |n: Option<usize>, word: &str| {
                    !in_layer && hidden && Some(rows) == n && name.contains(word)
                };
                if named_embedding
                    || table(self.positions, "position")
                    || table(self.token_types, "type")
                {
                    Role::Embedding
                } else if !in_layer && Some(rows) == self.vocab_size && hidden
                    || name.starts_with("lm_head") && self.vocab_size.is_none()
                {
                    Role::Head
                } else if Some(rows) == self.experts && hidden && self.experts.is_some() {
                    Role::Router
                } else {
                    Role::Linear
                }
            }
            3 if self.experts == Some(shape[0])
                && name
                    .strip_suffix(leaf)
                    .is_some_and(|m| m.ends_with(".experts."))
                && !leaf.ends_with("bias") =>
            {
                Role::Experts {
                    transposed: self.is_gpt_oss(),
                }
            }
            _ => Role::Other,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn roles_come_from_the_config_and_shapes() {
        let llama = ModelInfo::from_value(&json!({
            "model_type": "llama", "vocab_size": 512, "hidden_size": 256,
            "max_position_embeddings": 128
        }));
        assert_eq!(
            llama.role("model.embed_tokens.weight", &[512, 256]),
            Role::Embedding
        );
        assert_eq!(llama.role("lm_head.weight", &[512, 256]), Role::Head);
        assert_eq!(
            llama.role("model.layers.0.self_attn.q_proj.weight", &[256, 256]),
            Role::Linear
        );
        // A linear layer of 512 outputs but another input width is not the head.
        assert_eq!(
            llama.role("model.layers.0.mlp.up_proj.weight", &[512, 384]),
            Role::Linear
        );
        assert_eq!(llama.role("model.norm.weight", &[256]), Role::Other);

        let oss = ModelInfo::from_value(&json!({
            "model_type": "gpt_oss", "vocab_size": 512, "hidden_size": 128,
            "num_local_experts": 4
        }));
        assert_eq!(
            oss.role("model.layers.0.mlp.experts.gate_up_proj", &[4, 128, 256]),
            Role::Experts { transposed: true }
        );
        assert_eq!(
            oss.role("model.layers.0.mlp.experts.gate_up_proj_bias", &[4, 256]),
            Role::Other
        );
        assert_eq!(
            oss.role("model.layers.0.mlp.router.weight", &[4, 128]),
            Role::Router
        );
        // Without the config, the same tensors are judged by name and shape only.
        let none = ModelInfo::default();
        assert_eq!(
            none.role("model.layers.0.mlp.experts.gate_up_proj", &[4, 128, 256]),
            Role::Other
        );
        assert_eq!(none.role("lm_head.weight", &[512, 128]), Role::Head);
        assert_eq!(
            none.role("model.layers.0.mlp.router.weight", &[4, 128]),
            Role::Linear
        );

        let qwen_moe = ModelInfo::from_value(&json!({
            "model_type": "qwen3_moe", "vocab_size": 512, "hidden_size": 128, "num_experts": 8
        }));
        assert_eq!(
            qwen_moe.role("model.layers.0.mlp.experts.down_proj", &[8, 128, 64]),
            Role::Experts { transposed: false }
        );
        assert_eq!(
            qwen_moe.role("model.layers.0.mlp.gate.weight", &[8, 128]),
            Role::Router
        );

        let bert = ModelInfo::from_value(&json!({
            "model_type": "bert", "vocab_size": 512, "hidden_size": 128,
            "max_position_embeddings": 128, "type_vocab_size": 2
        }));
        assert_eq!(
            bert.role("embeddings.position_embeddings.weight", &[128, 128]),
            Role::Embedding
        );
        assert_eq!(
            bert.role("embeddings.token_type_embeddings.weight", &[2, 128]),
            Role::Embedding
        );
        // A 128 x 128 linear layer is not the positions' table because of its shape alone.
        assert_eq!(
            bert.role("encoder.layer.0.attention.self.query.weight", &[128, 128]),
            Role::Linear
        );
        assert_eq!(bert.role("pooler.dense.weight", &[128, 128]), Role::Linear);
    }
}
