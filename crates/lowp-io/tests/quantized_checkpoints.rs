//! Block-quantized checkpoints end to end: every scheme written, its tensors' names, types and
//! shapes checked against the layout each loader expects, its bytes decoded by a reference
//! decoder written here (tables built from the formats' bit definitions, arithmetic as the
//! reference loaders do it, no lowp code), and read back; sharded model directories; and
//! malformed quantized inputs refused without output.

use lowp_io::quant::Scheme;
use lowp_io::{Error, FloatType, Options, Target};
use safetensors::tensor::TensorView;
use safetensors::{Dtype, SafeTensors};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;

mod common;
use common::Rng;

/// A fresh directory for one test.
fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("lowp-qckpt-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// A roughly Gaussian weight, one in 97 an outlier twenty times larger.
fn weight(rng: &mut Rng) -> f32 {
    let g: f64 = (0..4).map(|_| rng.unit() - 0.5).sum::<f64>() * 0.05;
    if rng.next().is_multiple_of(97) {
        (g * 20.0) as f32
    } else {
        g as f32
    }
}

/// A tensor to write: name, dtype, shape, bytes.
type Tensor = (String, Dtype, Vec<usize>, Vec<u8>);

fn f32_tensor(name: &str, shape: &[usize], rng: &mut Rng) -> Tensor {
    let n: usize = shape.iter().product();
    let bytes = (0..n).flat_map(|_| weight(rng).to_le_bytes()).collect();
    (name.to_string(), Dtype::F32, shape.to_vec(), bytes)
}

fn write(path: &Path, tensors: &[Tensor], metadata: Option<HashMap<String, String>>) {
    let views: Vec<(String, TensorView<'_>)> = tensors
        .iter()
        .map(|(n, d, s, b)| (n.clone(), TensorView::new(*d, s.clone(), b).unwrap()))
        .collect();
    safetensors::serialize_to_file(views, metadata, path).unwrap();
}

/// The tensors of a file: name → (dtype, shape, bytes).
fn read(path: &Path) -> HashMap<String, (Dtype, Vec<usize>, Vec<u8>)> {
    let bytes = std::fs::read(path).unwrap();
    let st = SafeTensors::deserialize(&bytes).unwrap();
    st.tensors()
        .into_iter()
        .map(|(n, v)| (n, (v.dtype(), v.shape().to_vec(), v.data().to_vec())))
        .collect()
}

fn metadata(path: &Path) -> HashMap<String, String> {
    let bytes = std::fs::read(path).unwrap();
    let (_, m) = SafeTensors::read_metadata(&bytes).unwrap();
    m.metadata().clone().unwrap_or_default()
}

fn f32s(bytes: &[u8]) -> Vec<f32> {
    bytes
        .chunks_exact(4)
        .map(|c| f32::from_le_bytes(c.try_into().unwrap()))
        .collect()
}

// The reference decoder: values from the bit definitions, arithmetic as the loaders do it.

/// E4M3FN: bias 7, no infinities, S.1111.111 is NaN.
fn e4m3(b: u8) -> f32 {
    let sign = if b & 0x80 != 0 { -1.0 } else { 1.0 };
    let (e, m) = ((b >> 3) & 0xF, b & 7);
    if e == 15 && m == 7 {
        return f32::NAN;
    }
    let v = if e == 0 {
        m as f32 / 8.0 * 2f32.powi(-6)
    } else {
        (1.0 + m as f32 / 8.0) * 2f32.powi(e as i32 - 7)
    };
    sign * v
}

/// E2M1: bias 1, every code finite.
fn e2m1(n: u8) -> f32 {
    let sign = if n & 8 != 0 { -1.0 } else { 1.0 };
    let (e, m) = ((n >> 1) & 3, n & 1);
    let v = if e == 0 {
        m as f32 * 0.5
    } else {
        (1.0 + m as f32 / 2.0) * 2f32.powi(e as i32 - 1)
    };
    sign * v
}

/// E8M0: 2^(s - 127), 255 is NaN.
fn e8m0(s: u8) -> f32 {
    if s == 255 {
        f32::NAN
    } else {
        (s as f64 - 127.0).exp2() as f32
    }
}

/// Decodes weight `name` of `shape` from the tensors of `scheme` as the reference loaders do.
fn reference_decode(
    scheme: Scheme,
    t: &HashMap<String, (Dtype, Vec<usize>, Vec<u8>)>,
    name: &str,
    shape: &[usize],
) -> Vec<f32> {
    let cols = shape[shape.len() - 1];
    let rows: usize = shape[..shape.len() - 1].iter().product();
    let mut out = Vec::with_capacity(rows * cols);
    match scheme {
        Scheme::Fp8Block => {
            let q = &t[name].2;
            let inv = f32s(&t[&format!("{name}_scale_inv")].2);
            let r_m = shape[shape.len() - 2];
            let (gr, gc) = (r_m.div_ceil(128), cols.div_ceil(128));
            for row in 0..rows {
                let (m, r) = (row / r_m, row % r_m);
                for c in 0..cols {
                    let s = inv[m * gr * gc + (r / 128) * gc + c / 128];
                    out.push(e4m3(q[row * cols + c]) * s);
                }
            }
        }
        Scheme::Mxfp8 => {
            let q = &t[name].2;
            let s = &t[&format!("{name}_scale")].2;
            let per_row = cols.div_ceil(32);
            for row in 0..rows {
                for c in 0..cols {
                    out.push(e4m3(q[row * cols + c]) * e8m0(s[row * per_row + c / 32]));
                }
            }
        }
        Scheme::Mxfp4 => {
            let q = &t[&format!("{name}.blocks")].2;
            let s = &t[&format!("{name}.scales")].2;
            let per_row = cols.div_ceil(32);
            for row in 0..rows {
                for c in 0..cols {
                    let byte = q[row * per_row * 16 + c / 2];
                    let nibble = if c % 2 == 0 { byte & 0xF } else { byte >> 4 };
                    out.push(e2m1(nibble) * e8m0(s[row * per_row + c / 32]));
                }
            }
        }
        Scheme::Nvfp4 => {
            let q = &t[name].2;
            let s = &t[&format!("{name}_scale")].2;
            let s2 = f32s(&t[&format!("{name}_scale_2")].2)[0];
            let per_row = cols.div_ceil(16);
            for row in 0..rows {
                for c in 0..cols {
                    let byte = q[row * per_row * 8 + c / 2];
                    let nibble = if c % 2 == 0 { byte & 0xF } else { byte >> 4 };
                    // ModelOpt: the block scale times the tensor scale, then the element.
                    let scale = e4m3(s[row * per_row + c / 16]) * s2;
                    out.push(e2m1(nibble) * scale);
                }
            }
        }
    }
    out
}

/// The tensors (name, dtype, shape) a loader expects for `name` of `shape`, written from the
/// loaders' conventions.
fn expected_layout(
    scheme: Scheme,
    name: &str,
    shape: &[usize],
) -> Vec<(String, Dtype, Vec<usize>)> {
    let n = shape.len();
    let (r, c) = (shape[n - 2], shape[n - 1]);
    let lead = &shape[..n - 1];
    let cat = |tail: &[usize]| lead.iter().chain(tail).copied().collect::<Vec<_>>();
    match scheme {
        Scheme::Fp8Block => vec![
            (name.into(), Dtype::F8_E4M3, shape.to_vec()),
            (
                format!("{name}_scale_inv"),
                Dtype::F32,
                shape[..n - 2]
                    .iter()
                    .copied()
                    .chain([r.div_ceil(128), c.div_ceil(128)])
                    .collect(),
            ),
        ],
        Scheme::Mxfp8 => vec![
            (name.into(), Dtype::F8_E4M3, shape.to_vec()),
            (format!("{name}_scale"), Dtype::U8, cat(&[c.div_ceil(32)])),
        ],
        Scheme::Mxfp4 => vec![
            (
                format!("{name}.blocks"),
                Dtype::U8,
                cat(&[c.div_ceil(32), 16]),
            ),
            (format!("{name}.scales"), Dtype::U8, cat(&[c.div_ceil(32)])),
        ],
        Scheme::Nvfp4 => vec![
            (name.into(), Dtype::U8, cat(&[c.div_ceil(16) * 8])),
            (
                format!("{name}_scale"),
                Dtype::F8_E4M3,
                cat(&[c.div_ceil(16)]),
            ),
            (format!("{name}_scale_2"), Dtype::F32, vec![]),
        ],
    }
}

/// The test model: weights of several shapes (one 3-D, one with 128-row bands and a partial
/// band, columns that are not multiples of any block) and tensors no scheme quantizes.
fn model(rng: &mut Rng) -> Vec<Tensor> {
    vec![
        f32_tensor("layers.0.attn.q.weight", &[64, 96], rng),
        f32_tensor("layers.0.mlp.up.weight", &[130, 200], rng),
        f32_tensor("experts.gate.weight", &[3, 40, 50], rng),
        f32_tensor("layers.0.mlp.up.bias", &[130], rng),
        f32_tensor("norm.weight", &[96], rng),
        (
            "position_ids".into(),
            Dtype::I64,
            vec![4],
            (0..4i64).flat_map(|i| i.to_le_bytes()).collect(),
        ),
    ]
}

#[test]
fn every_scheme_writes_the_loaders_layout_and_decodes_exactly() {
    let dir = scratch("schemes");
    let input = dir.join("model.safetensors");
    let tensors = model(&mut Rng(7));
    write(&input, &tensors, None);
    for scheme in Scheme::ALL {
        let out = dir.join(format!("{}.safetensors", scheme.name()));
        let report = lowp_io::convert(&Options::new(
            &input,
            Some(out.clone()),
            Target::Scheme(scheme),
        ))
        .unwrap();
        let written = read(&out);
        let mut expected_names = vec![
            "layers.0.mlp.up.bias".to_string(),
            "norm.weight".into(),
            "position_ids".into(),
        ];
        for (name, _, shape, bytes) in tensors.iter().filter(|t| t.2.len() >= 2) {
            for (part, dtype, part_shape) in expected_layout(scheme, name, shape) {
                let (d, s, _) = &written[&part];
                assert_eq!((d, s), (&dtype, &part_shape), "{scheme:?} {part}");
                expected_names.push(part);
            }
            let original = f32s(bytes);
            let decoded = reference_decode(scheme, &written, name, shape);
            // Decoding with lowp gives exactly what the reference loaders compute.
            let back = dir.join("back.safetensors");
            lowp_io::convert(&Options::new(&out, Some(back.clone()), FloatType::F32)).unwrap();
            let restored = read(&back);
            let (d, s, b) = &restored[name.as_str()];
            assert_eq!((d, s), (&Dtype::F32, shape), "{scheme:?} {name}");
            let lowp_decoded = f32s(b);
            for (i, (a, r)) in lowp_decoded.iter().zip(&decoded).enumerate() {
                assert_eq!(
                    a.to_bits(),
                    r.to_bits(),
                    "{scheme:?} {name}[{i}]: {a} vs reference {r}"
                );
            }
            // The report's SQNR is that of the bytes written, as the reference decodes them.
            let (signal, noise) = original
                .iter()
                .zip(&decoded)
                .fold((0.0, 0.0), |(s, n), (&x, &y)| {
                    (s + (x as f64).powi(2), n + (x as f64 - y as f64).powi(2))
                });
            let row = report.tensors.iter().find(|t| &t.name == name).unwrap();
            let q = row.quant.as_ref().unwrap();
            let sqnr = 10.0 * (signal / noise).log10();
            assert!(
                (q.stats.sqnr_db() - sqnr).abs() < 0.05,
                "{scheme:?} {name}: {} vs {sqnr}",
                q.stats.sqnr_db()
            );
            let floor = match scheme {
                Scheme::Fp8Block | Scheme::Mxfp8 => 25.0,
                Scheme::Mxfp4 | Scheme::Nvfp4 => 12.0,
            };
            assert!(sqnr > floor, "{scheme:?} {name}: SQNR {sqnr}");
        }
        let mut names: Vec<String> = written.keys().cloned().collect();
        names.sort();
        expected_names.sort();
        assert_eq!(names, expected_names, "{scheme:?}");
        // The untouched tensors are byte for byte the input's.
        for (name, _, _, bytes) in tensors.iter().filter(|t| t.2.len() < 2) {
            assert_eq!(&written[name].2, bytes, "{scheme:?} {name}");
        }
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn transformers_spelling_of_gpt_oss_blocks_is_read() {
    let dir = scratch("gptoss");
    let input = dir.join("model.safetensors");
    write(
        &input,
        &[f32_tensor("experts.down_proj", &[2, 3, 64], &mut Rng(21))],
        None,
    );
    let q = dir.join("q.safetensors");
    let mut opts = Options::new(&input, Some(q.clone()), Target::Scheme(Scheme::Mxfp4));
    opts.only = vec!["experts.down_proj".into()];
    lowp_io::convert(&opts).unwrap();
    // Renamed as transformers names gpt-oss's experts, and a plain `_blocks` tensor beside.
    let t = read(&q);
    let renamed = dir.join("hf.safetensors");
    write(
        &renamed,
        &[
            (
                "experts.down_proj_blocks".into(),
                Dtype::U8,
                vec![2, 3, 2, 16],
                t["experts.down_proj.blocks"].2.clone(),
            ),
            (
                "experts.down_proj_scales".into(),
                Dtype::U8,
                vec![2, 3, 2],
                t["experts.down_proj.scales"].2.clone(),
            ),
            ("pos_blocks".into(), Dtype::U8, vec![4], vec![1, 2, 3, 4]),
        ],
        None,
    );
    let back = dir.join("back.safetensors");
    lowp_io::convert(&Options::new(&renamed, Some(back.clone()), FloatType::F32)).unwrap();
    let decoded = read(&back);
    assert_eq!(decoded["experts.down_proj"].1, vec![2, 3, 64]);
    let expected = reference_decode(Scheme::Mxfp4, &t, "experts.down_proj", &[2, 3, 64]);
    assert_eq!(f32s(&decoded["experts.down_proj"].2), expected);
    assert_eq!(decoded["pos_blocks"].2, [1, 2, 3, 4]);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn padded_fp4_rows_record_and_restore_the_shape() {
    let dir = scratch("padding");
    let input = dir.join("model.safetensors");
    write(
        &input,
        &[f32_tensor("w.weight", &[5, 50], &mut Rng(3))],
        None,
    );
    for scheme in [Scheme::Mxfp4, Scheme::Nvfp4] {
        let out = dir.join("q.safetensors");
        lowp_io::convert(&Options::new(
            &input,
            Some(out.clone()),
            Target::Scheme(scheme),
        ))
        .unwrap();
        assert_eq!(
            metadata(&out)["lowp.shape.w.weight"],
            "[5,50]",
            "{scheme:?}"
        );
        let written = read(&out);
        // The padding elements are +0.
        let data = match scheme {
            Scheme::Mxfp4 => &written["w.weight.blocks"].2,
            _ => &written["w.weight"].2,
        };
        let row_bytes = data.len() / 5;
        for row in data.chunks(row_bytes) {
            assert!(row[25..].iter().all(|&b| b == 0), "{scheme:?}: {row:?}");
        }
        let back = dir.join("back.safetensors");
        lowp_io::convert(&Options::new(&out, Some(back.clone()), FloatType::BF16)).unwrap();
        assert_eq!(read(&back)["w.weight"].1, vec![5, 50], "{scheme:?}");
        assert!(!metadata(&back).contains_key("lowp.shape.w.weight"));
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Writes a sharded model directory: two shards, an index, a config and a tokenizer.
fn sharded_model(dir: &Path, rng: &mut Rng) -> Vec<Tensor> {
    std::fs::create_dir_all(dir).unwrap();
    let tensors = model(rng);
    let (a, b) = tensors.split_at(3);
    write(&dir.join("model-00001-of-00002.safetensors"), a, None);
    write(&dir.join("model-00002-of-00002.safetensors"), b, None);
    let map: serde_json::Map<String, serde_json::Value> = tensors
        .iter()
        .enumerate()
        .map(|(i, t)| {
            let shard = if i < 3 { 1 } else { 2 };
            (
                t.0.clone(),
                format!("model-0000{shard}-of-00002.safetensors").into(),
            )
        })
        .collect();
    let index = serde_json::json!({"metadata": {"total_size": 0}, "weight_map": map});
    std::fs::write(dir.join("model.safetensors.index.json"), index.to_string()).unwrap();
    std::fs::write(
        dir.join("config.json"),
        r#"{"model_type": "toy", "hidden_size": 96}"#,
    )
    .unwrap();
    std::fs::write(dir.join("tokenizer.json"), b"{\"toy\": true}\n").unwrap();
    std::fs::create_dir_all(dir.join("1_Pooling")).unwrap();
    std::fs::write(
        dir.join("1_Pooling/config.json"),
        b"{\"pooling_mode_mean_tokens\": true}",
    )
    .unwrap();
    tensors
}

/// The output directory's index: tensor → shard file, checked against the shards.
fn checked_index(dir: &Path) -> HashMap<String, String> {
    let index: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.join("model.safetensors.index.json")).unwrap())
            .unwrap();
    let map: HashMap<String, String> = index["weight_map"]
        .as_object()
        .unwrap()
        .iter()
        .map(|(k, v)| (k.clone(), v.as_str().unwrap().to_string()))
        .collect();
    let mut seen = 0;
    let mut shards: Vec<&String> = map.values().collect();
    shards.sort();
    shards.dedup();
    for shard in shards {
        for name in read(&dir.join(shard)).keys() {
            assert_eq!(&map[name], shard, "{name}");
            seen += 1;
        }
    }
    assert_eq!(seen, map.len());
    map
}

#[test]
fn sharded_models_are_quantized_and_decoded_as_directories() {
    let dir = scratch("sharded");
    let input = dir.join("in");
    let tensors = sharded_model(&input, &mut Rng(11));
    let quantized = dir.join("nvfp4");
    let mut opts = Options::new(
        &input,
        Some(quantized.clone()),
        Target::Scheme(Scheme::Nvfp4),
    );
    opts.shard_size = Some(10_000);
    opts.rest = Some(FloatType::BF16);
    let report = lowp_io::convert(&opts).unwrap();
    assert!(report.quant_summary().is_some());
    let map = checked_index(&quantized);
    let shard_count = map.values().collect::<std::collections::HashSet<_>>().len();
    assert!(shard_count >= 3, "{shard_count} shards");
    // A weight's tensors share a shard.
    assert_eq!(
        map["layers.0.mlp.up.weight"],
        map["layers.0.mlp.up.weight_scale"]
    );
    assert_eq!(
        map["layers.0.mlp.up.weight"],
        map["layers.0.mlp.up.weight_scale_2"]
    );
    assert_eq!(
        std::fs::read(quantized.join("tokenizer.json")).unwrap(),
        b"{\"toy\": true}\n"
    );
    let config: serde_json::Value =
        serde_json::from_slice(&std::fs::read(quantized.join("config.json")).unwrap()).unwrap();
    assert_eq!(config["model_type"], "toy");
    assert_eq!(config["quantization_config"]["quant_algo"], "NVFP4");
    let hf: serde_json::Value =
        serde_json::from_slice(&std::fs::read(quantized.join("hf_quant_config.json")).unwrap())
            .unwrap();
    assert_eq!(hf["quantization"]["group_size"], 16);
    // The 1-D tensors went to --rest's type.
    assert_eq!(
        read(&quantized.join(&map["norm.weight"]))["norm.weight"].0,
        Dtype::BF16
    );
    // Nothing else is left beside the output.
    let leftovers: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(leftovers.len(), 2, "{leftovers:?}");

    // And back: the model's own names, bf16, no quantization config.
    let decoded = dir.join("bf16");
    lowp_io::convert(&Options::new(
        &quantized,
        Some(decoded.clone()),
        FloatType::BF16,
    ))
    .unwrap();
    let map = checked_index(&decoded);
    let mut names: Vec<&String> = map.keys().collect();
    names.sort();
    let mut original: Vec<&String> = tensors.iter().map(|t| &t.0).collect();
    original.sort();
    assert_eq!(names, original);
    let config: serde_json::Value =
        serde_json::from_slice(&std::fs::read(decoded.join("config.json")).unwrap()).unwrap();
    assert!(config.get("quantization_config").is_none());
    assert!(!decoded.join("hf_quant_config.json").exists());
    let up = &read(&decoded.join(&map["layers.0.mlp.up.weight"]))["layers.0.mlp.up.weight"];
    assert_eq!((up.0, &up.1), (Dtype::BF16, &vec![130, 200]));

    // A directory that holds files is never written into.
    let err = lowp_io::convert(&Options::new(
        &quantized,
        Some(decoded.clone()),
        FloatType::BF16,
    ))
    .unwrap_err();
    assert!(
        matches!(&err, Error::Invalid(m) if m.contains("not empty")),
        "{err}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_cancelled_model_leaves_nothing() {
    let dir = scratch("cancel");
    let input = dir.join("in");
    sharded_model(&input, &mut Rng(5));
    let out = dir.join("out");
    let opts = Options::new(&input, Some(out.clone()), Target::Scheme(Scheme::Mxfp4));
    let err =
        lowp_io::convert_with(&opts, &lowp_io::NoProgress, &AtomicBool::new(true)).unwrap_err();
    assert_eq!(err, Error::Cancelled);
    let entries: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(entries, vec![std::ffi::OsString::from("in")]);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn malformed_quantized_inputs_are_errors_without_output() {
    let dir = scratch("malformed");
    let u8s = |name: &str, shape: &[usize]| -> Tensor {
        (
            name.into(),
            Dtype::U8,
            shape.to_vec(),
            vec![0x22; shape.iter().product()],
        )
    };
    let f32_scalar =
        |name: &str| -> Tensor { (name.into(), Dtype::F32, vec![], 1f32.to_le_bytes().to_vec()) };
    let e4m3s = |name: &str, shape: &[usize]| -> Tensor {
        (
            name.into(),
            Dtype::F8_E4M3,
            shape.to_vec(),
            vec![0x38; shape.iter().product()],
        )
    };
    let cases: Vec<(&str, Vec<Tensor>, &str)> = vec![
        (
            "blocks without scales",
            vec![u8s("w.blocks", &[4, 2, 16])],
            "'w.scales', their scales, is missing",
        ),
        (
            "scales of the wrong shape",
            vec![u8s("w.blocks", &[4, 2, 16]), u8s("w.scales", &[4, 3])],
            "do not match blocks",
        ),
        (
            "blocks of 15 bytes",
            vec![u8s("w.blocks", &[4, 2, 15]), u8s("w.scales", &[4, 2])],
            "[..., rows, blocks, 16]",
        ),
        (
            "fp8 block scales of the wrong shape",
            vec![
                e4m3s("w", &[200, 64]),
                (
                    String::from("w_scale_inv"),
                    Dtype::F32,
                    vec![1, 1],
                    vec![0; 4],
                ),
            ],
            "one per 128x128 block",
        ),
        (
            "nvfp4 data of the wrong length",
            vec![
                u8s("w", &[4, 12]),
                e4m3s("w_scale", &[4, 2]),
                f32_scalar("w_scale_2"),
            ],
            "not whole blocks",
        ),
        (
            "nvfp4 scales of the wrong shape",
            vec![
                u8s("w", &[4, 16]),
                e4m3s("w_scale", &[4, 3]),
                f32_scalar("w_scale_2"),
            ],
            "one per 16 elements",
        ),
        (
            "nvfp4 without block scales",
            vec![u8s("w", &[4, 16]), f32_scalar("w_scale_2")],
            "'w_scale' is missing",
        ),
        (
            "mxfp8 scales of the wrong shape",
            vec![e4m3s("w", &[4, 64]), u8s("w_scale", &[4, 3])],
            "one per 32 elements",
        ),
    ];
    for (case, tensors, want) in cases {
        let input = dir.join("in.safetensors");
        write(&input, &tensors, None);
        let out = dir.join("out.safetensors");
        for output in [None, Some(out.clone())] {
            let err = lowp_io::convert(&Options::new(&input, output, FloatType::BF16)).unwrap_err();
            assert!(err.to_string().contains(want), "{case}: {err}");
        }
        let entries: Vec<_> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(
            entries,
            vec![std::ffi::OsString::from("in.safetensors")],
            "{case}"
        );
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_quantized_model_is_kept_when_quantizing_again_and_per_tensor_fp8_decodes() {
    let dir = scratch("again");
    let input = dir.join("model.safetensors");
    write(
        &input,
        &[f32_tensor("w.weight", &[4, 64], &mut Rng(9))],
        None,
    );
    let q = dir.join("q.safetensors");
    lowp_io::convert(&Options::new(
        &input,
        Some(q.clone()),
        Target::Scheme(Scheme::Mxfp4),
    ))
    .unwrap();
    let report = lowp_io::convert(&Options::new(&q, None, Target::Scheme(Scheme::Nvfp4))).unwrap();
    assert!(
        report.tensors[0].note.contains("already mxfp4"),
        "{}",
        report.tensors[0].note
    );
    // lowp's own per-tensor FP8 scale (W.scale) is applied when decoding.
    let mut opts = Options::new(
        &input,
        Some(dir.join("fp8.safetensors")),
        FloatType::F8E4M3FN,
    );
    opts.per_tensor_scale = true;
    lowp_io::convert(&opts).unwrap();
    let back = dir.join("back.safetensors");
    lowp_io::convert(&Options::new(
        dir.join("fp8.safetensors"),
        Some(back.clone()),
        FloatType::F32,
    ))
    .unwrap();
    let restored = read(&back);
    assert!(!restored.contains_key("w.weight.scale"));
    let original = f32s(&read(&input)["w.weight"].2);
    let decoded = f32s(&restored["w.weight"].2);
    for (x, y) in original.iter().zip(&decoded) {
        assert!((x - y).abs() <= x.abs() / 16.0 + 1e-6, "{x} vs {y}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_model_directory_is_written_as_a_directory_and_nested_models_stay_out() {
    let dir = scratch("nested");
    let input = dir.join("in");
    sharded_model(&input, &mut Rng(13));
    let file = input.join("q.safetensors");
    let err =
        lowp_io::convert(&Options::new(&input, Some(file.clone()), FloatType::BF16)).unwrap_err();
    assert!(
        matches!(&err, Error::Invalid(m) if m.contains("give OUT as a directory name")),
        "{err}"
    );
    assert!(!file.exists());
    // An output written inside the model's directory is not part of the model next time.
    let inner = input.join("bf16");
    lowp_io::convert(&Options::new(&input, Some(inner.clone()), FloatType::BF16)).unwrap();
    let again = dir.join("again");
    lowp_io::convert(&Options::new(&input, Some(again.clone()), FloatType::F16)).unwrap();
    assert!(inner.join("config.json").exists());
    assert!(!again.join("bf16").exists());
    assert!(again.join("1_Pooling").is_dir());
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn fp4_fp6_and_e8m0_tensors_are_decoded() {
    let dir = scratch("packed");
    let input = dir.join("model.safetensors");
    // F4: codes 0..=15 then 1, 2, low nibble first. F6_E2M3: codes 1, 9, 33 (-0.125), 63 (-7.5)
    // as a little-endian bit stream. E8M0: 127 (1.0), 0 (2^-127), 255 (NaN).
    let f4: Vec<u8> = (0..8)
        .map(|i| (2 * i) | (2 * i + 1) << 4)
        .chain([0x21])
        .collect();
    let f6_codes = [1u32, 9, 33, 63];
    let stream = f6_codes
        .iter()
        .enumerate()
        .fold(0u32, |acc, (i, &c)| acc | c << (6 * i));
    let f6 = stream.to_le_bytes()[..3].to_vec();
    write(
        &input,
        &[
            ("a".into(), Dtype::F4, vec![18], f4),
            ("b".into(), Dtype::F6_E2M3, vec![4], f6),
            ("c".into(), Dtype::F8_E8M0, vec![3], vec![127, 0, 255]),
        ],
        None,
    );
    let out = dir.join("f32.safetensors");
    let report =
        lowp_io::convert(&Options::new(&input, Some(out.clone()), FloatType::F32)).unwrap();
    assert!(
        report.tensors.iter().all(|t| t.stats.is_some()),
        "{:?}",
        report.tensors
    );
    let t = read(&out);
    let a: Vec<f32> = (0..16).map(e2m1).chain([e2m1(1), e2m1(2)]).collect();
    assert_eq!(f32s(&t["a"].2), a);
    // E2M3: bias 1, three mantissa bits; 1 = 0.125 (subnormal), 9 = 1.125, 33 = -0.125, 63 = -7.5.
    assert_eq!(f32s(&t["b"].2), [0.125, 1.125, -0.125, -7.5]);
    let c = f32s(&t["c"].2);
    assert_eq!((c[0], c[1] as f64), (1.0, 2f64.powi(-127)));
    assert!(c[2].is_nan());
    // A scheme leaves them as they are unless --rest says otherwise.
    let kept =
        lowp_io::convert(&Options::new(&input, None, Target::Scheme(Scheme::Mxfp4))).unwrap();
    assert!(kept.tensors.iter().all(|t| t.stats.is_none()));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn quantized_weights_without_columns_decode_to_empty_tensors() {
    let dir = scratch("empty");
    let input = dir.join("model.safetensors");
    write(
        &input,
        &[
            ("w".into(), Dtype::F8_E4M3, vec![4, 0], vec![]),
            ("w_scale_inv".into(), Dtype::F32, vec![1, 0], vec![]),
            ("v.blocks".into(), Dtype::U8, vec![3, 0, 16], vec![]),
            ("v.scales".into(), Dtype::U8, vec![3, 0], vec![]),
        ],
        None,
    );
    let out = dir.join("out.safetensors");
    lowp_io::convert(&Options::new(&input, Some(out.clone()), FloatType::BF16)).unwrap();
    let t = read(&out);
    assert_eq!((t["w"].0, &t["w"].1), (Dtype::BF16, &vec![4, 0]));
    assert_eq!(t["v"].1, vec![3, 0]);
    std::fs::remove_dir_all(&dir).unwrap();
}
