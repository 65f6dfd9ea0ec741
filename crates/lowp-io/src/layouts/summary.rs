//! What a converted model's quantized weights are, and the module names its configuration
//! lists as left unquantized.

use super::layout::Layout;
use crate::quant::Scheme;

/// What a converted model's quantized weights are, for its configuration.
#[derive(Clone, Debug, PartialEq)]
pub struct Summary {
    /// The scheme.
    pub scheme: Scheme,
    /// The layout.
    pub layout: Layout,
    /// The modules left unquantized that a loader of the layout would otherwise look at
    /// (every module with a weight of 2 or more dimensions, `lm_head` always), sorted.
    pub unquantized: Vec<String>,
    /// Whether activations are quantized too (ModelOpt's W4A4, with their input scales).
    pub activations: bool,
}

/// The module names of `names`, each without its last component (`.weight`, or a fused
/// expert tensor's name): what the loaders' skip lists name.
pub fn module_of(name: &str) -> &str {
    name.strip_suffix(".weight")
        .or_else(|| name.rsplit_once('.').map(|(m, _)| m))
        .unwrap_or(name)
}

/// The sorted skip list of `modules`, with `lm_head` added: a model whose head is tied to its
/// embedding has no `lm_head` tensor but still an `lm_head` module, which a loader would
/// otherwise take to be quantized.
pub(crate) fn skip_list(modules: &[String]) -> Vec<String> {
    let mut out: Vec<String> = modules.to_vec();
    if !out.iter().any(|m| m == "lm_head") {
        out.push("lm_head".to_string());
    }
    out.sort();
    out.dedup();
    out
}
