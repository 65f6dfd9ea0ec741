//! `lowp convert` on files written by Python's safetensors and NumPy (tests/data, made by
//! tools/make_convert_fixtures.py): every value of every output is compared with lowp's scalar
//! conversion of the input value, and the safety properties are checked from outside.

use lowp::{LowpFloat, bf16, f8e4m3fn, f8e5m2, f16};
use safetensors::{Dtype, SafeTensors};
use serde_json::Value;
use std::path::{Path, PathBuf};

mod common;
use common::{data, listing, lowp, stdout as ok};

/// Runs `lowp`, expects exit code `code` and one line on stderr, returns it.
fn fails(code: i32, args: &[&str]) -> String {
    let out = lowp(args);
    let err = String::from_utf8(out.stderr).expect("UTF-8");
    assert_eq!(out.status.code(), Some(code), "lowp {args:?}: {err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.starts_with("error: ") && !err.contains("panicked"),
        "{err}"
    );
    err
}

/// A fresh scratch folder for one test.
fn scratch(test: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("lowp-convert-{test}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// The exact values of `bytes` holding little-endian elements of `dtype`.
fn values(dtype: Dtype, bytes: &[u8]) -> Vec<f64> {
    let w = |n: usize| bytes.chunks_exact(n);
    match dtype {
        Dtype::F64 => w(8)
            .map(|c| f64::from_le_bytes(c.try_into().unwrap()))
            .collect(),
        Dtype::F32 => w(4)
            .map(|c| f32::from_le_bytes(c.try_into().unwrap()) as f64)
            .collect(),
        Dtype::F16 => w(2)
            .map(|c| f16::from_bits(u16::from_le_bytes([c[0], c[1]])).to_f64())
            .collect(),
        Dtype::BF16 => w(2)
            .map(|c| bf16::from_bits(u16::from_le_bytes([c[0], c[1]])).to_f64())
            .collect(),
        Dtype::F8_E4M3 => bytes
            .iter()
            .map(|&b| f8e4m3fn::from_bits(b).to_f64())
            .collect(),
        Dtype::F8_E5M2 => bytes
            .iter()
            .map(|&b| f8e5m2::from_bits(b).to_f64())
            .collect(),
        other => panic!("not a float: {other}"),
    }
}

/// `x * scale` stored in `dtype` by the scalar conversions, as little-endian bytes.
fn scalar(dtype: Dtype, xs: &[f64], scale: f64, saturate: bool) -> Vec<u8> {
    let mut out = Vec::new();
    for &x in xs {
        let x = x * scale;
        match dtype {
            Dtype::F64 => out.extend(x.to_le_bytes()),
            Dtype::F32 => {
                let max = f32::MAX as f64;
                let y = if saturate { x.clamp(-max, max) } else { x };
                out.extend((y as f32).to_le_bytes())
            }
            Dtype::F16 => out.extend(round::<f16>(x, saturate).to_bits().to_le_bytes()),
            Dtype::BF16 => out.extend(round::<bf16>(x, saturate).to_bits().to_le_bytes()),
            Dtype::F8_E4M3 => out.push(round::<f8e4m3fn>(x, saturate).to_bits()),
            Dtype::F8_E5M2 => out.push(round::<f8e5m2>(x, saturate).to_bits()),
            other => panic!("not a float: {other}"),
        }
    }
    out
}

fn round<T: LowpFloat>(x: f64, saturate: bool) -> T {
    if saturate {
        T::from_f64_saturating(x)
    } else {
        T::from_f64(x)
    }
}

fn is_float(d: Dtype) -> bool {
    matches!(
        d,
        Dtype::F64 | Dtype::F32 | Dtype::F16 | Dtype::BF16 | Dtype::F8_E4M3 | Dtype::F8_E5M2
    )
}

/// Checks that `out` holds every tensor of `input` converted to `to` (kept when not a float
/// or already `to`), value for value as the scalar conversion gives, with the scale tensors
/// when `scaled`, and the metadata.
fn check_safetensors(input: &[u8], out: &[u8], to: Dtype, saturate: bool, scaled: bool) {
    let a = SafeTensors::deserialize(input).unwrap();
    let b =
        SafeTensors::deserialize(out).expect("the output reads back with the safetensors crate");
    let (_, meta_a) = SafeTensors::read_metadata(input).unwrap();
    let (_, meta_b) = SafeTensors::read_metadata(out).unwrap();
    assert_eq!(meta_a.metadata(), meta_b.metadata());
    let mut expected_names = 0;
    for (name, t) in a.tensors() {
        let o = b.tensor(&name).unwrap();
        assert_eq!(o.shape(), t.shape(), "{name}");
        expected_names += 1;
        if !is_float(t.dtype()) || t.dtype() == to {
            assert_eq!((o.dtype(), o.data()), (t.dtype(), t.data()), "{name} kept");
            continue;
        }
        assert_eq!(o.dtype(), to, "{name}");
        let xs = values(t.dtype(), t.data());
        let scale = if scaled && matches!(to, Dtype::F8_E4M3 | Dtype::F8_E5M2) {
            expected_names += 1;
            let s = b.tensor(&format!("{name}.scale")).unwrap();
            assert_eq!((s.dtype(), s.shape()), (Dtype::F32, &[][..]));
            let restore = f32::from_le_bytes(s.data().try_into().unwrap()) as f64;
            assert_eq!(restore.log2().fract(), 0.0, "a power of two");
            1.0 / restore
        } else {
            1.0
        };
        // Widening is exact: infinities stay infinite even when saturating.
        let widening = matches!(
            (t.dtype(), to),
            (_, Dtype::F64)
                | (
                    Dtype::F16 | Dtype::BF16 | Dtype::F8_E4M3 | Dtype::F8_E5M2,
                    Dtype::F32
                )
        );
        let saturate = saturate && !widening;
        assert_eq!(
            o.data(),
            &scalar(to, &xs, scale, saturate)[..],
            "{name} -> {to}"
        );
    }
    assert_eq!(b.len(), expected_names);
}

const TARGETS: [(&str, Dtype); 6] = [
    ("f64", Dtype::F64),
    ("f32", Dtype::F32),
    ("f16", Dtype::F16),
    ("bf16", Dtype::BF16),
    ("f8e4m3fn", Dtype::F8_E4M3),
    ("f8e5m2", Dtype::F8_E5M2),
];

#[test]
fn python_safetensors_convert_to_every_type_value_for_value() {
    let dir = scratch("every-type");
    for fixture in ["model_f32.safetensors", "mixed.safetensors"] {
        let input = std::fs::read(data(fixture)).unwrap();
        for (name, dtype) in TARGETS {
            for saturate in [false, true] {
                let out = dir.join(format!("{name}.safetensors"));
                let mut args: Vec<String> = vec![
                    "convert".into(),
                    s(&data(fixture)).to_owned(),
                    s(&out).to_owned(),
                    "--to".into(),
                    name.into(),
                ];
                if saturate {
                    args.push("--saturate".into());
                }
                let args: Vec<&str> = args.iter().map(String::as_str).collect();
                ok(&args);
                check_safetensors(
                    &input,
                    &std::fs::read(&out).unwrap(),
                    dtype,
                    saturate,
                    false,
                );
            }
        }
    }
    assert!(
        listing(&dir).iter().all(|n| !n.contains(".tmp")),
        "{:?}",
        listing(&dir)
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn fp8_per_tensor_scales_restore_the_values() {
    let dir = scratch("scale");
    for fixture in ["model_f32.safetensors", "mixed.safetensors"] {
        let input = std::fs::read(data(fixture)).unwrap();
        for (name, dtype) in [("f8e4m3fn", Dtype::F8_E4M3), ("f8e5m2", Dtype::F8_E5M2)] {
            let out = dir.join("scaled.safetensors");
            let table = ok(&[
                "convert",
                s(&data(fixture)),
                s(&out),
                "--to",
                name,
                "--fp8-scale",
                "per-tensor",
            ]);
            assert!(table.contains("scale"), "{table}");
            check_safetensors(&input, &std::fs::read(&out).unwrap(), dtype, false, true);
        }
    }
    // With the scale, the bias (|x| up to ~1000) no longer overflows E4M3: halved before
    // rounding, so its stored scale is 2^1.
    let table = ok(&[
        "convert",
        "--dry-run",
        s(&data("model_f32.safetensors")),
        "--to",
        "f8e4m3fn",
        "--fp8-scale",
        "per-tensor",
    ]);
    let bias = table
        .lines()
        .find(|l| l.starts_with("layers.0.mlp.bias "))
        .unwrap();
    assert!(bias.contains(" ok") && bias.contains(" 2^1 "), "{bias}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn only_and_keep_f32_choose_tensors() {
    let dir = scratch("patterns");
    let out = dir.join("o.safetensors");
    ok(&[
        "convert",
        s(&data("mixed.safetensors")),
        s(&out),
        "--to",
        "f8e5m2",
        "--only",
        "f*,bf16",
        "--keep-f32",
        "f16",
    ]);
    let bytes = std::fs::read(&out).unwrap();
    let b = SafeTensors::deserialize(&bytes).unwrap();
    let dtype = |n: &str| b.tensor(n).unwrap().dtype();
    assert_eq!(dtype("f64"), Dtype::F8_E5M2);
    assert_eq!(dtype("f32"), Dtype::F8_E5M2);
    assert_eq!(dtype("f16"), Dtype::F32);
    assert_eq!(dtype("bf16"), Dtype::F8_E5M2);
    assert_eq!(dtype("e4m3"), Dtype::F8_E4M3, "not matched by --only");
    assert_eq!(dtype("i8"), Dtype::I8);
    // f16 widened to f32 exactly.
    let input = std::fs::read(data("mixed.safetensors")).unwrap();
    let a = SafeTensors::deserialize(&input).unwrap();
    let f16s = values(Dtype::F16, a.tensor("f16").unwrap().data());
    assert_eq!(
        values(Dtype::F32, b.tensor("f16").unwrap().data()).len(),
        f16s.len()
    );
    for (x, y) in f16s
        .iter()
        .zip(values(Dtype::F32, b.tensor("f16").unwrap().data()))
    {
        assert!(x == &y || (x.is_nan() && y.is_nan()));
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn dry_run_reports_without_writing_and_json_report() {
    let dir = scratch("dry");
    let report = dir.join("report.json");
    let table = ok(&[
        "convert",
        "--dry-run",
        s(&data("model_f32.safetensors")),
        "--to",
        "f8e4m3fn",
        "--report",
        s(&report),
    ]);
    assert_eq!(listing(&dir), ["report.json"]);
    let header = table.lines().next().unwrap();
    for col in [
        "tensor",
        "elements",
        "overflow",
        "to zero",
        "subnormal",
        "to NaN",
        "max rel err",
        "mean rel err",
        "verdict",
    ] {
        assert!(header.contains(col), "{header}");
    }
    let row = |name: &str| {
        table
            .lines()
            .find(|l| l.starts_with(&format!("{name} ")))
            .unwrap()
            .to_string()
    };
    assert!(row("layers.0.mlp.bias").contains("fail"), "{table}");
    assert!(row("layers.0.tiny").contains("warn"), "{table}");
    assert!(row("position_ids").contains("kept"), "{table}");
    assert!(table.contains("dry run: nothing written"), "{table}");
    let json: Value = serde_json::from_str(&std::fs::read_to_string(&report).unwrap()).unwrap();
    assert_eq!(json["command"]["to"], "f8e4m3fn");
    assert_eq!(json["command"]["dry_run"], true);
    assert_eq!(json["thresholds"]["flush_warn"], 0.001);
    let tensors = json["tensors"].as_array().unwrap();
    assert_eq!(tensors.len(), 9);
    let bias = tensors
        .iter()
        .find(|t| t["name"] == "layers.0.mlp.bias")
        .unwrap();
    assert_eq!(bias["elements"], 40);
    assert_eq!(bias["shape"], serde_json::json!([40]));
    assert!(bias["overflowed"].as_u64().unwrap() > 0);
    assert_eq!(bias["verdict"], "fail");
    assert!(bias["max_rel_error"].as_f64().unwrap() > 0.0);
    let ids = tensors
        .iter()
        .find(|t| t["name"] == "position_ids")
        .unwrap();
    assert!(ids["overflowed"].is_null() && ids["verdict"] == "kept");
    assert_eq!(json["summary"]["verdicts"]["kept"], 2);
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The values of a `.npy` file, its descr and its fortran_order.
fn read_npy(bytes: &[u8]) -> (String, bool, Vec<u8>) {
    let len = u16::from_le_bytes([bytes[8], bytes[9]]) as usize;
    let header = std::str::from_utf8(&bytes[10..10 + len]).unwrap();
    let descr = header
        .split("'descr': '")
        .nth(1)
        .unwrap()
        .split('\'')
        .next()
        .unwrap();
    (
        descr.to_string(),
        header.contains("'fortran_order': True"),
        bytes[10 + len..].to_vec(),
    )
}

/// The exact values of NumPy data of `descr`.
fn npy_values(descr: &str, data: &[u8]) -> Vec<f64> {
    let mut bytes = data.to_vec();
    let size: usize = descr[2..].parse().unwrap();
    if descr.starts_with('>') {
        for c in bytes.chunks_exact_mut(size) {
            c.reverse();
        }
    }
    let dtype = match size {
        2 => Dtype::F16,
        4 => Dtype::F32,
        _ => Dtype::F64,
    };
    values(dtype, &bytes)
}

#[test]
fn numpy_files_in_both_orders_and_byte_orders() {
    let dir = scratch("npy");
    for fixture in ["c_f32.npy", "fortran_f64_be.npy", "half_be.npy"] {
        let input = std::fs::read(data(fixture)).unwrap();
        let (descr, fortran, body) = read_npy(&input);
        let xs = npy_values(&descr, &body);
        for (name, dtype, out_descr) in [
            ("f16", Dtype::F16, "<f2"),
            ("f32", Dtype::F32, "<f4"),
            ("f64", Dtype::F64, "<f8"),
        ] {
            let out = dir.join("o.npy");
            ok(&["convert", s(&data(fixture)), s(&out), "--to", name]);
            if descr[1..] == out_descr[1..] {
                // Already that type (in either byte order): copied as it is.
                assert_eq!(std::fs::read(&out).unwrap(), input, "{fixture} -> {name}");
                continue;
            }
            let (d, f, b) = read_npy(&std::fs::read(&out).unwrap());
            assert_eq!((d.as_str(), f), (out_descr, fortran), "{fixture} -> {name}");
            assert_eq!(b, scalar(dtype, &xs, 1.0, false), "{fixture} -> {name}");
        }
    }
    // A non-float array is copied byte for byte.
    let out = dir.join("ints.npy");
    let table = ok(&["convert", s(&data("ints.npy")), s(&out), "--to", "f16"]);
    assert!(table.contains("kept"), "{table}");
    assert_eq!(
        std::fs::read(&out).unwrap(),
        std::fs::read(data("ints.npy")).unwrap()
    );
    // NumPy has no bf16: refused unless it is a dry run.
    let err = fails(
        2,
        &[
            "convert",
            s(&data("c_f32.npy")),
            s(&dir.join("x.npy")),
            "--to",
            "bf16",
        ],
    );
    assert!(err.contains("NumPy files cannot hold bf16"), "{err}");
    let table = ok(&[
        "convert",
        "--dry-run",
        s(&data("c_f32.npy")),
        "--to",
        "f8e4m3fn",
    ]);
    assert!(table.contains("<f4→f8e4m3fn"), "{table}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn npz_members_convert_and_keep_their_compression() {
    let dir = scratch("npz");
    for fixture in ["arrays.npz", "arrays_compressed.npz"] {
        let out = dir.join(fixture);
        ok(&["convert", s(&data(fixture)), s(&out), "--to", "f32"]);
        let mut a = zip::ZipArchive::new(std::fs::File::open(data(fixture)).unwrap()).unwrap();
        let mut b = zip::ZipArchive::new(std::fs::File::open(&out).unwrap()).unwrap();
        assert_eq!(a.len(), b.len());
        for i in 0..a.len() {
            let (mut x, mut y) = (a.by_index(i).unwrap(), b.by_index(i).unwrap());
            assert_eq!(
                (x.name().unwrap(), x.compression()),
                (y.name().unwrap(), y.compression())
            );
            let name = x.name().unwrap().into_owned();
            let (mut xb, mut yb) = (Vec::new(), Vec::new());
            std::io::Read::read_to_end(&mut x, &mut xb).unwrap();
            std::io::Read::read_to_end(&mut y, &mut yb).unwrap();
            let (dx, fx, bx) = read_npy(&xb);
            let (dy, fy, by) = read_npy(&yb);
            assert_eq!(fx, fy, "{name}");
            if dx.contains('f') {
                assert_eq!(dy, "<f4", "{name}");
                assert_eq!(
                    by,
                    scalar(Dtype::F32, &npy_values(&dx, &bx), 1.0, false),
                    "{name}"
                );
            } else {
                assert_eq!(xb, yb, "{name} kept");
            }
        }
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn in_is_never_out_and_failures_leave_nothing() {
    let dir = scratch("safety");
    let input = dir.join("m.safetensors");
    std::fs::copy(data("model_f32.safetensors"), &input).unwrap();
    let original = std::fs::read(&input).unwrap();
    let err = fails(2, &["convert", s(&input), s(&input), "--to", "bf16"]);
    assert!(err.contains("same file"), "{err}");
    let dotted = dir.join(".").join("m.safetensors");
    fails(2, &["convert", s(&input), s(&dotted), "--to", "bf16"]);
    #[cfg(unix)]
    {
        let link = dir.join("link.safetensors");
        std::fs::hard_link(&input, &link).unwrap();
        fails(2, &["convert", s(&input), s(&link), "--to", "bf16"]);
        std::fs::remove_file(&link).unwrap();
    }
    // A truncated input: exit 1, OUT neither created nor replaced, no temporary file left.
    let truncated = dir.join("t.safetensors");
    std::fs::write(&truncated, &original[..original.len() - 3]).unwrap();
    let out = dir.join("out.safetensors");
    let err = fails(1, &["convert", s(&truncated), s(&out), "--to", "bf16"]);
    assert!(err.contains("truncated"), "{err}");
    assert!(!out.exists());
    std::fs::write(&out, b"previous").unwrap();
    fails(1, &["convert", s(&truncated), s(&out), "--to", "bf16"]);
    assert_eq!(std::fs::read(&out).unwrap(), b"previous");
    assert_eq!(
        listing(&dir),
        ["m.safetensors", "out.safetensors", "t.safetensors"]
    );
    // A good run replaces OUT and leaves IN as it was.
    ok(&["convert", s(&input), s(&out), "--to", "bf16"]);
    assert_eq!(std::fs::read(&input).unwrap(), original);
    assert_eq!(
        listing(&dir),
        ["m.safetensors", "out.safetensors", "t.safetensors"]
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn lying_headers_name_the_tensor() {
    let dir = scratch("lies");
    let good = std::fs::read(data("mixed.safetensors")).unwrap();
    let n = u64::from_le_bytes(good[..8].try_into().unwrap()) as usize;
    let header = std::str::from_utf8(&good[8..8 + n]).unwrap().to_string();
    let cases = [
        (
            header.replacen("\"I8\"", "\"Q8\"", 1),
            "tensor 'i8': unsupported dtype 'Q8'",
        ),
        (
            header.replacen("[5,8]", "[5,9]", 1),
            "tensor 'f64': data_offsets",
        ),
    ];
    for (text, want) in cases {
        let mut bytes = (text.len() as u64).to_le_bytes().to_vec();
        bytes.extend(text.as_bytes());
        bytes.extend(&good[8 + n..]);
        let f = dir.join("bad.safetensors");
        std::fs::write(&f, &bytes).unwrap();
        let err = fails(1, &["convert", "--dry-run", s(&f), "--to", "bf16"]);
        assert!(err.contains(want), "{err}");
    }
    let f = dir.join("short.safetensors");
    std::fs::write(&f, [1u8, 0, 0]).unwrap();
    assert!(fails(1, &["convert", "--dry-run", s(&f), "--to", "bf16"]).contains("too short"));
    std::fs::write(&f, [0xffu8; 16]).unwrap();
    assert!(fails(1, &["convert", "--dry-run", s(&f), "--to", "bf16"]).contains("header length"));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn usage_errors_exit_2() {
    let model = data("model_f32.safetensors");
    let m = s(&model);
    let cases: [(i32, &[&str], &str); 14] = [
        (2, &[m, "--to", "bf16"], "give OUT"),
        (
            2,
            &[m, "/tmp/lowp-x.safetensors", "--to", "mxfp4,nvfp4"],
            "several --to targets are compared with --dry-run",
        ),
        (
            2,
            &["--dry-run", m, "--to", "bf16", "--rest", "f16"],
            "--rest applies to",
        ),
        (
            2,
            &["--dry-run", m, "--to", "f16", "--scale-search", "mse"],
            "--scale-search applies to",
        ),
        (
            2,
            &["--dry-run", m, "--to", "bf16", "--rounding", "stochastic"],
            "--rounding applies to",
        ),
        (
            2,
            &["--dry-run", m, "--to", "mxfp5"],
            "or a block-quantized scheme: fp8-block",
        ),
        (
            2,
            &["--dry-run", m, "--to", "mxfp4", "--shard-size", "12XB"],
            "unknown unit 'xb'",
        ),
        (
            2,
            &["--dry-run", m, "--to", "mxfp4", "--shard-size", "1MB"],
            "--shard-size shards a model directory",
        ),
        (
            2,
            &["--dry-run", m, "/tmp/x.safetensors", "--to", "bf16"],
            "--dry-run writes nothing",
        ),
        (
            2,
            &["--dry-run", m, "--to", "bf16", "--fp8-scale", "per-tensor"],
            "--fp8-scale applies to",
        ),
        (2, &["--dry-run", m, "--to", "f8e4m3fnuz"], "cannot store"),
        (
            2,
            &[m, "/tmp/lowp-x.npz", "--to", "bf16"],
            "keeps the kind of file",
        ),
        (
            1,
            &[m, "/nonexistent-dir/x.safetensors", "--to", "bf16"],
            "no folder /nonexistent-dir: No such file or directory",
        ),
        (
            1,
            &["--dry-run", "/nonexistent.safetensors", "--to", "bf16"],
            "cannot open",
        ),
    ];
    for (code, args, want) in cases {
        let args: Vec<&str> = std::iter::once("convert")
            .chain(args.iter().copied())
            .collect();
        let err = fails(code, &args);
        assert!(err.contains(want), "{args:?}: {err}");
    }
}

/// The rules on which options go together are lowp-io's: the command names the option by its
/// flag, and the rest of the message is the library's, word for word what Python's
/// `lowp.convert(..., to="bf16", rest="f16")` says of `rest` (crates/lowp-py/tests).
#[test]
fn options_that_do_not_go_together_get_the_librarys_message() {
    let model = data("model_f32.safetensors");
    let m = s(&model);
    let schemes = "the block-quantized schemes (fp8-block, fp8-channel, mxfp8, mxfp4, nvfp4)";
    let cases: [(&[&str], String); 3] = [
        (
            &["--to", "bf16", "--rest", "f16"],
            format!("error: --rest applies to {schemes}, not to bf16"),
        ),
        (
            &["--to", "f16", "--scale-search", "mse"],
            format!("error: --scale-search applies to {schemes}, not to f16"),
        ),
        (
            &["--to", "bf16", "--fp8-scale", "per-tensor"],
            "error: --fp8-scale applies to f8e4m3fn and f8e5m2, not bf16".to_string(),
        ),
    ];
    for (args, want) in cases {
        let args: Vec<&str> = ["convert", "--dry-run", m]
            .iter()
            .chain(args)
            .copied()
            .collect();
        assert_eq!(fails(2, &args).trim_end(), want, "{args:?}");
    }
}

/// An f32 tensor to write: its name, its shape and its values by index.
type F32Tensor<'a> = (&'a str, Vec<usize>, &'a dyn Fn(usize) -> f32);

/// Writes a safetensors file of f32 tensors.
fn write_f32s(path: &Path, tensors: &[F32Tensor<'_>]) {
    let bytes: Vec<(String, Vec<usize>, Vec<u8>)> = tensors
        .iter()
        .map(|(name, shape, value)| {
            let n: usize = shape.iter().product();
            let b = (0..n).flat_map(|i| value(i).to_le_bytes()).collect();
            (name.to_string(), shape.clone(), b)
        })
        .collect();
    let views: Vec<(String, safetensors::tensor::TensorView<'_>)> = bytes
        .iter()
        .map(|(n, s, b)| {
            let v = safetensors::tensor::TensorView::new(Dtype::F32, s.clone(), b).unwrap();
            (n.clone(), v)
        })
        .collect();
    safetensors::serialize_to_file(views, None, path).unwrap();
}

#[test]
fn schemes_are_compared_and_reported() {
    let dir = scratch("schemes");
    let model = dir.join("model.safetensors");
    let wave = |i: usize| ((i * 37 % 101) as f32 - 50.0) / 1000.0;
    let with_inf = |i: usize| if i == 5 { f32::INFINITY } else { wave(i) };
    write_f32s(
        &model,
        &[
            ("embed.weight", vec![64, 128], &wave),
            ("layers.0.attn.q.weight", vec![128, 128], &wave),
            ("layers.0.mlp.up.weight", vec![16, 128], &with_inf),
            ("norm.weight", vec![128], &wave),
        ],
    );
    let out = ok(&[
        "convert",
        "--dry-run",
        s(&model),
        "--to",
        "mxfp4,nvfp4,fp8-channel",
    ]);
    for scheme in ["mxfp4", "nvfp4", "fp8-channel"] {
        let line = format!("{scheme} (compressed-tensors): 2 weights, 18432 parameters, SQNR ");
        assert!(out.lines().any(|l| l.starts_with(&line)), "{out}");
    }
    // The embedding stays as it is, named for what it is; the layout is said.
    let single = ok(&["convert", "--dry-run", s(&model), "--to", "mxfp4"]);
    assert!(
        single.contains("embedding: the compressed-tensors layout keeps it"),
        "{single}"
    );
    // transformers' fp8 reads whole 128 x 128 blocks only: the 16-row weight stays.
    let fp8 = ok(&["convert", "--dry-run", s(&model), "--to", "fp8-block"]);
    assert!(
        fp8.contains("fp8-block (transformers): 1 weight, 16384 parameters"),
        "{fp8}"
    );
    assert!(
        fp8.contains("16 x 128 is not whole 128 x 128 blocks"),
        "{fp8}"
    );
    let report = dir.join("report.json");
    let q = dir.join("q.safetensors");
    ok(&[
        "convert",
        s(&model),
        s(&q),
        "--to",
        "nvfp4",
        "--layout",
        "modelopt",
        "--only",
        "*weight",
        "--report",
        s(&report),
    ]);
    let json: Value = serde_json::from_slice(&std::fs::read(&report).unwrap()).unwrap();
    assert_eq!(json["quantization"]["scheme"], "nvfp4");
    assert_eq!(json["quantization"]["layout"], "modelopt");
    assert_eq!(json["command"]["layout"], "modelopt");
    let row = |name: &str| {
        json["tensors"]
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["name"] == name)
            .unwrap()
            .clone()
    };
    // The infinity fails its weight; --only cannot make the loader read a quantized embedding.
    let up = row("layers.0.mlp.up.weight");
    assert_eq!(
        (&up["verdict"], &up["scheme"]),
        (&"fail".into(), &"nvfp4".into()),
        "{up}"
    );
    let embed = row("embed.weight");
    assert_eq!(embed["verdict"], "kept", "{embed}");
    assert!(
        embed["why"].as_str().unwrap().contains("does not read it"),
        "{embed}"
    );
    let st = std::fs::read(&q).unwrap();
    let st = SafeTensors::deserialize(&st).unwrap();
    assert_eq!(
        st.tensor("layers.0.attn.q.weight_scale_2").unwrap().dtype(),
        Dtype::F32
    );
    // A layout the scheme has none in is refused before any work, naming the one that has.
    let err = fails(
        2,
        &[
            "convert",
            "--dry-run",
            s(&model),
            "--to",
            "mxfp4",
            "--layout",
            "transformers",
        ],
    );
    assert!(err.contains("--layout compressed-tensors"), "{err}");
    let err = fails(
        2,
        &[
            "convert",
            "--dry-run",
            s(&model),
            "--to",
            "bf16",
            "--layout",
            "modelopt",
        ],
    );
    assert!(
        err.contains("--layout applies to the block-quantized schemes"),
        "{err}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn bench_convert_file_runs_small() {
    let dir = scratch("bench");
    let json = dir.join("bench.json");
    let out = ok(&[
        "bench",
        "convert-file",
        "--size",
        "64K",
        "--runs",
        "1",
        "--dir",
        s(&dir),
        "--json",
        s(&json),
    ]);
    // By default every type and scheme, FP8 with and without a per-tensor scale.
    for row in [
        "cp (std::fs::copy)",
        "lowp convert f32→bf16 ",
        "lowp convert f32→f16 ",
        "lowp convert f32→f8e4m3fn ",
        "lowp convert f32→f8e4m3fn --fp8-scale per-tensor",
        "lowp convert f32→f8e5m2 --fp8-scale per-tensor",
        "lowp convert f32→nvfp4 ",
        "lowp convert f32→mxfp4 ",
    ] {
        assert!(out.contains(row), "{row}: {out}");
    }
    let v: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let conversions = v["conversions"].as_array().unwrap();
    assert_eq!(conversions.len(), 11, "{v}");
    for c in conversions {
        assert!(c["ratio"].as_f64().unwrap() > 0.0, "{c}");
        assert!(
            c["output_bytes"].as_u64().unwrap() < v["size"].as_u64().unwrap(),
            "{c}"
        );
    }
    assert_eq!(
        listing(&dir),
        ["bench.json"],
        "the generated files are removed"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The rows of a text report, by tensor name: each row's cells split on runs of spaces (the
/// `why` column joins its words again, but these tests read the columns before it).
fn rows(table: &str) -> Vec<Vec<String>> {
    table
        .lines()
        .map(|l| l.split_whitespace().map(str::to_string).collect())
        .collect()
}

#[test]
fn the_scale_column_and_json_show_what_w_scale_stores() {
    let dir = scratch("scale-shown");
    let out = dir.join("o.safetensors");
    let report = dir.join("r.json");
    let table = ok(&[
        "convert",
        s(&data("model_f32.safetensors")),
        s(&out),
        "--to",
        "f8e4m3fn",
        "--fp8-scale",
        "per-tensor",
        "--report",
        s(&report),
    ]);
    assert!(rows(&table)[0].contains(&"scale".to_string()), "{table}");
    // The scale is the row's one word that starts with 2^ (the why column has none).
    let scale_of = |name: &str| {
        let row = rows(&table).into_iter().find(|r| r[0] == name).unwrap();
        row.into_iter().find(|c| c.starts_with("2^"))
    };
    let json: Value = serde_json::from_slice(&std::fs::read(&report).unwrap()).unwrap();
    let bytes = std::fs::read(&out).unwrap();
    let st = SafeTensors::deserialize(&bytes).unwrap();
    let mut checked = 0;
    for record in json["tensors"].as_array().unwrap() {
        let name = record["name"].as_str().unwrap();
        let Ok(t) = st.tensor(&format!("{name}.scale")) else {
            assert!(record["scale"].is_null(), "{record}");
            continue;
        };
        let stored = f32::from_le_bytes(t.data().try_into().unwrap()) as f64;
        assert_eq!(record["scale"].as_f64(), Some(stored), "{name}");
        assert_eq!(
            scale_of(name),
            Some(format!("2^{}", stored.log2())),
            "{name}"
        );
        checked += 1;
    }
    // Every converted tensor of the fixture but the empty one has a scale below or above 1.
    assert!(checked >= 5, "{checked}");
    // |q| < 0.22: multiplied by 2^11 before rounding, so stored (and shown) as 2^-11.
    assert_eq!(scale_of("layers.0.attn.q.weight").as_deref(), Some("2^-11"));
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Runs `lowp convert` with `args`, and gives its exit code, stdout and stderr.
fn run(args: &[&str]) -> (Option<i32>, String, String) {
    let mut all = vec!["convert"];
    all.extend(args);
    let out = lowp(&all);
    (
        out.status.code(),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

#[test]
fn strict_exits_1_on_fail_and_leaves_out_unwritten() {
    let dir = scratch("strict");
    let model = data("model_f32.safetensors");
    let out = dir.join("o.safetensors");
    // Without --strict: exit 0, OUT written, and the summary says how to make it exit 1.
    let (code, stdout, stderr) = run(&[s(&model), s(&out), "--to", "f8e4m3fn"]);
    assert_eq!((code, stderr.as_str()), (Some(0), ""), "{stdout}");
    assert!(out.exists());
    assert!(
        stdout.contains(
            "2 tensors failed and 2 got warn; --strict makes failures exit 1 without writing \
             OUT, --strict=warn warnings too.\n"
        ),
        "{stdout}"
    );
    // With --strict: the report on stdout, one error line, exit 1, OUT as it was.
    std::fs::write(&out, b"previous").unwrap();
    let report = dir.join("r.json");
    let (code, stdout, stderr) = run(&[
        s(&model),
        s(&out),
        "--to",
        "f8e4m3fn",
        "--strict",
        "--report",
        s(&report),
    ]);
    assert_eq!(code, Some(1), "{stderr}");
    assert_eq!(
        stderr,
        format!(
            "error: 2 tensors failed (--strict); {} not written\n",
            out.display()
        )
    );
    assert!(stdout.contains("layers.0.mlp.bias"), "{stdout}");
    assert!(stdout.contains("not written (--strict)"), "{stdout}");
    assert!(!stdout.contains("makes this exit 1"), "{stdout}");
    assert_eq!(std::fs::read(&out).unwrap(), b"previous");
    let json: Value = serde_json::from_slice(&std::fs::read(&report).unwrap()).unwrap();
    assert_eq!(json["summary"]["written"], false);
    assert_eq!(json["command"]["strict"], "fail");
    assert_eq!(
        listing(&dir),
        ["o.safetensors", "r.json"],
        "no temporary file left"
    );
    // A model directory is not written either.
    let model_dir = dir.join("model");
    std::fs::create_dir(&model_dir).unwrap();
    std::fs::copy(&model, model_dir.join("model.safetensors")).unwrap();
    let out_dir = dir.join("out");
    let (code, _, stderr) = run(&[s(&model_dir), s(&out_dir), "--to", "f8e4m3fn", "--strict"]);
    assert_eq!(code, Some(1), "{stderr}");
    assert!(!out_dir.exists());
    assert_eq!(listing(&dir), ["model", "o.safetensors", "r.json"]);
    // Nor a NumPy file (a .npy and an .npz whose overflows fail in f16).
    for fixture in ["c_f32.npy", "arrays.npz"] {
        let out = dir.join(fixture);
        let (code, _, stderr) = run(&[s(&data(fixture)), s(&out), "--to", "f16", "--strict"]);
        assert_eq!(code, Some(1), "{fixture}: {stderr}");
        assert!(!out.exists(), "{fixture}");
    }
    assert_eq!(listing(&dir), ["model", "o.safetensors", "r.json"]);
    // --strict=fail is --strict; nothing to fail, exit 0 and written.
    let (code, stdout, stderr) = run(&[
        s(&model),
        s(&out),
        "--to",
        "f8e4m3fn",
        "--fp8-scale",
        "per-tensor",
        "--only",
        "layers.*",
        "--strict=fail",
    ]);
    assert_eq!((code, stderr.as_str()), (Some(0), ""), "{stdout}");
    assert_ne!(std::fs::read(&out).unwrap(), b"previous");
    // --strict takes no separate value: IN stays IN (and widening to f64 fails nothing).
    let (code, _, stderr) = run(&["--strict", s(&model), "--dry-run", "--to", "f64"]);
    assert_eq!(code, Some(0), "{stderr}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn strict_warn_exits_1_on_warn_too() {
    let model = data("model_f32.safetensors");
    // Scaled E4M3 of the layers: `layers.0.tiny` is fine, so pick a warn: f16 flushes the
    // tiny values to zero.
    let args = [
        s(&model),
        "--dry-run",
        "--to",
        "f16",
        "--only",
        "layers.0.tiny",
    ];
    let (code, stdout, stderr) = run(&args);
    assert_eq!((code, stderr.as_str()), (Some(0), ""));
    assert!(stdout.contains(" warn "), "{stdout}");
    assert!(
        stdout.contains("1 tensor got warn; --strict=warn makes this exit 1.\n"),
        "{stdout}"
    );
    let mut strict = args.to_vec();
    strict.push("--strict");
    let (code, _, stderr) = run(&strict);
    assert_eq!(
        (code, stderr.as_str()),
        (Some(0), ""),
        "--strict is --strict=fail"
    );
    strict.pop();
    strict.push("--strict=warn");
    let (code, stdout, stderr) = run(&strict);
    assert_eq!(code, Some(1), "{stderr}");
    assert_eq!(stderr, "error: 1 tensor got warn (--strict=warn)\n");
    assert!(
        stdout.contains("layers.0.tiny"),
        "the report is printed: {stdout}"
    );
    let err = fails(
        2,
        &[
            "convert",
            "--dry-run",
            s(&model),
            "--to",
            "f16",
            "--strict=maybe",
        ],
    );
    assert!(err.contains("valid values: fail, warn"), "{err}");
}

#[test]
fn patterns_that_match_nothing_warn_and_strict_fails() {
    let dir = scratch("only-nothing");
    let model = data("model_f32.safetensors");
    let out = dir.join("o.safetensors");
    // --keep-f32 too: a misspelt norm pattern would quietly leave the norms converted. (The
    // --only keeps out a tensor whose values overflow bf16, which --strict would refuse.)
    for (flag, patterns, missing) in [
        ("--only", "layers.0.attn.*,decoder.*", "decoder.*"),
        ("--keep-f32", "*norm*,*nrom*", "*nrom*"),
    ] {
        let only = "--only=layers.0.*";
        let args = [s(&model), s(&out), "--to", "bf16", only, flag, patterns];
        let (code, stdout, stderr) = run(&args);
        assert_eq!(code, Some(0), "{stderr}");
        assert_eq!(
            stderr,
            format!("warning: {flag} '{missing}' matches no tensor\n")
        );
        assert!(stdout.contains("wrote"), "{stdout}");
        let mut strict = args.to_vec();
        strict.push("--strict");
        std::fs::remove_file(&out).unwrap();
        let (code, _, stderr) = run(&strict);
        assert_eq!(code, Some(1), "{stderr}");
        assert_eq!(
            stderr,
            format!(
                "error: {flag} '{missing}' matches no tensor (--strict); {} not written\n",
                out.display()
            )
        );
        assert!(!out.exists());
    }
    // A pattern that matches is silent.
    for flag in ["--only", "--keep-f32"] {
        let (code, _, stderr) = run(&[s(&model), "--dry-run", "--to", "bf16", flag, "emb*"]);
        assert_eq!((code, stderr.as_str()), (Some(0), ""));
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn missing_inputs_exit_1_naming_the_path_and_the_reason() {
    let dir = scratch("missing");
    let missing_dir = dir.join("no-such-model");
    let existing_dir = dir.join("out");
    std::fs::create_dir(&existing_dir).unwrap();
    let missing_file = dir.join("no-such.safetensors");
    let new_out = dir.join("o.safetensors");
    let cases: [Vec<&str>; 7] = [
        vec![s(&missing_file), s(&new_out), "--to", "bf16"],
        vec!["--dry-run", s(&missing_file), "--to", "bf16"],
        // A missing model directory, with OUT a directory (existing, or named with a '/'):
        // the input is what is wrong, not OUT.
        vec![s(&missing_dir), s(&existing_dir), "--to", "bf16"],
        vec![s(&missing_dir), "new-dir/", "--to", "bf16"],
        vec!["--dry-run", s(&missing_dir), "--to", "bf16"],
        vec![s(&missing_dir), s(&new_out), "--to", "mxfp4"],
        vec![
            "--dry-run",
            "/nonexistent/model.safetensors.index.json",
            "--to",
            "f16",
        ],
    ];
    for args in cases {
        let mut all = vec!["convert"];
        all.extend(&args);
        let err = fails(1, &all);
        let path = args
            .iter()
            .find(|a| a.contains("no") && !a.starts_with("--"))
            .unwrap();
        assert!(
            err.contains(&format!("cannot open {path}: No such file or directory")),
            "{args:?}: {err}"
        );
    }
    assert_eq!(listing(&dir), ["out"]);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn strict_refuses_a_checkpoint_with_corrupt_scales() {
    let dir = scratch("corrupt-scales");
    // An MXFP8 weight of 4 rows of 64 (8 blocks): E4M3 1.0 everywhere, E8M0 scales 2^0 but for
    // one 255 (NaN), which decodes its block to NaN.
    let mut scales = vec![127u8; 8];
    scales[5] = 0xff;
    let data = vec![0x38u8; 4 * 64];
    let views = [
        (
            "w".to_string(),
            safetensors::tensor::TensorView::new(Dtype::F8_E4M3, vec![4, 64], &data).unwrap(),
        ),
        (
            "w_scale".to_string(),
            safetensors::tensor::TensorView::new(Dtype::U8, vec![4, 2], &scales).unwrap(),
        ),
    ];
    let input = dir.join("mxfp8.safetensors");
    safetensors::serialize_to_file(views, None, &input).unwrap();
    let out = dir.join("bf16.safetensors");
    let report = dir.join("r.json");
    let (code, stdout, stderr) = run(&[
        s(&input),
        s(&out),
        "--to",
        "bf16",
        "--strict",
        "--report",
        s(&report),
    ]);
    assert_eq!(code, Some(1), "{stdout}{stderr}");
    assert_eq!(
        stderr,
        format!(
            "error: 1 tensor failed (--strict); {} not written\n",
            out.display()
        )
    );
    assert!(
        stdout.contains("1 of 8 blocks have a bad scale (NaN, inf, zero or negative)"),
        "{stdout}"
    );
    assert!(!out.exists());
    let json: Value = serde_json::from_slice(&std::fs::read(&report).unwrap()).unwrap();
    let w = &json["tensors"][0];
    assert_eq!(
        (&w["verdict"], &w["bad_scales"], &w["blocks"]),
        (&"fail".into(), &1.into(), &8.into())
    );
    assert_eq!(json["summary"]["written"], false);
    // Healthy scales decode, and are written.
    scales[5] = 0;
    let views = [
        (
            "w".to_string(),
            safetensors::tensor::TensorView::new(Dtype::F8_E4M3, vec![4, 64], &data).unwrap(),
        ),
        (
            "w_scale".to_string(),
            safetensors::tensor::TensorView::new(Dtype::U8, vec![4, 2], &scales).unwrap(),
        ),
    ];
    safetensors::serialize_to_file(views, None, &input).unwrap();
    let (code, stdout, stderr) = run(&[s(&input), s(&out), "--to", "f32", "--strict"]);
    assert_eq!((code, stderr.as_str()), (Some(0), ""), "{stdout}");
    assert!(out.exists());
    std::fs::remove_dir_all(&dir).unwrap();
}
