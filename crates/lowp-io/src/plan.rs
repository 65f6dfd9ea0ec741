//! What happens to one tensor that is not quantized: copied, or converted to which type, and
//! whether scaled.

use crate::float_type::FloatType;
use crate::options::{Options, Target};

/// What happens to one tensor.
#[derive(Clone, Debug, Default)]
pub struct Plan {
    /// Its float type, if it has one of ours.
    pub source: Option<FloatType>,
    /// The type it is converted to; `None`: copied as it is.
    pub target: Option<FloatType>,
    /// Why it is copied as it is.
    pub note: String,
    /// Whether it is scaled per tensor (FP8 with `--fp8-scale per-tensor`).
    pub scaled: bool,
    /// The name of its scale tensor, when scaled and writing.
    pub scale_name: Option<String>,
}

impl Options {
    /// What to do with the tensor `name` of float type `source` (`None`: not a float type
    /// we convert) when it is not quantized; `writing` is false in a dry run.
    pub fn plan(&self, name: &str, source: Option<FloatType>, writing: bool) -> Plan {
        let kept = |note: String| Plan {
            source,
            note,
            ..Plan::default()
        };
        let Some(from) = source else {
            return kept("not a float type lowp converts".to_string());
        };
        let to = match (self.to, self.rest) {
            _ if self.keeps_f32(name) => FloatType::F32,
            (Target::Float(to), _) => {
                if !self.selects(name) {
                    return kept("not matched by --only".to_string());
                }
                to
            }
            (Target::Scheme(_), Some(rest)) => rest,
            (Target::Scheme(_), None) => return kept(String::new()),
        };
        if to == from {
            return kept(format!("already {}", to.name()));
        }
        let scaled = self.per_tensor_scale && to.is_fp8();
        Plan {
            source,
            target: Some(to),
            note: String::new(),
            scaled,
            scale_name: (scaled && writing).then(|| format!("{name}.scale")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    #[test]
    fn plans() {
        let opts = Options {
            only: vec!["*.weight".into()],
            keep_f32: vec!["*norm*".into()],
            per_tensor_scale: true,
            ..Options::new(PathBuf::new(), None, FloatType::F8E4M3FN)
        };
        let p = opts.plan("l.weight", Some(FloatType::F32), true);
        assert_eq!(p.target, Some(FloatType::F8E4M3FN));
        assert_eq!(p.scale_name.as_deref(), Some("l.weight.scale"));
        assert!(
            opts.plan("l.weight", Some(FloatType::F32), false)
                .scale_name
                .is_none()
        );
        assert_eq!(
            opts.plan("l.bias", Some(FloatType::F32), true).note,
            "not matched by --only"
        );
        let norm = opts.plan("norm.weight", Some(FloatType::BF16), true);
        assert_eq!((norm.target, norm.scaled), (Some(FloatType::F32), false));
        assert_eq!(
            opts.plan("norm.weight", Some(FloatType::F32), true).note,
            "already f32"
        );
        assert!(opts.plan("ids", None, true).target.is_none());
    }
}
