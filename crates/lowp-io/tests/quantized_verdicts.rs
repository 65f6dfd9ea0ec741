//! Verdicts on quantized weights that do not hide damage: decoding a checkpoint whose scales
//! are corrupt (NaN, infinite, zero over non-zero elements, negative; E8M0 255; an NVFP4
//! second scale NaN, zero, negative or infinite) fails the weight, naming how many blocks are
//! bad, while lowp's own healthy output (all-zero blocks with scale 0 included) decodes
//! `exact` or `ok`; and quantizing a weight whose ordinary values are flushed to zero beside a
//! huge row warns, giving the share flushed.

use lowp_io::layouts::Layout;
use lowp_io::quant::Scheme;
use lowp_io::report::{TensorReport, Verdict};
use lowp_io::{FloatType, Options, Target};
use safetensors::tensor::TensorView;
use safetensors::{Dtype, SafeTensors};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};

mod common;
use common::Rng;

/// A fresh directory for one test.
fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("lowp-verdicts-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// A tensor to write: name, dtype, shape, bytes.
type Tensor = (String, Dtype, Vec<usize>, Vec<u8>);

fn write(path: &Path, tensors: &[Tensor]) {
    let views: Vec<(String, TensorView<'_>)> = tensors
        .iter()
        .map(|(n, d, s, b)| (n.clone(), TensorView::new(*d, s.clone(), b).unwrap()))
        .collect();
    safetensors::serialize_to_file(views, None, path).unwrap();
}

fn read(path: &Path) -> Vec<Tensor> {
    let bytes = std::fs::read(path).unwrap();
    let st = SafeTensors::deserialize(&bytes).unwrap();
    st.tensors()
        .into_iter()
        .map(|(n, v)| (n, v.dtype(), v.shape().to_vec(), v.data().to_vec()))
        .collect()
}

/// A Llama-like config whose one linear weight is [`WEIGHT`].
fn config() -> Value {
    json!({
        "model_type": "llama", "vocab_size": 256, "hidden_size": 128,
        "max_position_embeddings": 64, "tie_word_embeddings": false,
    })
}

const WEIGHT: &str = "model.layers.0.self_attn.q_proj.weight";

/// Writes a model directory holding the f32 weight `w` (`[rows, cols]`) as [`WEIGHT`].
fn model(dir: &Path, w: &[f32], rows: usize, cols: usize) {
    std::fs::create_dir_all(dir).unwrap();
    let bytes = w.iter().flat_map(|v| v.to_le_bytes()).collect();
    let t = (WEIGHT.to_string(), Dtype::F32, vec![rows, cols], bytes);
    write(&dir.join("model.safetensors"), &[t]);
    std::fs::write(dir.join("config.json"), config().to_string()).unwrap();
}

/// Roughly Gaussian weights (a sum of four uniforms), sigma about 0.03: no outliers.
fn gaussian(rng: &mut Rng, n: usize) -> Vec<f32> {
    (0..n)
        .map(|_| ((0..4).map(|_| rng.unit() - 0.5).sum::<f64>() * 0.05) as f32)
        .collect()
}

/// The weight of the corruption tests, `[128, 256]`: Gaussian, but columns 128..256 and row
/// 5 all zero, so that every scheme has all-zero blocks, which lowp writes with scale 0 (fp8,
/// nvfp4) or E8M0 byte 0.
fn weight_with_zero_blocks() -> Vec<f32> {
    let mut w = gaussian(&mut Rng(11), 128 * 256);
    for (i, v) in w.iter_mut().enumerate() {
        let (r, c) = (i / 256, i % 256);
        if c >= 128 || r == 5 {
            *v = 0.0;
        }
    }
    w
}

/// The report of [`WEIGHT`].
fn row(report: &lowp_io::Report) -> &TensorReport {
    report.tensors.iter().find(|t| t.name == WEIGHT).unwrap()
}

/// Decodes the model directory `quantized` to f32 (into `out`, removed first).
fn decode(quantized: &Path, out: &Path) -> lowp_io::Report {
    let _ = std::fs::remove_dir_all(out);
    lowp_io::convert(&Options::new(
        quantized,
        Some(out.to_path_buf()),
        FloatType::F32,
    ))
    .unwrap()
}

/// Quantizes `input` in `scheme` and `layout` into `out`.
fn quantize(input: &Path, out: &Path, scheme: Scheme, layout: Layout) -> lowp_io::Report {
    let _ = std::fs::remove_dir_all(out);
    let mut opts = Options::new(input, Some(out.to_path_buf()), Target::Scheme(scheme));
    opts.layout = Some(layout);
    lowp_io::convert(&opts).unwrap()
}

/// Rewrites the tensor `name` of `dir/model.safetensors` through `edit`.
fn corrupt(dir: &Path, name: &str, edit: impl Fn(&mut [u8])) {
    let path = dir.join("model.safetensors");
    let mut tensors = read(&path);
    let t = tensors.iter_mut().find(|t| t.0 == name).unwrap();
    edit(&mut t.3[..]);
    write(&path, &tensors);
}

/// Rewrites a scale tensor's bytes in place.
type Edit = Box<dyn Fn(&mut [u8])>;

/// A way of corrupting scales: its name, the scale tensor's suffix, how it rewrites the
/// bytes, and how many blocks it makes bad.
struct Case {
    what: &'static str,
    suffix: &'static str,
    edit: Edit,
    bad: u64,
}

/// Sets float scale `i` (F32 or BF16, as `width` bytes say) to `v`.
fn set_float(bytes: &mut [u8], i: usize, width: usize, v: f32) {
    if width == 4 {
        bytes[4 * i..4 * i + 4].copy_from_slice(&v.to_le_bytes());
    } else {
        let hi = (v.to_bits() >> 16) as u16;
        bytes[2 * i..2 * i + 2].copy_from_slice(&hi.to_le_bytes());
    }
}

/// The float scale `i` (F32 or BF16).
fn get_float(bytes: &[u8], i: usize, width: usize) -> f32 {
    if width == 4 {
        f32::from_le_bytes(bytes[4 * i..4 * i + 4].try_into().unwrap())
    } else {
        f32::from_bits((u16::from_le_bytes([bytes[2 * i], bytes[2 * i + 1]]) as u32) << 16)
    }
}

/// The corruptions of the first `n` block scales of a float scale tensor (every one of those
/// blocks holds non-zero elements).
fn float_cases(suffix: &'static str, width: usize, n: usize) -> Vec<Case> {
    let each = move |v: f32| -> Edit {
        Box::new(move |b: &mut [u8]| (0..n).for_each(|i| set_float(b, i, width, v)))
    };
    let negated: Edit = Box::new(move |b: &mut [u8]| {
        (0..n).for_each(|i| {
            let v = get_float(b, i, width);
            set_float(b, i, width, -v)
        })
    });
    vec![
        ("NaN", each(f32::NAN)),
        ("+inf", each(f32::INFINITY)),
        ("-inf", each(f32::NEG_INFINITY)),
        ("zero on a non-zero block", each(0.0)),
        ("-0 on a non-zero block", each(-0.0)),
        ("negative", negated),
    ]
    .into_iter()
    .map(|(what, edit)| Case {
        what,
        suffix,
        edit,
        bad: n as u64,
    })
    .collect()
}

/// The corruptions of the first `n` E4M3 block scales of nvfp4.
fn e4m3_cases(n: usize) -> Vec<Case> {
    let each = move |f: fn(u8) -> u8| -> Edit {
        Box::new(move |b: &mut [u8]| b[..n].iter_mut().for_each(|s| *s = f(*s)))
    };
    vec![
        ("E4M3 NaN 0x7F", each(|_| 0x7f)),
        ("E4M3 NaN 0xFF", each(|_| 0xff)),
        ("negative E4M3", each(|s| s | 0x80)),
        ("E4M3 zero on a non-zero block", each(|_| 0)),
    ]
    .into_iter()
    .map(|(what, edit)| Case {
        what,
        suffix: "_scale",
        edit,
        bad: n as u64,
    })
    .collect()
}

/// The corruptions of nvfp4's second scale (one F32): ModelOpt's `scale_2` multiplies the
/// block scales, compressed-tensors' global scale divides them. A NaN makes every block bad;
/// what else a value does follows from the factor each block is multiplied by: zero (ModelOpt's
/// zero, or a divided infinity) and a negative value spare only the all-zero blocks (whose
/// factor is ±0 over zeros), an infinite factor (ModelOpt's infinity, a divided zero) spares
/// none (0 * inf is NaN).
fn second_cases(layout: Layout, blocks: u64, zero_blocks: u64) -> Vec<Case> {
    let (suffix, divides) = match layout {
        Layout::ModelOpt => ("_scale_2", false),
        _ => ("_global_scale", true),
    };
    let set =
        |v: f32| -> Edit { Box::new(move |b: &mut [u8]| b.copy_from_slice(&v.to_le_bytes())) };
    let nonzero = blocks - zero_blocks;
    vec![
        ("second scale NaN", set(f32::NAN), blocks),
        (
            "second scale 0",
            set(0.0),
            if divides { blocks } else { nonzero },
        ),
        ("second scale -1", set(-1.0), nonzero),
        (
            "second scale inf",
            set(f32::INFINITY),
            if divides { nonzero } else { blocks },
        ),
    ]
    .into_iter()
    .map(|(what, edit, bad)| Case {
        what,
        suffix,
        edit,
        bad,
    })
    .collect()
}

/// The scale tensor's suffix of a layout's block scales.
fn scale_suffix(layout: Layout) -> &'static str {
    match layout {
        Layout::Transformers => "_scale_inv",
        _ => "_scale",
    }
}

/// Blocks of the `[128, 256]` weight, and those all zero, per scheme.
fn blocks(scheme: Scheme) -> (u64, u64) {
    match scheme {
        Scheme::Fp8Block => (2, 1),
        Scheme::Fp8Channel => (128, 1),
        Scheme::Mxfp8 | Scheme::Mxfp4 => (128 * 8, 128 * 4 + 4),
        Scheme::Nvfp4 => (128 * 16, 128 * 8 + 8),
    }
}

#[test]
fn corrupt_scales_fail_the_decoded_weight_and_healthy_ones_do_not() {
    let dir = scratch("corrupt");
    let input = dir.join("model");
    model(&input, &weight_with_zero_blocks(), 128, 256);
    let combinations = [
        (Layout::Transformers, Scheme::Fp8Block),
        (Layout::Transformers, Scheme::Mxfp8),
        (Layout::CompressedTensors, Scheme::Fp8Block),
        (Layout::CompressedTensors, Scheme::Fp8Channel),
        (Layout::CompressedTensors, Scheme::Mxfp8),
        (Layout::CompressedTensors, Scheme::Mxfp4),
        (Layout::CompressedTensors, Scheme::Nvfp4),
        (Layout::ModelOpt, Scheme::Nvfp4),
    ];
    for (layout, scheme) in combinations {
        let what = format!("{} {scheme}", layout.name());
        let quantized = dir.join("q");
        quantize(&input, &quantized, scheme, layout);
        let (blocks, zero_blocks) = blocks(scheme);
        // lowp's own output, its all-zero blocks included, decodes without a bad scale.
        let back = dir.join("back");
        let report = decode(&quantized, &back);
        let t = row(&report);
        let check = t.scale_check.unwrap();
        assert_eq!((check.blocks, check.bad), (blocks, 0), "{what}");
        let (v, why) = t.verdict(false);
        assert!(
            matches!(v, Verdict::Exact | Verdict::Ok),
            "{what}: {v} {why}"
        );
        // Each corruption fails the weight, naming the bad blocks.
        let bad_blocks = if scheme == Scheme::Fp8Block { 1 } else { 3 };
        let cases = match scheme {
            Scheme::Fp8Block | Scheme::Fp8Channel => {
                float_cases(scale_suffix(layout), 4, bad_blocks)
            }
            Scheme::Mxfp8 | Scheme::Mxfp4 => vec![Case {
                what: "E8M0 255",
                suffix: scale_suffix(layout),
                edit: Box::new(|b: &mut [u8]| b[..3].fill(0xff)),
                bad: 3,
            }],
            Scheme::Nvfp4 => {
                let mut cases = e4m3_cases(bad_blocks);
                cases.extend(second_cases(layout, blocks, zero_blocks));
                cases
            }
        };
        for case in cases {
            let what = format!("{what}: {}", case.what);
            let copy = dir.join("corrupt");
            let _ = std::fs::remove_dir_all(&copy);
            std::fs::create_dir_all(&copy).unwrap();
            for f in ["model.safetensors", "config.json"] {
                std::fs::copy(quantized.join(f), copy.join(f)).unwrap();
            }
            corrupt(&copy, &format!("{WEIGHT}{}", case.suffix), &case.edit);
            let report = decode(&copy, &back);
            let t = row(&report);
            let check = t.scale_check.unwrap();
            assert_eq!((check.blocks, check.bad), (blocks, case.bad), "{what}");
            let (v, why) = t.verdict(false);
            assert_eq!(v, Verdict::Fail, "{what}: {why}");
            let want = format!(
                "{} of {blocks} blocks have a bad scale (NaN, inf, zero or negative)",
                case.bad
            );
            assert!(why.starts_with(&want), "{what}: {why}");
            // The JSON record says so too.
            let record = &report.records()[0];
            assert_eq!(record["bad_scales"], json!(case.bad), "{what}");
            assert_eq!(record["blocks"], json!(blocks), "{what}");
            assert_eq!(record["verdict"], "fail", "{what}");
        }
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn an_all_zero_weight_decodes_without_a_bad_scale() {
    // Every block scale is zero (fp8, nvfp4) or E8M0 0, and ModelOpt's scale_2 is 0 too
    // (amax / 2688): what valid encoders write, over zeros, decodes exactly.
    let dir = scratch("zeros");
    let input = dir.join("model");
    model(&input, &[0.0; 128 * 256], 128, 256);
    for (layout, scheme) in [
        (Layout::Transformers, Scheme::Fp8Block),
        (Layout::CompressedTensors, Scheme::Fp8Channel),
        (Layout::CompressedTensors, Scheme::Mxfp4),
        (Layout::CompressedTensors, Scheme::Nvfp4),
        (Layout::ModelOpt, Scheme::Nvfp4),
    ] {
        let what = format!("{} {scheme}", layout.name());
        let quantized = dir.join("q");
        let report = quantize(&input, &quantized, scheme, layout);
        assert_eq!(row(&report).verdict(false).0, Verdict::Ok, "{what}");
        if layout == Layout::ModelOpt {
            let t = read(&quantized.join("model.safetensors"));
            let s2 = t
                .iter()
                .find(|t| t.0 == format!("{WEIGHT}_scale_2"))
                .unwrap();
            assert_eq!(s2.3, 0f32.to_le_bytes(), "{what}");
        }
        let report = decode(&quantized, &dir.join("back"));
        let t = row(&report);
        assert_eq!(t.scale_check.unwrap().bad, 0, "{what}");
        assert_eq!(t.verdict(false).0, Verdict::Exact, "{what}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn corrupt_bf16_scales_fail_too() {
    // compressed-tensors gives fp8 scales the weights' dtype: a bf16 model's scales are bf16,
    // widened before the check.
    let dir = scratch("bf16");
    let input = dir.join("model");
    std::fs::create_dir_all(&input).unwrap();
    let w = weight_with_zero_blocks();
    let bytes = w
        .iter()
        .flat_map(|v| ((v.to_bits() >> 16) as u16).to_le_bytes())
        .collect();
    let t = (WEIGHT.to_string(), Dtype::BF16, vec![128, 256], bytes);
    write(&input.join("model.safetensors"), &[t]);
    std::fs::write(input.join("config.json"), config().to_string()).unwrap();
    for scheme in [Scheme::Fp8Block, Scheme::Fp8Channel] {
        let quantized = dir.join("q");
        quantize(&input, &quantized, scheme, Layout::CompressedTensors);
        let scales = read(&quantized.join("model.safetensors"));
        let s = scales
            .iter()
            .find(|t| t.0 == format!("{WEIGHT}_scale"))
            .unwrap();
        assert_eq!(s.1, Dtype::BF16, "{scheme}");
        let back = dir.join("back");
        let (blocks, _) = blocks(scheme);
        let t = decode(&quantized, &back);
        assert_eq!(row(&t).scale_check.unwrap().bad, 0, "{scheme}");
        for case in float_cases("_scale", 2, 1) {
            let what = format!("{scheme} bf16: {}", case.what);
            corrupt(&quantized, &format!("{WEIGHT}_scale"), &case.edit);
            let report = decode(&quantized, &back);
            let t = row(&report);
            assert_eq!(t.scale_check.unwrap().bad, 1, "{what}");
            assert_eq!(t.verdict(false).0, Verdict::Fail, "{what}");
            assert!(
                t.verdict(false)
                    .1
                    .starts_with(&format!("1 of {blocks} blocks")),
                "{what}"
            );
            // Back to a healthy copy for the next case.
            quantize(&input, &quantized, scheme, Layout::CompressedTensors);
        }
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_corrupt_per_tensor_scale_fails_and_a_zero_one_over_zeros_does_not() {
    let dir = scratch("per-tensor");
    // E4M3 1.0 (0x38) and -0.5 (0xB0); or all zeros.
    let data = |zeros: bool| -> Tensor {
        let bytes = if zeros {
            vec![0x00, 0x80, 0x00, 0x00, 0x80, 0x00, 0x00, 0x00]
        } else {
            vec![0x38, 0xb0, 0x00, 0x38, 0x38, 0xb0, 0x00, 0x80]
        };
        ("w".into(), Dtype::F8_E4M3, vec![2, 4], bytes)
    };
    // ModelOpt's scalar `[]` and compressed-tensors' `[1]`.
    for shape in [vec![], vec![1]] {
        for (scale, zeros, bad) in [
            (0.5f32, false, false),
            (0.0, true, false),
            (f32::NAN, false, true),
            (f32::INFINITY, false, true),
            (f32::NEG_INFINITY, false, true),
            (0.0, false, true),
            (-0.5, false, true),
            (f32::NAN, true, true),
        ] {
            let what = format!("scale {scale} of shape {shape:?} over zeros: {zeros}");
            let input = dir.join("in.safetensors");
            let s = (
                "w_scale".into(),
                Dtype::F32,
                shape.clone(),
                scale.to_le_bytes().to_vec(),
            );
            write(&input, &[data(zeros), s]);
            let out = dir.join("out.safetensors");
            let report =
                lowp_io::convert(&Options::new(&input, Some(out.clone()), FloatType::F32)).unwrap();
            let t = &report.tensors[0];
            let check = t.scale_check.unwrap();
            assert_eq!((check.blocks, check.bad), (1, u64::from(bad)), "{what}");
            let (v, why) = t.verdict(false);
            if bad {
                assert_eq!(v, Verdict::Fail, "{what}");
                assert!(
                    why.starts_with("1 of 1 blocks have a bad scale"),
                    "{what}: {why}"
                );
            } else {
                assert!(
                    matches!(v, Verdict::Exact | Verdict::Ok),
                    "{what}: {v} {why}"
                );
            }
        }
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn strict_refuses_to_write_a_corrupt_decode() {
    let dir = scratch("strict");
    let input = dir.join("model");
    model(&input, &weight_with_zero_blocks(), 128, 256);
    let quantized = dir.join("q");
    quantize(&input, &quantized, Scheme::Mxfp8, Layout::CompressedTensors);
    corrupt(&quantized, &format!("{WEIGHT}_scale"), |b| b[7] = 0xff);
    let out = dir.join("back");
    let mut opts = Options::new(&quantized, Some(out.clone()), FloatType::BF16);
    opts.strict = Some(Verdict::Fail);
    let report = lowp_io::convert(&opts).unwrap();
    assert!(!report.written);
    assert!(!out.exists());
    assert_eq!(row(&report).scale_check.unwrap().bad, 1);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_huge_row_that_flushes_the_rest_warns_and_a_normal_weight_stays_ok() {
    let dir = scratch("flush");
    let normal = gaussian(&mut Rng(5), 128 * 128);
    let mut huge = normal.clone();
    huge[..128].fill(3e38);
    let combinations = [
        (Layout::Transformers, Scheme::Fp8Block),
        (Layout::Transformers, Scheme::Mxfp8),
        (Layout::CompressedTensors, Scheme::Fp8Block),
        (Layout::CompressedTensors, Scheme::Fp8Channel),
        (Layout::CompressedTensors, Scheme::Mxfp8),
        (Layout::CompressedTensors, Scheme::Mxfp4),
        (Layout::CompressedTensors, Scheme::Nvfp4),
        (Layout::ModelOpt, Scheme::Nvfp4),
    ];
    for (w, name) in [(&normal, "normal"), (&huge, "huge")] {
        let input = dir.join(name);
        model(&input, w, 128, 128);
        for (layout, scheme) in combinations {
            let what = format!("{name} {} {scheme}", layout.name());
            let report = quantize(&input, &dir.join("q"), scheme, layout);
            let t = row(&report);
            let q = t.quant.unwrap();
            let (v, why) = t.verdict(false);
            let record = &report.records()[0];
            let flushes = name == "huge" && matches!(scheme, Scheme::Fp8Block | Scheme::Nvfp4);
            if flushes {
                // Every value but the huge row's: 127 of 128 rows.
                assert_eq!(q.stats.flushed, 127 * 128, "{what}");
                assert_eq!(v, Verdict::Warn, "{what}: {why}");
                assert_eq!(why, "99.2% flushed to zero", "{what}");
                assert_eq!(record["flushed_to_zero"], json!(127 * 128), "{what}");
                assert_eq!(record["flushed_share"], json!(127.0 / 128.0), "{what}");
            } else {
                // fp8-channel and MX scale each row apart: the huge row harms no other.
                assert_eq!(v, Verdict::Ok, "{what}: {why}");
                assert!(
                    record["flushed_share"].as_f64().unwrap() < 0.25,
                    "{what}: {record:?}"
                );
            }
            assert_eq!(q.stats.saturated, 0, "{what}");
            assert_eq!(record["saturated"], json!(0), "{what}");
        }
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn f64_values_beyond_the_scales_reach_saturate_and_warn() {
    // 1e300 needs an fp8 scale beyond f32 and an E8M0 exponent beyond 127: the scales clamp,
    // and the elements saturate far past E4M3's top binade.
    let dir = scratch("saturate");
    let input = dir.join("model");
    std::fs::create_dir_all(&input).unwrap();
    let mut w: Vec<f64> = gaussian(&mut Rng(8), 128 * 128)
        .iter()
        .map(|&v| v as f64)
        .collect();
    w[0] = 1e300;
    let bytes = w.iter().flat_map(|v| v.to_le_bytes()).collect();
    write(
        &input.join("model.safetensors"),
        &[(WEIGHT.to_string(), Dtype::F64, vec![128, 128], bytes)],
    );
    std::fs::write(input.join("config.json"), config().to_string()).unwrap();
    for (layout, scheme) in [
        (Layout::Transformers, Scheme::Fp8Block),
        (Layout::CompressedTensors, Scheme::Mxfp8),
    ] {
        let report = quantize(&input, &dir.join("q"), scheme, layout);
        let t = row(&report);
        assert_eq!(t.quant.unwrap().stats.saturated, 1, "{scheme}");
        let (v, why) = t.verdict(false);
        assert_eq!(v, Verdict::Warn, "{scheme}: {why}");
        assert!(why.starts_with("1 saturated"), "{scheme}: {why}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}
