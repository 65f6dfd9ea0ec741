//! The registry holds every op the tensor issue asks for, for every float dtype, and its
//! errors name what is missing.

use lowp_tensor::ops::{BINARY_OPS, UNARY_OPS};
use lowp_tensor::{Backend, DType, Tensor, registry};

/// The ops of the issue beside the element-wise ones.
const OTHER_OPS: &[&str] = &[
    "cast",
    "sum",
    "mean",
    "max",
    "min",
    "argmax",
    "add_n",
    "matmul",
    "transpose",
    "softmax",
    "log_softmax",
    "layer_norm",
    "cross_entropy",
    "isfinite",
    "isnan",
    "isinf",
    "check_finite_and_unscale",
    "update_loss_scaling",
    "relu_backward",
];

#[test]
fn every_op_has_a_kernel_for_every_float_dtype() {
    let reg = registry();
    let ops: Vec<&str> = UNARY_OPS
        .iter()
        .chain(BINARY_OPS)
        .chain(OTHER_OPS)
        .copied()
        .collect();
    assert_eq!(UNARY_OPS.len(), 34); // table 3.3's 32 functions, gelu and softplus
    for &op in &ops {
        for dtype in DType::floats() {
            assert!(reg.contains(op, Backend::Cpu, dtype), "{op} for {dtype}");
        }
    }
    let mut listed = reg.ops();
    listed.sort_unstable();
    let mut expected = ops.clone();
    expected.sort_unstable();
    assert_eq!(listed, expected, "the registry lists exactly these ops");
    // cast and transpose take every dtype, the rest only floats.
    assert_eq!(reg.dtypes("cast", Backend::Cpu), DType::ALL);
    assert_eq!(reg.dtypes("transpose", Backend::Cpu), DType::ALL);
    assert_eq!(
        reg.dtypes("sin", Backend::Cpu),
        DType::floats().collect::<Vec<_>>()
    );
}

#[test]
fn a_missing_kernel_names_the_op_the_dtype_and_the_registered_dtypes() {
    let x = Tensor::from_vec(vec![1u8, 2], &[2]).unwrap();
    let err = x.exp().unwrap_err().to_string();
    assert_eq!(
        err,
        format!(
            "op 'exp' has no cpu kernel for dtype u8; registered dtypes: {}",
            DType::floats()
                .map(|d| d.name())
                .collect::<Vec<_>>()
                .join(", ")
        )
    );
    let err = x.unary("no_such_op").unwrap_err().to_string();
    assert_eq!(
        err,
        "no op 'no_such_op' is registered on the cpu backend (asked for dtype u8)"
    );
    let a = Tensor::zeros(&[2], DType::F16).unwrap();
    let b = Tensor::zeros(&[2], DType::F32).unwrap();
    let err = a.add(&b).unwrap_err().to_string();
    assert_eq!(
        err,
        "add: the operands have different dtypes (f16, f32); cast them to one first"
    );
    let c = Tensor::zeros(&[3], DType::F16).unwrap();
    let err = a.mul(&c).unwrap_err().to_string();
    assert_eq!(err, "mul: shapes [2] and [3] cannot be broadcast together");
}

#[test]
fn an_op_called_with_the_wrong_kind_is_an_error_not_a_panic() {
    let m = Tensor::ones(&[2, 2], DType::BF16).unwrap();
    let err = m.unary("matmul").unwrap_err();
    assert!(
        matches!(&err, lowp_tensor::Error::Signature { op, expected: "unary", registered: "binary" } if op == "matmul"),
        "{err:?}"
    );
    assert_eq!(
        err.to_string(),
        "op 'matmul' has kernels of the binary signature, but was called with the unary one"
    );
    let err = m.binary("sin", &m).unwrap_err().to_string();
    assert_eq!(
        err,
        "op 'sin' has kernels of the unary signature, but was called with the binary one"
    );
    // Kernels of other signatures, through the registry itself.
    let err = registry()
        .get::<lowp_tensor::ReduceKernel>("softmax", Backend::Cpu, DType::F32)
        .unwrap_err()
        .to_string();
    assert_eq!(
        err,
        "op 'softmax' has kernels of the axis signature, but was called with the reduce one"
    );
    // An unknown op and a dtype mismatch through the generic entry points.
    let err = m.binary("no_such_op", &m).unwrap_err().to_string();
    assert!(err.contains("no op 'no_such_op'"), "{err}");
    let f = Tensor::ones(&[2, 2], DType::F32).unwrap();
    let err = m.binary("matmul", &f).unwrap_err().to_string();
    assert!(
        err.starts_with("matmul: the operands have different dtypes"),
        "{err}"
    );
}
