//! Block-quantized checkpoints end to end, layout by layout: the tensors each loader expects
//! (names, dtypes, shapes, written here from the loaders' conventions), which weights it
//! quantizes, the `quantization_config` that says so, the bytes decoded by a reference written
//! here (element values from the formats' bit definitions, the exact value each layout defines,
//! no lowp code) and by lowp, which must round that exact value once; sharded model
//! directories; refusals before any work; malformed quantized inputs refused without output.

use lowp_io::layouts::Layout;
use lowp_io::quant::Scheme;
use lowp_io::{Error, FloatType, Options, Target};
use safetensors::Dtype;
use safetensors::tensor::TensorView;
use serde_json::{Value, json};
use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;

mod common;
use common::{Rng, Tensors, f32s, read};

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

/// Every tensor of a model directory's `.safetensors` files.
fn read_dir(dir: &Path) -> Tensors {
    let mut out = HashMap::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "safetensors") {
            out.extend(read(&path));
        }
    }
    out
}

fn json_file(path: &Path) -> Value {
    serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap()
}

/// Writes a model directory: one `model.safetensors` and a `config.json`.
fn model_dir(dir: &Path, config: &Value, tensors: &[Tensor]) {
    std::fs::create_dir_all(dir).unwrap();
    write(&dir.join("model.safetensors"), tensors, None);
    std::fs::write(dir.join("config.json"), config.to_string()).unwrap();
}

// The reference decoder: values from the bit definitions, the exact value of each layout.

/// `2^k` by halving or doubling 1.
fn pow2(k: i32) -> f64 {
    (0..k.unsigned_abs()).fold(1f64, |p, _| if k < 0 { p / 2.0 } else { p * 2.0 })
}

/// E4M3FN: bias 7, no infinities, S.1111.111 is NaN.
fn e4m3(b: u8) -> f64 {
    let sign = if b & 0x80 != 0 { -1.0 } else { 1.0 };
    let (e, m) = (((b >> 3) & 0xF) as i32, (b & 7) as f64);
    if e == 15 && m == 7.0 {
        return f64::NAN;
    }
    let v = if e == 0 {
        m / 8.0 * pow2(-6)
    } else {
        (1.0 + m / 8.0) * pow2(e - 7)
    };
    sign * v
}

/// E2M1: bias 1, every code finite.
fn e2m1(n: u8) -> f64 {
    let sign = if n & 8 != 0 { -1.0 } else { 1.0 };
    let (e, m) = (((n >> 1) & 3) as i32, (n & 1) as f64);
    let v = if e == 0 {
        m * 0.5
    } else {
        (1.0 + m / 2.0) * pow2(e - 1)
    };
    sign * v
}

/// E8M0: 2^(s - 127), 255 is NaN.
fn e8m0(s: u8) -> f64 {
    if s == 255 {
        f64::NAN
    } else {
        pow2(s as i32 - 127)
    }
}

/// bfloat16: the high half of an f32.
fn bf16_value(lo: u8, hi: u8) -> f64 {
    f32::from_bits(u32::from(u16::from_le_bytes([lo, hi])) << 16) as f64
}

/// The float scale `i` of a scale tensor stored as `dtype` (F32 or BF16).
fn float_scale(dtype: Dtype, bytes: &[u8], i: usize) -> f64 {
    match dtype {
        Dtype::F32 => f32::from_le_bytes(bytes[4 * i..4 * i + 4].try_into().unwrap()) as f64,
        Dtype::BF16 => bf16_value(bytes[2 * i], bytes[2 * i + 1]),
        other => panic!("a float scale of {other}"),
    }
}

/// Nibble `c` of a packed FP4 row.
fn nibble(row: &[u8], c: usize) -> u8 {
    let byte = row[c / 2];
    if c.is_multiple_of(2) {
        byte & 0xF
    } else {
        byte >> 4
    }
}

/// The exact value of every element of the 2-D weight `name` `[rows, cols]` as the layout
/// stores it: `q * scale`, `q * s * scale_2` (ModelOpt), `q * s / global_scale`
/// (compressed-tensors' NVFP4), each computed in f64 (exact but for the last, a quotient
/// rounded once in f64).
fn exact_values(
    layout: Layout,
    scheme: Scheme,
    t: &Tensors,
    name: &str,
    rows: usize,
    cols: usize,
) -> Vec<f64> {
    let mut out = Vec::with_capacity(rows * cols);
    let ct = layout == Layout::CompressedTensors;
    let scale_name = if ct || layout == Layout::ModelOpt {
        format!("{name}_scale")
    } else {
        format!("{name}_scale_inv")
    };
    let (sd, _, sb) = &t[&scale_name];
    match scheme {
        Scheme::Fp8Block | Scheme::Fp8Channel => {
            let q = &t[name].2;
            let gc = cols.div_ceil(128);
            for r in 0..rows {
                for c in 0..cols {
                    let i = if scheme == Scheme::Fp8Block {
                        (r / 128) * gc + c / 128
                    } else {
                        r
                    };
                    out.push(e4m3(q[r * cols + c]) * float_scale(*sd, sb, i));
                }
            }
        }
        Scheme::Mxfp8 => {
            let q = &t[name].2;
            for r in 0..rows {
                for c in 0..cols {
                    out.push(e4m3(q[r * cols + c]) * e8m0(sb[r * cols / 32 + c / 32]));
                }
            }
        }
        Scheme::Mxfp4 => {
            let q = &t[&format!("{name}_packed")].2;
            for r in 0..rows {
                for c in 0..cols {
                    let n = nibble(&q[r * cols / 2..], c);
                    out.push(e2m1(n) * e8m0(sb[r * cols / 32 + c / 32]));
                }
            }
        }
        Scheme::Nvfp4 => {
            let (q, second) = if ct {
                (
                    &t[&format!("{name}_packed")].2,
                    &t[&format!("{name}_global_scale")].2,
                )
            } else {
                (&t[name].2, &t[&format!("{name}_scale_2")].2)
            };
            let second = f32s(second)[0] as f64;
            for r in 0..rows {
                for c in 0..cols {
                    let n = nibble(&q[r * cols / 2..], c);
                    let s = e4m3(sb[r * cols / 16 + c / 16]);
                    out.push(if ct {
                        e2m1(n) * s / second
                    } else {
                        e2m1(n) * s * second
                    });
                }
            }
        }
    }
    out
}

/// The tensors (name, dtype, shape) the loader of `layout` expects for the 2-D weight `name` of
/// `shape`, stored as f32 (fp8 scales of compressed-tensors: `scale_dtype`), written from the
/// loaders' conventions.
fn expected_parts(
    layout: Layout,
    scheme: Scheme,
    name: &str,
    shape: &[usize],
    scale_dtype: Dtype,
) -> Vec<(String, Dtype, Vec<usize>)> {
    let (r, c) = (shape[0], shape[1]);
    let part = |n: String, d: Dtype, s: Vec<usize>| (n, d, s);
    match (layout, scheme) {
        (Layout::Transformers, Scheme::Fp8Block) => vec![
            part(name.into(), Dtype::F8_E4M3, vec![r, c]),
            part(
                format!("{name}_scale_inv"),
                Dtype::F32,
                vec![r / 128, c / 128],
            ),
        ],
        (Layout::Transformers, Scheme::Mxfp8) => vec![
            part(name.into(), Dtype::F8_E4M3, vec![r, c]),
            part(format!("{name}_scale_inv"), Dtype::U8, vec![r, c / 32]),
        ],
        (Layout::CompressedTensors, Scheme::Fp8Block) => vec![
            part(name.into(), Dtype::F8_E4M3, vec![r, c]),
            part(
                format!("{name}_scale"),
                scale_dtype,
                vec![r.div_ceil(128), c / 128],
            ),
        ],
        (Layout::CompressedTensors, Scheme::Fp8Channel) => vec![
            part(name.into(), Dtype::F8_E4M3, vec![r, c]),
            part(format!("{name}_scale"), scale_dtype, vec![r, 1]),
        ],
        (Layout::CompressedTensors, Scheme::Mxfp8) => vec![
            part(name.into(), Dtype::F8_E4M3, vec![r, c]),
            part(format!("{name}_scale"), Dtype::U8, vec![r, c / 32]),
        ],
        (Layout::CompressedTensors, Scheme::Mxfp4) => vec![
            part(format!("{name}_packed"), Dtype::U8, vec![r, c / 2]),
            part(format!("{name}_scale"), Dtype::U8, vec![r, c / 32]),
        ],
        (Layout::CompressedTensors, Scheme::Nvfp4) => vec![
            part(format!("{name}_packed"), Dtype::U8, vec![r, c / 2]),
            part(format!("{name}_scale"), Dtype::F8_E4M3, vec![r, c / 16]),
            part(format!("{name}_global_scale"), Dtype::F32, vec![1]),
        ],
        (Layout::ModelOpt, Scheme::Nvfp4) => vec![
            part(name.into(), Dtype::U8, vec![r, c / 2]),
            part(format!("{name}_scale"), Dtype::F8_E4M3, vec![r, c / 16]),
            part(format!("{name}_scale_2"), Dtype::F32, vec![]),
        ],
        other => panic!("no layout {other:?}"),
    }
}

/// Whether the loader of `layout` reads a weight of `shape` in `scheme`: transformers' CPU
/// dequantizer needs whole blocks of rows and columns, compressed-tensors and ModelOpt whole
/// groups of columns (fp8-block: of 128), fp8-channel any shape.
fn fits(layout: Layout, scheme: Scheme, shape: &[usize]) -> bool {
    let (r, c) = (shape[0], shape[1]);
    match (layout, scheme) {
        (Layout::Transformers, Scheme::Fp8Block) => r.is_multiple_of(128) && c.is_multiple_of(128),
        (_, Scheme::Fp8Block) => c.is_multiple_of(128),
        (_, Scheme::Fp8Channel) => true,
        (_, Scheme::Mxfp8 | Scheme::Mxfp4) => c.is_multiple_of(32),
        (_, Scheme::Nvfp4) => c.is_multiple_of(16),
    }
}

/// The layouts and schemes lowp writes: transformers' fp8 and mxfp8 (mxfp4 only for
/// gpt-oss), every scheme in compressed-tensors, nvfp4 in ModelOpt's.
fn combinations() -> Vec<(Layout, Scheme)> {
    let mut out = vec![
        (Layout::Transformers, Scheme::Fp8Block),
        (Layout::Transformers, Scheme::Mxfp8),
    ];
    out.extend(Scheme::ALL.map(|s| (Layout::CompressedTensors, s)));
    out.push((Layout::ModelOpt, Scheme::Nvfp4));
    out
}

/// A small Llama-like model: its config and tensors (f32). Linear weights of several shapes: 128
/// x 128 blocks, 64 rows, 80 columns (whole groups of 16, not of 32 or 128), and an embedding,
/// a head and a norm that stay as they are.
fn llama(rng: &mut Rng) -> (Value, Vec<Tensor>) {
    let config = json!({
        "model_type": "llama", "vocab_size": 256, "hidden_size": 128,
        "max_position_embeddings": 64, "tie_word_embeddings": false,
    });
    let tensors = vec![
        f32_tensor("model.embed_tokens.weight", &[256, 128], rng),
        f32_tensor("model.layers.0.self_attn.q_proj.weight", &[128, 128], rng),
        f32_tensor("model.layers.0.self_attn.k_proj.weight", &[64, 128], rng),
        f32_tensor("model.layers.0.mlp.up_proj.weight", &[256, 128], rng),
        f32_tensor("model.layers.0.mlp.down_proj.weight", &[128, 256], rng),
        f32_tensor("model.layers.0.mlp.odd_proj.weight", &[48, 80], rng),
        f32_tensor("model.norm.weight", &[128], rng),
        f32_tensor("lm_head.weight", &[256, 128], rng),
    ];
    (config, tensors)
}

/// The linear weights of [`llama`] (not the embedding, the head or the norm).
fn is_linear(name: &str) -> bool {
    name.contains(".layers.")
}

/// A layout's `quantization_config` names the skipped modules under this key.
fn skip_key(layout: Layout) -> &'static str {
    match layout {
        Layout::Transformers => "modules_to_not_convert",
        _ => "ignore",
    }
}

#[test]
fn every_layout_writes_its_loaders_tensors_config_and_exact_values() {
    let dir = scratch("layouts");
    let input = dir.join("llama");
    let (config, tensors) = llama(&mut Rng(7));
    model_dir(&input, &config, &tensors);
    for (layout, scheme) in combinations() {
        let what = format!("{} {scheme}", layout.name());
        let out = dir.join(format!("{}-{}", layout.name(), scheme.name()));
        let mut opts = Options::new(&input, Some(out.clone()), Target::Scheme(scheme));
        opts.layout = Some(layout);
        let report = lowp_io::convert(&opts).unwrap();
        let written = read_dir(&out);
        let back = dir.join("back");
        let _ = std::fs::remove_dir_all(&back);
        lowp_io::convert(&Options::new(&out, Some(back.clone()), FloatType::F32)).unwrap();
        let restored = read_dir(&back);
        let mut expected_names = BTreeSet::new();
        let mut skipped = BTreeSet::from(["lm_head".to_string()]);
        for (name, _, shape, bytes) in &tensors {
            let quantized = is_linear(name) && fits(layout, scheme, shape);
            if !quantized {
                expected_names.insert(name.clone());
                if shape.len() == 2 {
                    skipped.insert(name.strip_suffix(".weight").unwrap().to_string());
                }
                assert_eq!(&written[name].2, bytes, "{what}: {name} is copied as it is");
                continue;
            }
            for (part, dtype, part_shape) in expected_parts(layout, scheme, name, shape, Dtype::F32)
            {
                let (d, s, _) = &written[&part];
                assert_eq!((d, s), (&dtype, &part_shape), "{what}: {part}");
                expected_names.insert(part);
            }
            // lowp's decoding rounds the layout's exact value once.
            let exact = exact_values(layout, scheme, &written, name, shape[0], shape[1]);
            let (d, s, b) = &restored[name.as_str()];
            assert_eq!((d, s), (&Dtype::F32, shape), "{what}: {name} decoded");
            for (i, (got, want)) in f32s(b).iter().zip(&exact).enumerate() {
                assert_eq!(
                    got.to_bits(),
                    (*want as f32).to_bits(),
                    "{what}: {name}[{i}]"
                );
            }
            // The report's SQNR is that of those exact values.
            let original = f32s(bytes);
            let (signal, noise) = original
                .iter()
                .zip(&exact)
                .fold((0.0, 0.0), |(s, n), (&x, &y)| {
                    (s + (x as f64).powi(2), n + (x as f64 - y).powi(2))
                });
            let row = report.tensors.iter().find(|t| &t.name == name).unwrap();
            let sqnr = 10.0 * (signal / noise).log10();
            let got = row.quant.as_ref().unwrap().stats.sqnr_db();
            assert!((got - sqnr).abs() < 1e-6, "{what}: {name}: {got} vs {sqnr}");
            let floor = if scheme.bits_per_element() == 8 {
                25.0
            } else {
                12.0
            };
            assert!(sqnr > floor, "{what}: {name}: SQNR {sqnr}");
        }
        let names: BTreeSet<String> = written.keys().cloned().collect();
        assert_eq!(names, expected_names, "{what}");
        // The config describes exactly that: the layout's method, and every module left.
        let q = &json_file(&out.join("config.json"))["quantization_config"];
        let skip: BTreeSet<String> = q[skip_key(layout)]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_str().unwrap().to_string())
            .collect();
        assert_eq!(skip, skipped, "{what}: skip list");
        let method = match layout {
            Layout::Transformers if scheme == Scheme::Mxfp8 => "mxfp8",
            Layout::Transformers => "fp8",
            Layout::CompressedTensors => "compressed-tensors",
            Layout::ModelOpt => "modelopt",
        };
        assert_eq!(q["quant_method"], method, "{what}");
        match layout {
            Layout::Transformers if scheme == Scheme::Mxfp8 => {
                assert_eq!(q["weight_block_size"], json!([1, 32]));
                assert_eq!(q["scale_fmt"], "ue8m0");
            }
            Layout::Transformers => assert_eq!(q["weight_block_size"], json!([128, 128])),
            Layout::CompressedTensors => {
                let format = match scheme {
                    Scheme::Fp8Block | Scheme::Fp8Channel => "float-quantized",
                    Scheme::Mxfp8 => "mxfp8-quantized",
                    Scheme::Mxfp4 => "mxfp4-pack-quantized",
                    Scheme::Nvfp4 => "nvfp4-pack-quantized",
                };
                assert_eq!(q["format"], format);
                let group = &q["config_groups"]["group_0"];
                assert_eq!(group["targets"], json!(["Linear"]));
                assert_eq!(group["format"], format);
                let (bits, strategy) = match scheme {
                    Scheme::Fp8Block => (8, "block"),
                    Scheme::Fp8Channel => (8, "channel"),
                    Scheme::Mxfp8 => (8, "group"),
                    Scheme::Mxfp4 => (4, "group"),
                    Scheme::Nvfp4 => (4, "tensor_group"),
                };
                assert_eq!(group["weights"]["num_bits"], bits, "{what}");
                assert_eq!(group["weights"]["strategy"], strategy, "{what}");
                assert_eq!(group["weights"]["type"], "float", "{what}");
            }
            Layout::ModelOpt => {
                assert_eq!(q["quant_algo"], "W4A16_NVFP4");
                let hf = json_file(&out.join("hf_quant_config.json"));
                assert_eq!(hf["quantization"]["exclude_modules"], q["ignore"]);
                assert_eq!(hf["quantization"]["group_size"], 16);
            }
        }
        assert_eq!(
            out.join("hf_quant_config.json").exists(),
            layout == Layout::ModelOpt
        );
        // Decoded, the model is plain again: its own names and shapes, no quantization.
        let plain: BTreeSet<String> = restored.keys().cloned().collect();
        let original: BTreeSet<String> = tensors.iter().map(|t| t.0.clone()).collect();
        assert_eq!(plain, original, "{what}: decoded names");
        let config = json_file(&back.join("config.json"));
        assert!(config.get("quantization_config").is_none(), "{what}");
        assert!(!back.join("hf_quant_config.json").exists(), "{what}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn the_default_layout_is_the_one_transformers_reads() {
    let dir = scratch("auto");
    let input = dir.join("llama");
    let (config, tensors) = llama(&mut Rng(3));
    model_dir(&input, &config, &tensors);
    for (scheme, method) in [
        (Scheme::Fp8Block, "fp8"),
        (Scheme::Mxfp8, "mxfp8"),
        (Scheme::Fp8Channel, "compressed-tensors"),
        (Scheme::Mxfp4, "compressed-tensors"),
        (Scheme::Nvfp4, "compressed-tensors"),
    ] {
        let out = dir.join(scheme.name());
        lowp_io::convert(&Options::new(
            &input,
            Some(out.clone()),
            Target::Scheme(scheme),
        ))
        .unwrap();
        let q = &json_file(&out.join("config.json"))["quantization_config"];
        assert_eq!(q["quant_method"], method, "{scheme}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn fp8_scales_take_the_dtype_of_a_bf16_model_in_compressed_tensors() {
    let dir = scratch("bf16-scales");
    let input = dir.join("f32");
    let (config, tensors) = llama(&mut Rng(5));
    model_dir(&input, &config, &tensors);
    let bf16 = dir.join("bf16");
    lowp_io::convert(&Options::new(&input, Some(bf16.clone()), FloatType::BF16)).unwrap();
    for scheme in [Scheme::Fp8Block, Scheme::Fp8Channel] {
        let out = dir.join(scheme.name());
        let mut opts = Options::new(&bf16, Some(out.clone()), Target::Scheme(scheme));
        opts.layout = Some(Layout::CompressedTensors);
        lowp_io::convert(&opts).unwrap();
        let written = read_dir(&out);
        let name = "model.layers.0.mlp.up_proj.weight";
        for (part, dtype, shape) in expected_parts(
            Layout::CompressedTensors,
            scheme,
            name,
            &[256, 128],
            Dtype::BF16,
        ) {
            assert_eq!(
                (written[&part].0, &written[&part].1),
                (dtype, &shape),
                "{scheme} {part}"
            );
        }
        // Decoded to bf16, each element is the exact bf16 scale times the element, rounded
        // once: what compressed-tensors computes in bf16.
        let back = dir.join(format!("{}-back", scheme.name()));
        lowp_io::convert(&Options::new(&out, Some(back.clone()), FloatType::F32)).unwrap();
        let exact = exact_values(Layout::CompressedTensors, scheme, &written, name, 256, 128);
        let got = f32s(&read_dir(&back)[name].2);
        for (i, (g, w)) in got.iter().zip(&exact).enumerate() {
            assert_eq!(g.to_bits(), (*w as f32).to_bits(), "{scheme} {name}[{i}]");
        }
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn nvfp4_global_scales_divide_exactly_and_published_ones_round_once() {
    let dir = scratch("global");
    let input = dir.join("llama");
    let (config, tensors) = llama(&mut Rng(9));
    model_dir(&input, &config, &tensors);
    let out = dir.join("ct");
    let mut opts = Options::new(&input, Some(out.clone()), Target::Scheme(Scheme::Nvfp4));
    opts.layout = Some(Layout::CompressedTensors);
    lowp_io::convert(&opts).unwrap();
    let written = read_dir(&out);
    let name = "model.layers.0.mlp.up_proj.weight";
    let amax = f32s(&tensors.iter().find(|t| t.0 == name).unwrap().3)
        .iter()
        .fold(0f64, |a, &x| a.max((x as f64).abs()));
    // 1 / global_scale is the smallest power of two at or above amax / 2688.
    let global = f32s(&written[&format!("{name}_global_scale")].2)[0] as f64;
    let scale_2 = 1.0 / global;
    assert_eq!(scale_2.log2().fract(), 0.0, "a power of two: {scale_2}");
    assert!(
        scale_2 >= amax / 2688.0 && scale_2 / 2.0 < amax / 2688.0,
        "{scale_2} for {amax}"
    );

    // A global scale as llm-compressor chooses it, 2688 / amax rounded to f32, is not a power
    // of two: the quotient q * s / global_scale is rounded once, to nearest.
    let mut published = written.clone();
    let odd = (2688.0 / amax) as f32 * 1.37;
    published.insert(
        format!("{name}_global_scale"),
        (Dtype::F32, vec![1], odd.to_le_bytes().to_vec()),
    );
    let file = dir.join("published.safetensors");
    let list: Vec<Tensor> = published
        .iter()
        .filter(|(n, _)| n.starts_with(name))
        .map(|(n, (d, s, b))| (n.clone(), *d, s.clone(), b.clone()))
        .collect();
    write(&file, &list, None);
    let back = dir.join("published-f32.safetensors");
    lowp_io::convert(&Options::new(&file, Some(back.clone()), FloatType::F32)).unwrap();
    let got = f32s(&read(&back)[name].2);
    let exact = exact_values(
        Layout::CompressedTensors,
        Scheme::Nvfp4,
        &published,
        name,
        256,
        128,
    );
    let q = &published[&format!("{name}_packed")].2;
    let s = &published[&format!("{name}_scale")].2;
    for (i, (g, w)) in got.iter().zip(&exact).enumerate() {
        // Checked against the exact rational q * s / g: the f32 nearest it, by exact
        // comparisons (q * s has at most 8 bits, products below are exact in f64).
        let (r, c) = (i / 128, i % 128);
        let num = e2m1(nibble(&q[r * 64..], c)) * e4m3(s[r * 8 + c / 16]);
        let g64 = *g as f64;
        let up = f32::from_bits(g.to_bits() + 1) as f64;
        let down = f32::from_bits(g.to_bits().wrapping_sub(1)) as f64;
        if num == 0.0 {
            assert_eq!(*g, 0.0, "[{i}]");
            continue;
        }
        let d = odd as f64;
        assert!(
            ((g64 + up) * d - 2.0 * num) * num.signum() >= 0.0
                && ((g64 + down) * d - 2.0 * num) * num.signum() <= 0.0,
            "[{i}]: {g} for {num} / {d}"
        );
        assert_eq!(g.to_bits(), (*w as f32).to_bits(), "[{i}]");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn an_f64_amax_just_past_a_power_of_two_gets_the_next_global_scale() {
    // amax / 2688 = 1 + 2^-30: above 1 although it rounds to 1 in f32, so 1 / global_scale is 2.
    let dir = scratch("global-f64");
    let input = dir.join("w.safetensors");
    let mut x = vec![0.5f64; 64];
    x[0] = 2688.0 * (1.0 + pow2(-30));
    let bytes = x.iter().flat_map(|v| v.to_le_bytes()).collect();
    write(
        &input,
        &[("w.weight".into(), Dtype::F64, vec![2, 32], bytes)],
        None,
    );
    let out = dir.join("q.safetensors");
    let mut opts = Options::new(&input, Some(out.clone()), Target::Scheme(Scheme::Nvfp4));
    opts.layout = Some(Layout::CompressedTensors);
    let report = lowp_io::convert(&opts).unwrap();
    assert_eq!(f32s(&read(&out)["w.weight_global_scale"].2), [0.5]);
    assert_eq!(
        report.tensors[0]
            .quant
            .as_ref()
            .unwrap()
            .stats
            .clipped_blocks,
        0
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn tensors_kept_in_f32_say_why() {
    let dir = scratch("keep");
    let input = dir.join("llama");
    let (config, tensors) = llama(&mut Rng(10));
    model_dir(&input, &config, &tensors);
    let report = lowp_io::convert(&Options {
        keep_f32: vec!["*q_proj*".into(), "*norm*".into()],
        rest: Some(FloatType::BF16),
        ..Options::new(&input, None, Target::Scheme(Scheme::Fp8Channel))
    })
    .unwrap();
    let row = |name: &str| report.tensors.iter().find(|t| t.name == name).unwrap();
    let q = row("model.layers.0.self_attn.q_proj.weight");
    assert_eq!(
        (q.to.as_str(), q.note.as_str()),
        ("F32", "matched by --keep-f32")
    );
    let head = row("lm_head.weight");
    assert_eq!(head.to, "BF16");
    assert!(
        head.note.ends_with("; stored as bf16 (--rest)"),
        "{}",
        head.note
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A small gpt-oss: experts `[E, in, out]` with biases, attention, a router.
fn gpt_oss(rng: &mut Rng, intermediate: usize) -> (Value, Vec<Tensor>) {
    let config = json!({
        "model_type": "gpt_oss", "vocab_size": 128, "hidden_size": 64,
        "intermediate_size": intermediate, "num_local_experts": 2,
    });
    let tensors = vec![
        f32_tensor("model.embed_tokens.weight", &[128, 64], rng),
        f32_tensor("model.layers.0.self_attn.q_proj.weight", &[64, 64], rng),
        f32_tensor("model.layers.0.mlp.router.weight", &[2, 64], rng),
        f32_tensor("model.layers.0.mlp.router.bias", &[2], rng),
        f32_tensor(
            "model.layers.0.mlp.experts.gate_up_proj",
            &[2, 64, 2 * intermediate],
            rng,
        ),
        f32_tensor(
            "model.layers.0.mlp.experts.gate_up_proj_bias",
            &[2, 2 * intermediate],
            rng,
        ),
        f32_tensor(
            "model.layers.0.mlp.experts.down_proj",
            &[2, intermediate, 64],
            rng,
        ),
        f32_tensor("model.layers.0.mlp.experts.down_proj_bias", &[2, 64], rng),
        f32_tensor("lm_head.weight", &[128, 64], rng),
    ];
    (config, tensors)
}

#[test]
fn gpt_oss_experts_are_transposed_into_transformers_mxfp4_and_back() {
    let dir = scratch("gptoss");
    check_gpt_oss_experts(&dir, 32);
    // Experts of 8,320 outputs (gate_up_proj) and 4,160 inputs (down_proj): more than one tile
    // holds, so they are read, transposed, quantized and decoded in tiles of both dimensions.
    check_gpt_oss_experts(&dir, 4160);
    // Experts whose input is not whole blocks of 32 (the down projection's 24) cannot be read;
    // their module's other weight then stays too, so nothing is left to quantize.
    let odd = dir.join("odd");
    let (config, tensors) = gpt_oss(&mut Rng(22), 24);
    model_dir(&odd, &config, &tensors);
    let out = dir.join("odd-mxfp4");
    let err = lowp_io::convert(&Options::new(
        &odd,
        Some(out.clone()),
        Target::Scheme(Scheme::Mxfp4),
    ))
    .unwrap_err();
    assert!(
        err.to_string()
            .contains("an input of 24 is not whole blocks of 32"),
        "{err}"
    );
    assert!(!out.exists());
    let report = lowp_io::convert(&Options {
        only: vec!["*gate_up_proj".into()],
        ..Options::new(&odd, None, Target::Scheme(Scheme::Mxfp4))
    });
    let err = report.unwrap_err();
    assert!(
        err.to_string()
            .contains("'model.layers.0.mlp.experts.down_proj' of the same module"),
        "{err}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Converts a gpt-oss model whose experts are `intermediate` wide to transformers' MXFP4 and
/// back (in `dir`), checking the transposed experts against compressed-tensors' blocks of each
/// expert transposed here, and the decoded values against the blocks.
fn check_gpt_oss_experts(dir: &Path, intermediate: usize) {
    let input = dir.join(format!("gptoss-{intermediate}"));
    let (config, tensors) = gpt_oss(&mut Rng(21), intermediate);
    model_dir(&input, &config, &tensors);
    let out = dir.join(format!("mxfp4-{intermediate}"));
    lowp_io::convert(&Options::new(
        &input,
        Some(out.clone()),
        Target::Scheme(Scheme::Mxfp4),
    ))
    .unwrap();
    let written = read_dir(&out);
    let q = &json_file(&out.join("config.json"))["quantization_config"];
    assert_eq!(q["quant_method"], "mxfp4");
    let skip: BTreeSet<&str> = q["modules_to_not_convert"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    let want: BTreeSet<&str> = [
        "lm_head",
        "model.embed_tokens",
        "model.layers.0.mlp.router",
        "model.layers.0.self_attn.q_proj",
    ]
    .into();
    assert_eq!(skip, want);
    // Only the experts are quantized; the attention, router and biases stay as they are.
    for (name, _, _, bytes) in &tensors {
        if !name.ends_with("_proj") {
            assert_eq!(&written[name].2, bytes, "{name}");
        }
    }
    // The independent check of the transposition: each expert transposed here, written as a
    // 2-D weight and quantized by compressed-tensors' MXFP4 (blocks along the rows), gives the
    // same bytes as transformers' blocks.
    for (proj, ins, outs) in [
        ("gate_up_proj", 64, 2 * intermediate),
        ("down_proj", intermediate, 64),
    ] {
        let name = format!("model.layers.0.mlp.experts.{proj}");
        let blocks = &written[&format!("{name}_blocks")];
        let scales = &written[&format!("{name}_scales")];
        assert_eq!(blocks.1, vec![2, outs, ins / 32, 16], "{name}");
        assert_eq!(scales.1, vec![2, outs, ins / 32], "{name}");
        let w = f32s(&tensors.iter().find(|t| t.0 == name).unwrap().3);
        for e in 0..2 {
            let t: Vec<f32> = (0..outs * ins)
                .map(|k| w[e * ins * outs + (k % ins) * outs + k / ins])
                .collect();
            let one = dir.join("one.safetensors");
            let bytes = t.iter().flat_map(|v| v.to_le_bytes()).collect();
            write(
                &one,
                &[("x.weight".into(), Dtype::F32, vec![outs, ins], bytes)],
                None,
            );
            let q1 = dir.join("one-q.safetensors");
            let mut opts = Options::new(&one, Some(q1.clone()), Target::Scheme(Scheme::Mxfp4));
            opts.layout = Some(Layout::CompressedTensors);
            lowp_io::convert(&opts).unwrap();
            let ct = read(&q1);
            let (nb, ns) = (outs * ins / 2, outs * ins / 32);
            assert_eq!(
                &blocks.2[e * nb..(e + 1) * nb],
                &ct["x.weight_packed"].2[..],
                "{name}[{e}]"
            );
            assert_eq!(
                &scales.2[e * ns..(e + 1) * ns],
                &ct["x.weight_scale"].2[..],
                "{name}[{e}]"
            );
        }
        // Decoded back in the model's own shape [E, in, out], element by element exact.
        let back = dir.join("back");
        let _ = std::fs::remove_dir_all(&back);
        lowp_io::convert(&Options::new(&out, Some(back.clone()), FloatType::F32)).unwrap();
        let decoded = &read_dir(&back)[&name];
        assert_eq!(decoded.1, vec![2, ins, outs]);
        let got = f32s(&decoded.2);
        for e in 0..2 {
            for i in 0..ins {
                for o in 0..outs {
                    let at = (e * outs + o) * ins + i;
                    let byte = blocks.2[at / 2];
                    let n = if i.is_multiple_of(2) {
                        byte & 0xF
                    } else {
                        byte >> 4
                    };
                    let want = e2m1(n) * e8m0(scales.2[(e * outs + o) * ins / 32 + i / 32]);
                    let g = got[(e * ins + i) * outs + o];
                    assert_eq!(
                        g.to_bits(),
                        (want as f32).to_bits(),
                        "{name}[{e}, {i}, {o}]"
                    );
                }
            }
        }
    }
}

#[test]
fn modelopt_w4a4_takes_the_activation_amax_and_decoding_drops_it() {
    let dir = scratch("w4a4");
    let input = dir.join("llama");
    let (config, tensors) = llama(&mut Rng(4));
    model_dir(&input, &config, &tensors);
    let linear: Vec<&str> = tensors
        .iter()
        .map(|t| t.0.as_str())
        .filter(|n| is_linear(n))
        .map(|n| n.strip_suffix(".weight").unwrap())
        .collect();
    let amax: serde_json::Map<String, Value> = linear
        .iter()
        .enumerate()
        .map(|(i, m)| (m.to_string(), json!(1.5 + i as f64)))
        .collect();
    let amax_file = dir.join("amax.json");
    std::fs::write(&amax_file, Value::Object(amax.clone()).to_string()).unwrap();
    let out = dir.join("w4a4");
    let mut opts = Options::new(&input, Some(out.clone()), Target::Scheme(Scheme::Nvfp4));
    opts.layout = Some(Layout::ModelOpt);
    opts.activation_amax = Some(amax_file.clone());
    lowp_io::convert(&opts).unwrap();
    let written = read_dir(&out);
    for (module, a) in &amax {
        let s = &written[&format!("{module}.input_scale")];
        assert_eq!((s.0, &s.1), (Dtype::F32, &vec![]), "{module}");
        assert_eq!(
            f32s(&s.2)[0],
            (a.as_f64().unwrap() / 2688.0) as f32,
            "{module}"
        );
    }
    let q = &json_file(&out.join("config.json"))["quantization_config"];
    assert_eq!(q["quant_algo"], "NVFP4");
    assert_eq!(
        json_file(&out.join("hf_quant_config.json"))["quantization"]["quant_algo"],
        "NVFP4"
    );
    let back = dir.join("back");
    lowp_io::convert(&Options::new(&out, Some(back.clone()), FloatType::BF16)).unwrap();
    assert!(read_dir(&back).keys().all(|k| !k.contains("input_scale")));

    // Every quantized layer needs its amax, and every name must be a module of the model.
    let mut short = amax.clone();
    short.remove(linear[0]);
    std::fs::write(&amax_file, Value::Object(short).to_string()).unwrap();
    let err = lowp_io::convert(&Options {
        output: Some(dir.join("x")),
        ..opts.clone()
    })
    .unwrap_err();
    assert!(
        err.to_string()
            .contains(&format!("no amax for '{}'", linear[0])),
        "{err}"
    );
    // Entries of modules left unquantized (the head, which a calibration run sees) are unused.
    let mut extra = amax.clone();
    extra.insert("lm_head".into(), json!(9.0));
    std::fs::write(&amax_file, Value::Object(extra).to_string()).unwrap();
    let with_head = dir.join("with-head");
    lowp_io::convert(&Options {
        output: Some(with_head.clone()),
        ..opts.clone()
    })
    .unwrap();
    assert!(!read_dir(&with_head).contains_key("lm_head.input_scale"));
    std::fs::write(&amax_file, "{\"model.layers.0.self_attn.q_proj\": -1}").unwrap();
    let err = lowp_io::convert(&Options {
        output: Some(dir.join("x")),
        ..opts.clone()
    })
    .unwrap_err();
    assert!(
        err.to_string().contains("not a finite positive number"),
        "{err}"
    );
    let err = lowp_io::convert(&Options {
        output: Some(dir.join("x")),
        layout: Some(Layout::CompressedTensors),
        ..opts.clone()
    })
    .unwrap_err();
    assert!(
        err.to_string()
            .contains("needs --to nvfp4 --layout modelopt"),
        "{err}"
    );
    assert!(!dir.join("x").exists());
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn what_no_config_can_describe_is_refused_before_any_work() {
    let dir = scratch("refused");
    let input = dir.join("llama");
    let (config, tensors) = llama(&mut Rng(6));
    model_dir(&input, &config, &tensors);
    let out = dir.join("out");
    let scheme_in = |scheme, layout| {
        let mut o = Options::new(&input, Some(out.clone()), Target::Scheme(scheme));
        o.layout = layout;
        o
    };
    let cases: Vec<(Options, &str)> = vec![
        (
            scheme_in(Scheme::Nvfp4, Some(Layout::Transformers)),
            "transformers cannot load pre-quantized NVFP4",
        ),
        (
            scheme_in(Scheme::Mxfp4, Some(Layout::Transformers)),
            "this model is 'llama'; --layout compressed-tensors",
        ),
        (
            scheme_in(Scheme::Mxfp8, Some(Layout::ModelOpt)),
            "ModelOpt's layout for nvfp4 only",
        ),
        (
            Options {
                only: vec!["*odd_proj*".into()],
                ..scheme_in(Scheme::Fp8Block, None)
            },
            "'model.layers.0.mlp.odd_proj.weight' for one: 48 x 80 is not whole 128 x 128 blocks",
        ),
        (
            Options {
                layout: Some(Layout::ModelOpt),
                ..Options::new(&input, Some(out.clone()), FloatType::BF16)
            },
            "applies to the block-quantized schemes",
        ),
    ];
    for (opts, want) in cases {
        let err = lowp_io::convert(&opts).unwrap_err();
        assert!(matches!(&err, Error::Invalid(_)), "{err}");
        assert!(err.to_string().contains(want), "{want}: {err}");
        assert!(!out.exists(), "{want}");
    }
    // A quantized model: quantizing it again would mix schemes; decoding part of it would
    // leave a config that describes neither part.
    let q = dir.join("q");
    lowp_io::convert(&Options::new(
        &input,
        Some(q.clone()),
        Target::Scheme(Scheme::Mxfp8),
    ))
    .unwrap();
    let err = lowp_io::convert(&Options::new(
        &q,
        Some(out.clone()),
        Target::Scheme(Scheme::Nvfp4),
    ))
    .unwrap_err();
    assert!(
        err.to_string()
            .contains("IN already holds quantized weights (4 in mxfp8"),
        "{err}"
    );
    let partial = Options {
        only: vec!["*q_proj*".into()],
        ..Options::new(&q, Some(out.clone()), FloatType::BF16)
    };
    let err = lowp_io::convert(&partial).unwrap_err();
    assert!(err.to_string().contains("--only leaves"), "{err}");
    assert!(!out.exists());
    // A single file has no config: decoding part of it is fine.
    let file = q.join("model.safetensors");
    let part = dir.join("part.safetensors");
    lowp_io::convert(&Options {
        only: vec!["*q_proj*".into()],
        ..Options::new(&file, Some(part.clone()), FloatType::BF16)
    })
    .unwrap();
    let t = read(&part);
    assert_eq!(t["model.layers.0.self_attn.q_proj.weight"].0, Dtype::BF16);
    assert_eq!(t["model.layers.0.mlp.up_proj.weight"].0, Dtype::F8_E4M3);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_config_that_claims_a_quantization_its_tensors_lack_loses_it() {
    let dir = scratch("stale");
    let input = dir.join("llama");
    let (mut config, tensors) = llama(&mut Rng(8));
    config["quantization_config"] = json!({"quant_method": "fp8", "weight_block_size": [128, 128]});
    model_dir(&input, &config, &tensors);
    std::fs::write(input.join("hf_quant_config.json"), "{}").unwrap();
    let out = dir.join("bf16");
    lowp_io::convert(&Options::new(&input, Some(out.clone()), FloatType::BF16)).unwrap();
    let written = json_file(&out.join("config.json"));
    assert!(written.get("quantization_config").is_none(), "{written}");
    assert_eq!(written["model_type"], "llama");
    assert!(!out.join("hf_quant_config.json").exists());
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Writes a sharded model directory of [`llama`]: two shards, an index, a config, a tokenizer
/// and sentence-transformers' `1_Pooling/`.
fn sharded_model(dir: &Path, rng: &mut Rng) -> Vec<Tensor> {
    std::fs::create_dir_all(dir).unwrap();
    let (config, tensors) = llama(rng);
    let (a, b) = tensors.split_at(3);
    write(&dir.join("model-00001-of-00002.safetensors"), a, None);
    write(&dir.join("model-00002-of-00002.safetensors"), b, None);
    let map: serde_json::Map<String, Value> = tensors
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
    let index = json!({"metadata": {"total_size": 0}, "weight_map": map});
    std::fs::write(dir.join("model.safetensors.index.json"), index.to_string()).unwrap();
    std::fs::write(dir.join("config.json"), config.to_string()).unwrap();
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
    let index = json_file(&dir.join("model.safetensors.index.json"));
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
    opts.shard_size = Some(40_000);
    opts.rest = Some(FloatType::BF16);
    let report = lowp_io::convert(&opts).unwrap();
    assert!(report.quant_summary().is_some());
    let map = checked_index(&quantized);
    let shard_count = map.values().collect::<std::collections::HashSet<_>>().len();
    assert!(shard_count >= 3, "{shard_count} shards");
    // A weight's tensors share a shard.
    let up = "model.layers.0.mlp.up_proj.weight";
    for part in ["_scale", "_global_scale"] {
        assert_eq!(
            map[&format!("{up}_packed")],
            map[&format!("{up}{part}")],
            "{part}"
        );
    }
    assert_eq!(
        std::fs::read(quantized.join("tokenizer.json")).unwrap(),
        b"{\"toy\": true}\n"
    );
    let config = json_file(&quantized.join("config.json"));
    assert_eq!(config["model_type"], "llama");
    assert_eq!(
        config["quantization_config"]["format"],
        "nvfp4-pack-quantized"
    );
    assert!(!quantized.join("hf_quant_config.json").exists());
    // The 1-D tensors went to --rest's type.
    assert_eq!(
        read(&quantized.join(&map["model.norm.weight"]))["model.norm.weight"].0,
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
    let config = json_file(&decoded.join("config.json"));
    assert!(config.get("quantization_config").is_none());
    let up = &read(&decoded.join(&map[up]))[up];
    assert_eq!((up.0, &up.1), (Dtype::BF16, &vec![256, 128]));

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
fn per_tensor_fp8_and_padded_fp4_of_earlier_outputs_are_read() {
    let dir = scratch("earlier");
    let input = dir.join("model.safetensors");
    write(
        &input,
        &[f32_tensor("w.weight", &[4, 64], &mut Rng(9))],
        None,
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
    // gpt-oss's original spelling, padded to whole blocks with the shape in the metadata as
    // earlier lowp outputs wrote it: 5 x 50 in blocks of 32.
    let blocks: Vec<u8> = (0..5 * 2 * 16).map(|i| (i * 37 % 256) as u8).collect();
    let scales: Vec<u8> = (0..10).map(|i| 120 + i as u8).collect();
    let padded = dir.join("padded.safetensors");
    write(
        &padded,
        &[
            ("v.blocks".into(), Dtype::U8, vec![5, 2, 16], blocks.clone()),
            ("v.scales".into(), Dtype::U8, vec![5, 2], scales.clone()),
        ],
        Some(HashMap::from([(
            "lowp.shape.v".to_string(),
            "[5,50]".to_string(),
        )])),
    );
    let back = dir.join("padded-f32.safetensors");
    lowp_io::convert(&Options::new(&padded, Some(back.clone()), FloatType::F32)).unwrap();
    let v = &read(&back)["v"];
    assert_eq!(v.1, vec![5, 50]);
    let got = f32s(&v.2);
    for r in 0..5 {
        for c in 0..50 {
            let want = e2m1(nibble(&blocks[r * 32..], c)) * e8m0(scales[r * 2 + c / 32]);
            assert_eq!(got[r * 50 + c], want as f32, "[{r}, {c}]");
        }
    }
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
            "floats of shape [200, 1] (per channel) or [2, 1] (one per 128 x 128 block)",
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
            "compressed-tensors NVFP4 without its global scale",
            vec![u8s("w_packed", &[4, 8]), e4m3s("w_scale", &[4, 1])],
            "without its global scale 'w_global_scale'",
        ),
        (
            "compressed-tensors MXFP4 scales of the wrong shape",
            vec![u8s("w_packed", &[4, 16]), u8s("w_scale", &[4, 2])],
            "one per 32 of 32 columns",
        ),
        (
            "transformers MXFP8 scales of the wrong shape",
            vec![e4m3s("w", &[4, 64]), u8s("w_scale_inv", &[4, 3])],
            "one per 32 elements",
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
fn a_model_directory_is_written_as_a_directory_and_nested_models_are_their_own() {
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
    // An output written inside the model's directory is not read by the run writing it, and
    // is a model of its own next time: converted into the same place, and said so.
    let inner = input.join("bf16");
    let first =
        lowp_io::convert(&Options::new(&input, Some(inner.clone()), FloatType::BF16)).unwrap();
    assert!(first.notes.is_empty(), "{:?}", first.notes);
    let again = dir.join("again");
    let report =
        lowp_io::convert(&Options::new(&input, Some(again.clone()), FloatType::F16)).unwrap();
    assert!(inner.join("config.json").exists());
    assert!(again.join("bf16/config.json").exists());
    let nested = read_dir(&again.join("bf16"));
    assert!(!nested.is_empty() && nested.values().all(|t| t.0 == Dtype::F16));
    assert!(report.tensors.iter().any(|t| t.name.starts_with("bf16/")));
    assert!(
        report
            .notes
            .iter()
            .any(|n| n.contains("bf16") && n.contains("model of its own")),
        "{:?}",
        report.notes
    );
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
    let a: Vec<f32> = (0..16).chain([1, 2]).map(|n| e2m1(n) as f32).collect();
    assert_eq!(f32s(&t["a"].2), a);
    // E2M3: bias 1, three mantissa bits; 1 = 0.125 (subnormal), 9 = 1.125, 33 = -0.125, 63 = -7.5.
    assert_eq!(f32s(&t["b"].2), [0.125, 1.125, -0.125, -7.5]);
    let c = f32s(&t["c"].2);
    assert_eq!((c[0], c[1] as f64), (1.0, 2f64.powi(-127)));
    assert!(c[2].is_nan());
    // They are no linear weights: a scheme has nothing to quantize.
    let err =
        lowp_io::convert(&Options::new(&input, None, Target::Scheme(Scheme::Mxfp4))).unwrap_err();
    assert!(err.to_string().contains("has no linear weight"), "{err}");
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
