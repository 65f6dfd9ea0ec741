//! A multi-layer perceptron with a hand-written backward pass built on the tensor ops.
//!
//! Layer `l` computes `z_l = a_{l-1} W_l + b_l` (`W_l` is `[in, out]`), and every layer but
//! the last applies ReLU: `a_l = relu(z_l)`. The logits are the last `z`; the loss is the mean
//! cross entropy. Backward, from `dz_L` (the gradient of the loss at the logits):
//!
//! ```text
//! dW_l = a_{l-1}^T dz_l      db_l = sum over rows of dz_l
//! da_{l-1} = dz_l W_l^T      dz_{l-1} = da_{l-1} where z_{l-1} > 0, else 0
//! ```
//!
//! and at the loss, `dz_L = (softmax(z_L) - onehot(labels)) / n`. Where each of these runs is
//! the [`Numerics`]' business: under [`Numerics::Autocast`] the linear layers (forward and
//! backward) run in the autocast dtype and the loss in f32, as the policy says; under
//! [`Numerics::Fp8`] every matrix product takes FP8 operands with delayed scaling (E4M3
//! activations and weights, E5M2 gradients) and everything else runs in f32.

use crate::autocast::Autocast;
use crate::data::one_hot;
use crate::fp8::{DelayedScaling, Fp8Tensor, ScalingMeta, fp8_matmul};
use crate::master::WorkingCopy;
use lowp_tensor::{DType, Error, Result, Tensor};

/// The FP8 slots of one linear layer: its input (forward, E4M3 in the hybrid recipe) and the
/// gradient at its output (backward, E5M2). The weight's slot lives with its master copy.
#[derive(Clone, Debug, PartialEq)]
pub struct LayerMetas {
    /// The layer's input activations.
    pub input: ScalingMeta,
    /// The gradient arriving at the layer's output.
    pub grad_output: ScalingMeta,
}

/// Where and how the model computes.
#[derive(Clone, Debug, PartialEq)]
pub enum Numerics {
    /// Ops in the dtypes an autocast policy gives them (autocast off: in the parameters' and
    /// input's dtype, f32 or f64).
    Autocast(Autocast),
    /// Matrix products in FP8 with delayed scaling; the rest in f32.
    Fp8 {
        /// The recipe.
        recipe: DelayedScaling,
        /// One pair of slots per layer.
        metas: Vec<LayerMetas>,
    },
}

impl Numerics {
    /// FP8 numerics for `layers` linear layers, every slot fresh.
    pub fn fp8(recipe: DelayedScaling, layers: usize) -> Result<Numerics> {
        recipe.validate()?;
        let metas = (0..layers)
            .map(|_| {
                Ok(LayerMetas {
                    input: ScalingMeta::new(recipe.forward_dtype(), recipe.amax_history_len)?,
                    grad_output: ScalingMeta::new(
                        recipe.backward_dtype(),
                        recipe.amax_history_len,
                    )?,
                })
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(Numerics::Fp8 { recipe, metas })
    }

    /// Ends an iteration: the FP8 slots' scales from their histories (nothing otherwise).
    pub fn update_scales(&mut self) {
        if let Numerics::Fp8 { recipe, metas } = self {
            for m in metas {
                m.input.update(recipe);
                m.grad_output.update(recipe);
            }
        }
    }

    /// `x` cast to where the autocast policy runs `op` (under FP8 every tensor outside the
    /// matrix products is f32 already, and stays).
    pub fn cast_for(&self, op: &str, x: &Tensor) -> Result<Tensor> {
        match self {
            Numerics::Autocast(ac) => ac.cast_one(op, x),
            Numerics::Fp8 { .. } => Ok(x.clone()),
        }
    }
}

/// What the forward pass keeps of one layer for the backward pass.
#[derive(Clone, Debug)]
enum LayerCache {
    /// The input and weight as the product read them.
    Plain { input: Tensor, weight: Tensor },
    /// The FP8 input and weight.
    Fp8 { input: Fp8Tensor, weight: Fp8Tensor },
}

/// The result of a forward pass, with what the backward pass needs.
#[derive(Clone, Debug)]
pub struct Forward {
    /// The logits, `[n, classes]`, in the dtype the last layer ran in.
    pub logits: Tensor,
    layers: Vec<LayerCache>,
    /// The ReLU outputs of every layer but the last.
    activations: Vec<Tensor>,
}

/// The layer sizes of a perceptron: inputs, hidden layers, classes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Mlp {
    sizes: Vec<usize>,
}

impl Mlp {
    /// A perceptron with these layer sizes (`[64, 128, 64, 10]`: 64 inputs, hidden layers of
    /// 128 and 64, 10 classes); at least an input and an output size, none zero.
    pub fn new(sizes: &[usize]) -> Result<Mlp> {
        if sizes.len() < 2 || sizes.contains(&0) {
            return Err(Error::Argument {
                op: "Mlp",
                message: format!("needs at least two non-zero layer sizes, not {sizes:?}"),
            });
        }
        Ok(Mlp {
            sizes: sizes.to_vec(),
        })
    }

    /// The layer sizes.
    pub fn sizes(&self) -> &[usize] {
        &self.sizes
    }

    /// The number of linear layers.
    pub fn layers(&self) -> usize {
        self.sizes.len() - 1
    }

    /// The parameter names, in order: `fc1.weight`, `fc1.bias`, `fc2.weight`, ...
    pub fn param_names(&self) -> Vec<String> {
        (1..=self.layers())
            .flat_map(|l| [format!("fc{l}.weight"), format!("fc{l}.bias")])
            .collect()
    }

    /// Initial parameters in `dtype`, in [`Mlp::param_names`]' order: weights drawn from the
    /// normal distribution of standard deviation `sqrt(2 / fan_in)` (He et al., 2015, for
    /// ReLU layers), each from its own seed derived from `seed`; biases zero.
    pub fn init(&self, seed: u64, dtype: DType) -> Result<Vec<Tensor>> {
        let mut params = Vec::with_capacity(2 * self.layers());
        for (l, pair) in self.sizes.windows(2).enumerate() {
            let (fan_in, fan_out) = (pair[0], pair[1]);
            let std = (2.0 / fan_in as f64).sqrt();
            let layer_seed = seed.wrapping_mul(0x9e37_79b9).wrapping_add(l as u64);
            params.push(Tensor::rand_normal(
                &[fan_in, fan_out],
                0.0,
                std,
                dtype,
                layer_seed,
            )?);
            params.push(Tensor::zeros(&[fan_out], dtype)?);
        }
        Ok(params)
    }

    /// Checks that `params` are one weight and one bias per layer, of the right shapes.
    fn check(&self, params: &[WorkingCopy]) -> Result<()> {
        let shape = |c: &WorkingCopy| match c {
            WorkingCopy::Plain(t) => t.shape().to_vec(),
            WorkingCopy::Fp8(t) => t.data.shape().to_vec(),
        };
        let ok = params.len() == 2 * self.layers()
            && self.sizes.windows(2).enumerate().all(|(l, p)| {
                shape(&params[2 * l]) == [p[0], p[1]] && shape(&params[2 * l + 1]) == [p[1]]
            });
        if ok {
            Ok(())
        } else {
            Err(Error::Shape {
                op: "Mlp",
                message: format!(
                    "the parameters do not fit layer sizes {:?}: {:?}",
                    self.sizes,
                    params.iter().map(shape).collect::<Vec<_>>()
                ),
            })
        }
    }

    /// Checks that FP8 numerics have a pair of slots for every layer.
    fn check_numerics(&self, numerics: &Numerics) -> Result<()> {
        match numerics {
            Numerics::Fp8 { metas, .. } if metas.len() < self.layers() => Err(Error::Argument {
                op: "Mlp",
                message: format!(
                    "the FP8 numerics have slots for {} layers; the perceptron has {}",
                    metas.len(),
                    self.layers()
                ),
            }),
            _ => Ok(()),
        }
    }

    /// The forward pass of a batch `x` (`[n, inputs]`). Under FP8 numerics the input
    /// activations' amaxes are recorded when `record` (training), not otherwise
    /// (evaluation).
    pub fn forward(
        &self,
        params: &[WorkingCopy],
        x: &Tensor,
        numerics: &mut Numerics,
        record: bool,
    ) -> Result<Forward> {
        self.check(params)?;
        self.check_numerics(numerics)?;
        let last = self.layers() - 1;
        let mut a = x.clone();
        let mut layers = Vec::with_capacity(self.layers());
        let mut activations = Vec::with_capacity(last);
        for l in 0..self.layers() {
            let (w, b) = (&params[2 * l], &params[2 * l + 1]);
            let z = match numerics {
                Numerics::Autocast(ac) => {
                    let cast = ac.cast("linear", &[&a, w.tensor()?, b.tensor()?])?;
                    let z = cast[0].matmul(&cast[1])?.add(&cast[2])?;
                    layers.push(LayerCache::Plain {
                        input: cast[0].clone(),
                        weight: cast[1].clone(),
                    });
                    z
                }
                Numerics::Fp8 { metas, .. } => {
                    let a32 = a.cast(DType::F32)?;
                    let input = if record {
                        metas[l].input.quantize(&a32)?
                    } else {
                        metas[l].input.quantize_frozen(&a32)?
                    };
                    let weight = w.fp8()?.clone();
                    let z = fp8_matmul(&input, false, &weight, false)?.add(&b.dequantize()?)?;
                    layers.push(LayerCache::Fp8 { input, weight });
                    z
                }
            };
            if l == last {
                return Ok(Forward {
                    logits: z,
                    layers,
                    activations,
                });
            }
            a = numerics.cast_for("relu", &z)?.relu()?;
            activations.push(a.clone());
        }
        unreachable!("the last layer returns")
    }

    /// The gradients of every parameter, in [`Mlp::param_names`]' order, from `dlogits`, the
    /// gradient of the (scaled) loss at the logits. Under autocast they come in the dtype
    /// each layer ran in; under FP8, in f32.
    pub fn backward(
        &self,
        fwd: &Forward,
        dlogits: &Tensor,
        numerics: &mut Numerics,
    ) -> Result<Vec<Tensor>> {
        self.check_numerics(numerics)?;
        if fwd.layers.len() != self.layers() || fwd.activations.len() + 1 != self.layers() {
            return Err(Error::Argument {
                op: "Mlp::backward",
                message: format!(
                    "the forward pass ran {} layers; this perceptron has {}",
                    fwd.layers.len(),
                    self.layers()
                ),
            });
        }
        let mut grads = vec![None; 2 * self.layers()];
        let mut dz = dlogits.clone();
        for l in (0..self.layers()).rev() {
            let dx = match (&fwd.layers[l], &mut *numerics) {
                (LayerCache::Plain { input, weight }, _) => {
                    // The backward of a layer runs in the dtype its forward ran in.
                    let dz_low = dz.cast(input.dtype())?;
                    grads[2 * l] = Some(input.transpose()?.matmul(&dz_low)?);
                    grads[2 * l + 1] = Some(dz_low.sum(Some(0))?);
                    if l == 0 {
                        break;
                    }
                    dz_low.matmul(&weight.transpose()?)?
                }
                (LayerCache::Fp8 { input, weight }, Numerics::Fp8 { metas, .. }) => {
                    let dz32 = dz.cast(DType::F32)?;
                    let g = metas[l].grad_output.quantize(&dz32)?;
                    grads[2 * l] = Some(fp8_matmul(input, true, &g, false)?);
                    // The bias gradient from the unquantised gradient, as TE computes it.
                    grads[2 * l + 1] = Some(dz32.sum(Some(0))?);
                    if l == 0 {
                        break;
                    }
                    fp8_matmul(&g, false, weight, true)?
                }
                (LayerCache::Fp8 { .. }, Numerics::Autocast(_)) => {
                    return Err(Error::Argument {
                        op: "Mlp::backward",
                        message: "the forward pass ran in FP8 but the numerics are not FP8".into(),
                    });
                }
            };
            let act = &fwd.activations[l - 1];
            dz = dx.cast(act.dtype())?.relu_backward(act)?;
        }
        Ok(grads
            .into_iter()
            .map(|g| g.expect("every layer sets its gradients"))
            .collect())
    }
}

/// The mean cross entropy of `logits` against `labels` (as an f64) and its gradient at the
/// logits times `grad_scale`: `(softmax(logits) - onehot(labels)) * grad_scale / n`. Both run
/// where the autocast policy puts `cross_entropy` and `softmax` (f32 for low-precision
/// logits, f64 for f64).
pub fn loss_and_grad(
    numerics: &Numerics,
    logits: &Tensor,
    labels: &Tensor,
    grad_scale: f64,
) -> Result<(f64, Tensor)> {
    let loss = numerics
        .cast_for("cross_entropy", logits)?
        .cross_entropy(labels)?
        .item()?;
    let probs = numerics.cast_for("softmax", logits)?.softmax(1)?;
    let [n, classes] = *logits.shape() else {
        return Err(Error::Shape {
            op: "loss_and_grad",
            message: format!(
                "needs logits of shape [n, classes], not {:?}",
                logits.shape()
            ),
        });
    };
    let target = one_hot(labels.as_slice::<i64>()?, classes)?.cast(probs.dtype())?;
    let factor = Tensor::full(&[], grad_scale / n as f64, probs.dtype())?;
    let grad = probs.sub(&target)?.mul(&factor)?;
    Ok((loss, grad))
}

/// The share of rows whose largest logit is at their label.
pub fn accuracy(logits: &Tensor, labels: &Tensor) -> Result<f64> {
    let predicted = logits.argmax(Some(1))?.to_vec::<i64>()?;
    let labels = labels.as_slice::<i64>()?;
    let right = predicted.iter().zip(labels).filter(|(p, l)| p == l).count();
    Ok(right as f64 / labels.len().max(1) as f64)
}
