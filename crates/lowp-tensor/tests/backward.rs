//! `relu_backward` on every float dtype against the f64 reference `input > 0 ? grad : 0`:
//! every value of every lowp format as the input (so the zeros, the subnormals and the NaNs
//! of each format are all met), f32 and f64 samples, and the error for mismatched operands.

mod common;

use common::*;
use lowp::LowpFloat;
use lowp_tensor::Tensor;

/// The reference, in f64: the gradient where the input is above zero, else 0.
fn reference(grad: f64, input: f64) -> f64 {
    if input > 0.0 { grad } else { 0.0 }
}

/// Every value of `T` as the input, against a gradient walking the values in reverse.
fn every_value_as_input<T: LowpFloat + lowp_tensor::FloatElement>() {
    let xs = every_value::<T>();
    let gs: Vec<T> = xs.iter().rev().copied().collect();
    let out = tensor(&gs).relu_backward(&tensor(&xs)).unwrap();
    assert_eq!(out.dtype(), dtype_of::<T>());
    for ((&r, &g), &x) in out.to_vec::<T>().unwrap().iter().zip(&gs).zip(&xs) {
        let want = reference(LowpFloat::to_f64(g), LowpFloat::to_f64(x));
        assert!(
            correctly_rounded(r, want),
            "{}: grad {g} input {x} gave {r}, want {want}",
            T::FORMAT.name
        );
    }
}

#[test]
fn relu_backward_on_every_value_of_every_lowp_format() {
    macro_rules! check {
        ($t:ty) => {
            every_value_as_input::<$t>();
        };
    }
    for_each_lowp!(check);
}

#[test]
fn relu_backward_on_f32_and_f64_samples() {
    let xs = f32_samples(10_000);
    let gs: Vec<f32> = xs.iter().rev().copied().collect();
    let out = tensor(&gs).relu_backward(&tensor(&xs)).unwrap();
    for ((&r, &g), &x) in out.to_vec::<f32>().unwrap().iter().zip(&gs).zip(&xs) {
        assert!(correctly_rounded_f32(r, reference(g as f64, x as f64)));
    }
    let xs: Vec<f64> = xs.iter().map(|&x| x as f64 * 1.1).collect();
    let gs: Vec<f64> = xs.iter().rev().copied().collect();
    let out = tensor(&gs).relu_backward(&tensor(&xs)).unwrap();
    for ((&r, &g), &x) in out.to_vec::<f64>().unwrap().iter().zip(&gs).zip(&xs) {
        assert_eq!(ulps_f64(r, reference(g, x)), 0);
    }
}

#[test]
fn relu_backward_checks_its_operands() {
    let a = Tensor::ones(&[2, 3], lowp_tensor::DType::F16).unwrap();
    let b = Tensor::ones(&[3, 2], lowp_tensor::DType::F16).unwrap();
    let err = a.relu_backward(&b).unwrap_err().to_string();
    assert!(
        err.contains("relu_backward") && err.contains("same shape"),
        "{err}"
    );
    let c = Tensor::ones(&[2, 3], lowp_tensor::DType::F32).unwrap();
    assert!(a.relu_backward(&c).is_err());
    let i = Tensor::from_vec(vec![1i32; 6], &[2, 3]).unwrap();
    let err = i.relu_backward(&i).unwrap_err().to_string();
    assert!(err.contains("no cpu kernel for dtype i32"), "{err}");
}
