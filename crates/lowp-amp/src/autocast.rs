//! The autocast policy: which ops run in the low-precision dtype and which stay in f32,
//! written as data a user can read, change, save and load.
//!
//! The formats article's rule: matrix products gain the most from a narrow format and lose
//! the least (their sums accumulate in f32 anyway), while softmax, normalisation, losses,
//! sums and the exponential family subtract nearly equal numbers or span a wide range, so
//! they stay in f32 whatever the input. PyTorch's autocast and Paddle's AMP write that rule
//! as op lists; [`AutocastPolicy::default`] is their lists restricted to the ops lowp-tensor
//! has (with their lowp-tensor names), plus `linear`, the layer the trainer builds from
//! `matmul` and `add`:
//!
//! * **lower** (PyTorch's "ops that can autocast to float16", Paddle's white list): matmul,
//!   linear;
//! * **fp32** (PyTorch's "ops that can autocast to float32", Paddle's black list): softmax,
//!   log_softmax, layer_norm, cross_entropy, sum, mean, exp, expm1, log, log2, log10, log1p,
//!   pow, reciprocal, rsqrt, tan, asin, acos, sinh, cosh;
//! * every other op (PyTorch's unlisted ops and "promote" list, Paddle's gray list) runs in
//!   the widest dtype of its inputs.
//!
//! As in PyTorch, only f32 and narrower float inputs are cast: f64 stays f64, and integer
//! inputs (labels) are left alone.
//!
//! The text form, one class per line followed by op names (`#` starts a comment):
//!
//! ```text
//! lower: matmul linear
//! fp32: softmax log_softmax layer_norm cross_entropy sum exp log
//! ```

use lowp_tensor::{DType, Error, Result, Tensor};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fmt;
use std::str::FromStr;

/// Where an op runs under autocast.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum OpPrecision {
    /// In the autocast dtype (f16, bf16): its float inputs are cast down.
    Lower,
    /// In f32: its narrower float inputs are cast up.
    Fp32,
    /// In the widest dtype of its float inputs (the default for ops not listed).
    Widest,
}

impl OpPrecision {
    /// The name in the text form: `lower`, `fp32`, `widest`.
    pub fn name(self) -> &'static str {
        match self {
            OpPrecision::Lower => "lower",
            OpPrecision::Fp32 => "fp32",
            OpPrecision::Widest => "widest",
        }
    }
}

/// Ops that run in the low-precision dtype, by default.
pub const LOWER_OPS: &[&str] = &["matmul", "linear"];

/// Ops kept in f32, by default.
pub const FP32_OPS: &[&str] = &[
    "softmax",
    "log_softmax",
    "layer_norm",
    "cross_entropy",
    "sum",
    "mean",
    "exp",
    "expm1",
    "log",
    "log2",
    "log10",
    "log1p",
    "pow",
    "reciprocal",
    "rsqrt",
    "tan",
    "asin",
    "acos",
    "sinh",
    "cosh",
];

/// Which ops run in which precision: a map from op name to [`OpPrecision`]; ops not in it
/// run in the widest dtype of their inputs.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct AutocastPolicy {
    ops: BTreeMap<String, OpPrecision>,
}

impl Default for AutocastPolicy {
    /// PyTorch's and Paddle's lists, as the [module docs](self) give them.
    fn default() -> Self {
        let mut ops = BTreeMap::new();
        for &op in LOWER_OPS {
            ops.insert(op.to_string(), OpPrecision::Lower);
        }
        for &op in FP32_OPS {
            ops.insert(op.to_string(), OpPrecision::Fp32);
        }
        AutocastPolicy { ops }
    }
}

impl AutocastPolicy {
    /// A policy that lists nothing: every op runs in its inputs' dtype.
    pub fn empty() -> Self {
        AutocastPolicy {
            ops: BTreeMap::new(),
        }
    }

    /// Where `op` runs.
    pub fn precision(&self, op: &str) -> OpPrecision {
        self.ops.get(op).copied().unwrap_or(OpPrecision::Widest)
    }

    /// Puts `op` in class `precision` (moving it out of any other).
    pub fn set(&mut self, op: &str, precision: OpPrecision) {
        self.ops.insert(op.to_string(), precision);
    }

    /// The listed ops and their classes, sorted by name.
    pub fn ops(&self) -> impl Iterator<Item = (&str, OpPrecision)> {
        self.ops.iter().map(|(k, &v)| (k.as_str(), v))
    }

    /// The policy as JSON: an object from op name to `"lower"`, `"fp32"` or `"widest"`.
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(&self.ops).expect("names and classes are plain JSON")
    }

    /// A policy read from [`AutocastPolicy::to_json`]'s form.
    pub fn from_json(json: &str) -> Result<Self> {
        let ops = serde_json::from_str(json).map_err(|e| Error::Argument {
            op: "AutocastPolicy::from_json",
            message: e.to_string(),
        })?;
        Ok(AutocastPolicy { ops })
    }
}

impl fmt::Display for AutocastPolicy {
    /// The text form: a `lower:`, an `fp32:` and a `widest:` line (each only when it has ops).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for class in [OpPrecision::Lower, OpPrecision::Fp32, OpPrecision::Widest] {
            let ops: Vec<&str> = self
                .ops()
                .filter(|&(_, p)| p == class)
                .map(|(op, _)| op)
                .collect();
            if !ops.is_empty() {
                writeln!(f, "{}: {}", class.name(), ops.join(" "))?;
            }
        }
        Ok(())
    }
}

impl FromStr for AutocastPolicy {
    type Err = Error;

    /// Reads the text form. Only the listed ops are in the policy (start from
    /// [`AutocastPolicy::default`] and [`AutocastPolicy::set`] to amend the defaults); a
    /// line without a known class is an error naming the line.
    fn from_str(text: &str) -> Result<Self> {
        let mut policy = AutocastPolicy::empty();
        for (n, line) in text.lines().enumerate() {
            let line = line.split('#').next().unwrap_or("").trim();
            if line.is_empty() {
                continue;
            }
            let class = match line.split_once(':') {
                Some((class, ops)) => match class.trim() {
                    "lower" => Some((OpPrecision::Lower, ops)),
                    "fp32" => Some((OpPrecision::Fp32, ops)),
                    "widest" => Some((OpPrecision::Widest, ops)),
                    _ => None,
                },
                None => None,
            };
            let Some((class, ops)) = class else {
                return Err(Error::Argument {
                    op: "AutocastPolicy",
                    message: format!(
                        "line {}: expected `lower:`, `fp32:` or `widest:` and op names, not \
                         {line:?}",
                        n + 1
                    ),
                });
            };
            for op in ops.split([' ', ',', '\t']).filter(|s| !s.is_empty()) {
                policy.set(op, class);
            }
        }
        Ok(policy)
    }
}

/// A policy in force: the policy and the low-precision dtype, or none (autocast off).
#[derive(Clone, Debug, PartialEq)]
pub struct Autocast {
    /// Which ops run where.
    pub policy: AutocastPolicy,
    /// The dtype `lower` ops run in; `None` turns autocast off (every op in its inputs'
    /// dtype).
    pub dtype: Option<DType>,
}

impl Autocast {
    /// Autocast off.
    pub fn disabled() -> Self {
        Autocast {
            policy: AutocastPolicy::default(),
            dtype: None,
        }
    }

    /// Autocast to `dtype` under `policy`.
    pub fn new(dtype: DType, policy: AutocastPolicy) -> Self {
        Autocast {
            policy,
            dtype: Some(dtype),
        }
    }

    /// The dtype `op` runs in for float inputs of these dtypes.
    pub fn dtype_for(&self, op: &str, inputs: &[DType]) -> DType {
        let widest = widest(inputs);
        let Some(low) = self.dtype else {
            return widest;
        };
        // f64 is never cast, as in PyTorch: an f64 computation asked for f64.
        if widest == DType::F64 {
            return widest;
        }
        match self.policy.precision(op) {
            OpPrecision::Lower => low,
            OpPrecision::Fp32 => DType::F32,
            OpPrecision::Widest => widest,
        }
    }

    /// The float inputs of `op` cast to the dtype it runs in (others unchanged; no copy
    /// where the dtype is already right).
    pub fn cast(&self, op: &str, inputs: &[&Tensor]) -> Result<Vec<Tensor>> {
        let floats: Vec<DType> = inputs
            .iter()
            .map(|t| t.dtype())
            .filter(|d| d.is_float())
            .collect();
        let to = self.dtype_for(op, &floats);
        inputs
            .iter()
            .map(|t| {
                if t.dtype().is_float() {
                    t.cast(to)
                } else {
                    Ok((*t).clone())
                }
            })
            .collect()
    }

    /// [`Autocast::cast`] of one input.
    pub fn cast_one(&self, op: &str, input: &Tensor) -> Result<Tensor> {
        let mut v = self.cast(op, &[input])?;
        Ok(v.remove(0))
    }
}

/// The widest of float dtypes: f64 over f32 over the 16-bit formats over the narrower ones;
/// f16 with bf16 (neither holds the other) is f32, as PyTorch promotes them. Empty: f32.
fn widest(dtypes: &[DType]) -> DType {
    let mut it = dtypes.iter().copied();
    let Some(first) = it.next() else {
        return DType::F32;
    };
    it.fold(first, |a, b| {
        if a == b {
            a
        } else if a.bits() == b.bits() {
            // Two formats of one width, neither holding the other: the next wider.
            if a.bits() >= 32 {
                DType::F64
            } else {
                DType::F32
            }
        } else if a.bits() > b.bits() {
            a
        } else {
            b
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn widest_promotes_like_pytorch() {
        assert_eq!(widest(&[DType::F16, DType::F32]), DType::F32);
        assert_eq!(widest(&[DType::F16, DType::BF16]), DType::F32);
        assert_eq!(widest(&[DType::F8E4M3FN, DType::F8E5M2]), DType::F32);
        assert_eq!(widest(&[DType::BF16, DType::F8E4M3FN]), DType::BF16);
        assert_eq!(widest(&[DType::F64, DType::F16]), DType::F64);
        assert_eq!(widest(&[]), DType::F32);
    }
}
