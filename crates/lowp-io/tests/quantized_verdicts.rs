//! Verdicts on quantized weights that do not hide damage: quantizing a weight whose ordinary
//! values are flushed to zero beside a huge row warns, giving the share flushed, and so do
//! elements saturated past the element format's top binade; a normal weight stays `ok`.

use lowp_io::layouts::Layout;
use lowp_io::quant::Scheme;
use lowp_io::report::{TensorReport, Verdict};
use lowp_io::{Options, Target};
use safetensors::Dtype;
use safetensors::tensor::TensorView;
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

/// The report of [`WEIGHT`].
fn row(report: &lowp_io::Report) -> &TensorReport {
    report.tensors.iter().find(|t| t.name == WEIGHT).unwrap()
}

/// Quantizes `input` in `scheme` and `layout` into `out`.
fn quantize(input: &Path, out: &Path, scheme: Scheme, layout: Layout) -> lowp_io::Report {
    let _ = std::fs::remove_dir_all(out);
    let mut opts = Options::new(input, Some(out.to_path_buf()), Target::Scheme(scheme));
    opts.layout = Some(layout);
    lowp_io::convert(&opts).unwrap()
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
