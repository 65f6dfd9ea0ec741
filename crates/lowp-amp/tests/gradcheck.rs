//! The hand-written backward pass of the perceptron against central finite differences of
//! the loss, everything in f64: every weight and bias of every layer.

use lowp_amp::Autocast;
use lowp_amp::master::WorkingCopy;
use lowp_amp::mlp::{Mlp, Numerics, loss_and_grad};
use lowp_tensor::{DType, Tensor};

/// The mean cross entropy of the perceptron at `params` on `(x, y)`, and its gradients.
fn loss(mlp: &Mlp, params: &[Tensor], x: &Tensor, y: &Tensor) -> (f64, Vec<Tensor>) {
    let mut numerics = Numerics::Autocast(Autocast::disabled());
    let copies: Vec<_> = params.iter().cloned().map(WorkingCopy::Plain).collect();
    let fwd = mlp.forward(&copies, x, &mut numerics, true).unwrap();
    assert_eq!(fwd.logits.dtype(), DType::F64);
    let (l, dlogits) = loss_and_grad(&numerics, &fwd.logits, y, 1.0).unwrap();
    let grads = mlp.backward(&fwd, &dlogits, &mut numerics).unwrap();
    (l, grads)
}

#[test]
fn every_layer_matches_finite_differences() {
    // Three hidden layers, so the middle ones' ReLU backward is exercised too.
    let mlp = Mlp::new(&[6, 9, 8, 7, 5]).unwrap();
    let mut params = mlp.init(3, DType::F64).unwrap();
    // Non-zero biases, so their gradients see the ReLU masks of non-trivial pre-activations.
    for (i, p) in params.iter_mut().enumerate().filter(|(i, _)| i % 2 == 1) {
        *p = Tensor::rand_normal(p.shape(), 0.0, 0.3, DType::F64, 100 + i as u64).unwrap();
    }
    let n = 11;
    let x = Tensor::rand_normal(&[n, 6], 0.0, 1.0, DType::F64, 7).unwrap();
    let y = Tensor::from_vec((0..n as i64).map(|i| (i * 3) % 5).collect(), &[n]).unwrap();
    let (_, grads) = loss(&mlp, &params, &x, &y);
    assert_eq!(grads.len(), 8);

    let h = 1e-6;
    for (p, (param, grad)) in params.iter().zip(&grads).enumerate() {
        assert_eq!(grad.shape(), param.shape(), "{}", mlp.param_names()[p]);
        assert_eq!(grad.dtype(), DType::F64);
        let analytic = grad.to_f64_vec();
        let base = param.to_f64_vec();
        let mut largest = 0f64;
        for i in 0..base.len() {
            let at = |delta: f64| {
                let mut v = base.clone();
                v[i] += delta;
                let mut ps = params.clone();
                ps[p] = Tensor::from_vec(v, param.shape()).unwrap();
                loss(&mlp, &ps, &x, &y).0
            };
            let numeric = (at(h) - at(-h)) / (2.0 * h);
            let err = (numeric - analytic[i]).abs();
            assert!(
                err <= 1e-7 + 1e-5 * numeric.abs(),
                "{}[{i}]: backward {} vs finite difference {numeric}",
                mlp.param_names()[p],
                analytic[i]
            );
            largest = largest.max(analytic[i].abs());
        }
        // The check is not vacuous: every parameter has gradients well above the tolerance.
        assert!(
            largest > 1e-3,
            "{}: largest gradient {largest}",
            mlp.param_names()[p]
        );
    }
}

#[test]
fn grad_scale_multiplies_every_gradient() {
    let mlp = Mlp::new(&[4, 5, 3, 2]).unwrap();
    let params = mlp.init(1, DType::F64).unwrap();
    let x = Tensor::rand_normal(&[3, 4], 0.0, 1.0, DType::F64, 2).unwrap();
    let y = Tensor::from_vec(vec![0i64, 1, 1], &[3]).unwrap();
    let mut numerics = Numerics::Autocast(Autocast::disabled());
    let copies: Vec<_> = params.iter().cloned().map(WorkingCopy::Plain).collect();
    let fwd = mlp.forward(&copies, &x, &mut numerics, true).unwrap();
    let (l1, d1) = loss_and_grad(&numerics, &fwd.logits, &y, 1.0).unwrap();
    let (l2, d2) = loss_and_grad(&numerics, &fwd.logits, &y, 1024.0).unwrap();
    assert_eq!(l1, l2, "the loss reported is unscaled");
    let g1 = mlp.backward(&fwd, &d1, &mut numerics).unwrap();
    let g2 = mlp.backward(&fwd, &d2, &mut numerics).unwrap();
    for (a, b) in g1.iter().zip(&g2) {
        let a: Vec<f64> = a.to_f64_vec().iter().map(|v| v * 1024.0).collect();
        assert_eq!(a, b.to_f64_vec());
    }
}
