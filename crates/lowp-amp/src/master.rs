//! FP32 master weights and their low-precision working copies.
//!
//! The formats article: "small weight updates applied directly to FP16 values can be rounded
//! to zero; FP32 has enough mantissa bits to accumulate those tiny deltas". So the parameters
//! live in f32, the forward and backward passes read a copy in the low-precision format, the
//! optimizer updates the f32 masters, and the copies are refreshed from them after every
//! update ([`MasterWeights::update`]).

use crate::fp8::{DelayedScaling, Fp8Tensor, ScalingMeta};
use lowp_tensor::{DType, Error, Result, Tensor};

/// What the working copy of a parameter is.
#[derive(Clone, Debug, PartialEq)]
pub enum CopyFormat {
    /// The f32 master itself (shared, not copied).
    Master,
    /// The master rounded once to a dtype (f16, bf16, or any float format unscaled).
    Cast(DType),
    /// The master scaled per tensor and rounded (saturating) to FP8, the scale from the
    /// slot's delayed-scaling history, to which every refresh records the master's amax.
    Fp8(ScalingMeta),
}

/// A working copy.
#[derive(Clone, Debug, PartialEq)]
pub enum WorkingCopy {
    /// A tensor of the copy's dtype (f32 for [`CopyFormat::Master`]).
    Plain(Tensor),
    /// A scaled FP8 tensor.
    Fp8(Fp8Tensor),
}

impl WorkingCopy {
    /// The plain tensor; an error for an FP8 copy (whose values need their scale).
    pub fn tensor(&self) -> Result<&Tensor> {
        match self {
            WorkingCopy::Plain(t) => Ok(t),
            WorkingCopy::Fp8(_) => Err(Error::Argument {
                op: "WorkingCopy::tensor",
                message: "this copy is a scaled FP8 tensor; use fp8() or dequantize()".into(),
            }),
        }
    }

    /// The FP8 tensor; an error for a plain copy.
    pub fn fp8(&self) -> Result<&Fp8Tensor> {
        match self {
            WorkingCopy::Fp8(t) => Ok(t),
            WorkingCopy::Plain(_) => Err(Error::Argument {
                op: "WorkingCopy::fp8",
                message: "this copy is a plain tensor, not FP8".into(),
            }),
        }
    }

    /// The values the copy holds, in f32 (an FP8 copy times its inverse scale).
    pub fn dequantize(&self) -> Result<Tensor> {
        match self {
            WorkingCopy::Plain(t) => t.cast(DType::F32),
            WorkingCopy::Fp8(t) => t.dequantize(),
        }
    }
}

/// One parameter: its name, f32 master, copy format and working copy.
#[derive(Clone, Debug, PartialEq)]
struct Param {
    name: String,
    master: Tensor,
    format: CopyFormat,
    copy: WorkingCopy,
}

/// Parameters kept in f32 with a low-precision working copy each.
///
/// ```
/// use lowp_amp::master::{CopyFormat, MasterWeights};
/// use lowp_tensor::{DType, Tensor};
///
/// let w = Tensor::full(&[2], 1.0, DType::F32).unwrap();
/// let mut params = MasterWeights::new(vec![("w".into(), w, CopyFormat::Cast(DType::F16))])
///     .unwrap();
/// // An update of 2^-12 is below half an ulp of 1 in f16 (2^-11): the f16 weight alone
/// // would never move; the f32 master accumulates it.
/// for _ in 0..4 {
///     params.update(|_, w| w.iter_mut().for_each(|x| *x += 1.0 / 4096.0)).unwrap();
/// }
/// assert_eq!(params.master(0).unwrap().to_f64_vec(), [1.0009765625; 2]);
/// assert_eq!(params.copy(0).unwrap().tensor().unwrap().to_f64_vec(), [1.0009765625; 2]);
/// assert!(params.master(1).is_err()); // one parameter only
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct MasterWeights {
    params: Vec<Param>,
}

impl MasterWeights {
    /// Masters from `(name, value, copy format)`: each value cast to f32 (exact from any
    /// narrower float), its copy made.
    pub fn new(params: Vec<(String, Tensor, CopyFormat)>) -> Result<MasterWeights> {
        let params = params
            .into_iter()
            .map(|(name, value, format)| {
                let master = value.cast(DType::F32)?;
                let mut p = Param {
                    name,
                    copy: WorkingCopy::Plain(master.clone()),
                    master,
                    format,
                };
                refresh(&mut p)?;
                Ok(p)
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(MasterWeights { params })
    }

    /// The number of parameters.
    pub fn len(&self) -> usize {
        self.params.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.params.is_empty()
    }

    /// Parameter `i`, or an error naming the index and the number of parameters.
    fn param(&self, i: usize) -> Result<&Param> {
        self.params.get(i).ok_or_else(|| Error::Argument {
            op: "MasterWeights",
            message: format!(
                "no parameter {i}: there are {} (indices 0..{})",
                self.params.len(),
                self.params.len()
            ),
        })
    }

    /// The name of parameter `i`; an error when there is no parameter `i`.
    pub fn name(&self, i: usize) -> Result<&str> {
        self.param(i).map(|p| p.name.as_str())
    }

    /// The f32 master of parameter `i`; an error when there is no parameter `i`.
    pub fn master(&self, i: usize) -> Result<&Tensor> {
        self.param(i).map(|p| &p.master)
    }

    /// The working copy of parameter `i` (what the forward and backward passes read); an
    /// error when there is no parameter `i`.
    pub fn copy(&self, i: usize) -> Result<&WorkingCopy> {
        self.param(i).map(|p| &p.copy)
    }

    /// The copy format of parameter `i`; an error when there is no parameter `i`.
    pub fn format(&self, i: usize) -> Result<&CopyFormat> {
        self.param(i).map(|p| &p.format)
    }

    /// Applies `f(i, master values)` to every master in f32, then refreshes every copy.
    pub fn update(&mut self, mut f: impl FnMut(usize, &mut [f32])) -> Result<()> {
        for (i, p) in self.params.iter_mut().enumerate() {
            let mut values = p.master.to_vec::<f32>()?;
            f(i, &mut values);
            p.master = Tensor::from_vec(values, p.master.shape())?;
        }
        self.refresh()
    }

    /// Re-derives every working copy from its master.
    pub fn refresh(&mut self) -> Result<()> {
        self.params.iter_mut().try_for_each(refresh)
    }

    /// Ends an iteration for the FP8 copies: each slot's scale from its amax history, then
    /// the history rolled (see [`ScalingMeta::update`]). The next refresh uses the new
    /// scales.
    pub fn update_scales(&mut self, recipe: &DelayedScaling) {
        for p in &mut self.params {
            if let CopyFormat::Fp8(meta) = &mut p.format {
                meta.update(recipe);
            }
        }
    }

    /// The masters, in order (for saving, or for an f32 evaluation).
    pub fn masters(&self) -> Vec<Tensor> {
        self.params.iter().map(|p| p.master.clone()).collect()
    }
}

/// Remakes one copy from its master.
fn refresh(p: &mut Param) -> Result<()> {
    p.copy = match &mut p.format {
        CopyFormat::Master => WorkingCopy::Plain(p.master.clone()),
        CopyFormat::Cast(dtype) => WorkingCopy::Plain(p.master.cast(*dtype)?),
        CopyFormat::Fp8(meta) => WorkingCopy::Fp8(meta.quantize(&p.master)?),
    };
    Ok(())
}
