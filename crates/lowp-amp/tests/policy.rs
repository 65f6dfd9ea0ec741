//! The autocast policy as data (defaults, text and JSON forms, a user's change taking
//! effect), and the master weights' working copies in each format.

use lowp_amp::master::{CopyFormat, MasterWeights};
use lowp_amp::{Autocast, AutocastPolicy, DelayedScaling, OpPrecision, ScalingMeta};
use lowp_tensor::{DType, Tensor};

#[test]
fn default_lists_follow_pytorch_and_paddle() {
    let p = AutocastPolicy::default();
    for op in ["matmul", "linear"] {
        assert_eq!(p.precision(op), OpPrecision::Lower, "{op}");
    }
    for op in [
        "softmax",
        "log_softmax",
        "layer_norm",
        "cross_entropy",
        "sum",
        "exp",
        "log",
    ] {
        assert_eq!(p.precision(op), OpPrecision::Fp32, "{op}");
    }
    assert_eq!(p.precision("relu"), OpPrecision::Widest);
}

#[test]
fn ops_run_where_the_policy_says() {
    let ac = Autocast::new(DType::F16, AutocastPolicy::default());
    let x = Tensor::full(&[2, 2], 0.1, DType::F32).unwrap();
    let h = Tensor::full(&[2, 2], 0.1, DType::BF16).unwrap();
    let cast = ac.cast("matmul", &[&x, &h]).unwrap();
    assert!(cast.iter().all(|t| t.dtype() == DType::F16));
    assert_eq!(ac.cast_one("softmax", &h).unwrap().dtype(), DType::F32);
    // Unlisted: the widest input (f16 with bf16 promotes to f32, as in PyTorch).
    let mixed = ac.cast("add", &[&cast[0], &h]).unwrap();
    assert!(mixed.iter().all(|t| t.dtype() == DType::F32));
    // f64 is never lowered; integer labels are left alone.
    let d = Tensor::full(&[2], 0.1, DType::F64).unwrap();
    assert_eq!(ac.cast_one("matmul", &d).unwrap().dtype(), DType::F64);
    let labels = Tensor::from_vec(vec![1i64, 0], &[2]).unwrap();
    assert_eq!(
        ac.cast("cross_entropy", &[&h, &labels]).unwrap()[1].dtype(),
        DType::I64
    );
    // Autocast off: every op in its inputs' dtype.
    assert_eq!(
        Autocast::disabled().cast_one("matmul", &x).unwrap().dtype(),
        DType::F32
    );
}

#[test]
fn a_users_change_takes_effect() {
    let mut p = AutocastPolicy::default();
    p.set("matmul", OpPrecision::Fp32);
    p.set("relu", OpPrecision::Lower);
    let ac = Autocast::new(DType::BF16, p);
    let x = Tensor::full(&[2], 1.0, DType::F32).unwrap();
    assert_eq!(ac.cast_one("matmul", &x).unwrap().dtype(), DType::F32);
    assert_eq!(ac.cast_one("relu", &x).unwrap().dtype(), DType::BF16);
}

#[test]
fn text_and_json_forms_round_trip() {
    let p = AutocastPolicy::default();
    let text = p.to_string();
    assert!(text.starts_with("lower: linear matmul\nfp32: "), "{text}");
    assert_eq!(text.parse::<AutocastPolicy>().unwrap(), p);
    assert_eq!(AutocastPolicy::from_json(&p.to_json()).unwrap(), p);
    let custom: AutocastPolicy = "# mine\nlower: matmul\nfp32: softmax, sum\n"
        .parse()
        .unwrap();
    assert_eq!(custom.ops().count(), 3);
    assert_eq!(custom.precision("linear"), OpPrecision::Widest);
    let err = "lowest: matmul".parse::<AutocastPolicy>().unwrap_err();
    assert!(err.to_string().contains("line 1"), "{err}");
    assert!(AutocastPolicy::from_json("{\"matmul\": \"f8\"}").is_err());
}

#[test]
fn working_copies_in_every_format() {
    let w = Tensor::from_vec(vec![0.1f32, -3.0, 1000.0, 1e-6], &[4]).unwrap();
    let meta = ScalingMeta::new(DType::F8E4M3FN, 4).unwrap();
    let mut params = MasterWeights::new(vec![
        ("a".into(), w.clone(), CopyFormat::Master),
        ("b".into(), w.clone(), CopyFormat::Cast(DType::BF16)),
        ("c".into(), w.clone(), CopyFormat::Fp8(meta)),
    ])
    .unwrap();
    assert_eq!(params.copy(0).unwrap().tensor().unwrap(), &w);
    assert_eq!(
        params.copy(1).unwrap().tensor().unwrap(),
        &w.cast(DType::BF16).unwrap()
    );
    // The first FP8 copy uses scale 1 (nothing recorded yet): 1000 saturates at 448.
    let fp8 = params.copy(2).unwrap().fp8().unwrap();
    assert_eq!(fp8.scale_inv, 1.0);
    assert_eq!(fp8.data.to_f64_vec()[2], 448.0);
    // After the scale update the amax of 1000 maps to 448 exactly.
    params.update_scales(&DelayedScaling::default());
    params.refresh().unwrap();
    let back = params.copy(2).unwrap().dequantize().unwrap().to_f64_vec();
    assert!((back[2] - 1000.0).abs() < 1e-3, "{back:?}");
    assert!((back[1] + 3.0).abs() <= 3.0 / 16.0, "{back:?}");
    assert!(params.copy(2).unwrap().tensor().is_err());
    assert!(params.copy(1).unwrap().fp8().is_err());
    assert_eq!(params.masters()[2], w, "the masters stay f32 and exact");
}
