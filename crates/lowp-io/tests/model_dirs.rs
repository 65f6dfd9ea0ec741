//! A model directory is hostile input: links out of it, special files in it, folders and
//! extra files holding other models, hidden files, oversized metadata, a signal in any phase.
//! Each case builds its directory in a scratch folder and checks what the conversion does,
//! and that a refusal leaves no OUT and no temporary behind.

use lowp_io::{Error, FloatType, Options, Progress};
use safetensors::tensor::TensorView;
use safetensors::{Dtype, SafeTensors};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

/// A fresh directory for one test.
fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("lowp-mdir-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Writes a safetensors file of f32 tensors (name, values) with `metadata`.
fn write(path: &Path, tensors: &[(&str, &[f32])], metadata: Option<HashMap<String, String>>) {
    let bytes: Vec<(String, Vec<u8>, usize)> = tensors
        .iter()
        .map(|(n, v)| {
            let b = v.iter().flat_map(|x| x.to_le_bytes()).collect();
            (n.to_string(), b, v.len())
        })
        .collect();
    let views: Vec<(String, TensorView<'_>)> = bytes
        .iter()
        .map(|(n, b, len)| {
            (
                n.clone(),
                TensorView::new(Dtype::F32, vec![*len], b).unwrap(),
            )
        })
        .collect();
    safetensors::serialize_to_file(views, metadata, path).unwrap();
}

/// A model directory: `model.safetensors`, `config.json`, a tokenizer and sentence-
/// transformers' `1_Pooling/config.json`.
fn model(dir: &Path) {
    std::fs::create_dir_all(dir.join("1_Pooling")).unwrap();
    write(
        &dir.join("model.safetensors"),
        &[("w", &[1.0, 2.5, 3.0])],
        None,
    );
    std::fs::write(dir.join("config.json"), br#"{"model_type": "bert"}"#).unwrap();
    std::fs::write(dir.join("tokenizer.json"), b"{}").unwrap();
    std::fs::write(dir.join("1_Pooling/config.json"), b"{\"pooling\": 1}").unwrap();
}

/// The names in `dir`, sorted.
fn names(dir: &Path) -> Vec<String> {
    let mut out: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    out.sort();
    out
}

/// Converts `input` to bf16 into `scratch/out`, expecting an error containing every one of
/// `want`, and no OUT or temporary left in `scratch`.
fn refused(scratch: &Path, input: &Path, want: &[&str]) {
    let before = names(scratch);
    let out = scratch.join("out");
    let err = lowp_io::convert(&Options::new(input, Some(out.clone()), FloatType::BF16))
        .expect_err("refused");
    let text = err.to_string();
    for w in want {
        assert!(text.contains(w), "{w:?} not in: {text}");
    }
    assert_eq!(names(scratch), before, "{text}");
    assert!(!out.exists());
    // A dry run refuses the same input, reading nothing it should not.
    let dry = lowp_io::convert(&Options::new(input, None, FloatType::BF16)).expect_err("refused");
    assert_eq!(dry.to_string(), text);
}

/// The tensors of a safetensors file: name → (dtype, values as bytes).
fn read(path: &Path) -> HashMap<String, (Dtype, Vec<u8>)> {
    let bytes = std::fs::read(path).unwrap();
    let st = SafeTensors::deserialize(&bytes).unwrap();
    st.tensors()
        .into_iter()
        .map(|(n, v)| (n, (v.dtype(), v.data().to_vec())))
        .collect()
}

#[cfg(unix)]
#[test]
fn links_out_of_the_model_directory_are_refused_naming_link_and_target() {
    use std::os::unix::fs::symlink;
    let dir = scratch("links");
    let outside = dir.join("outside");
    std::fs::create_dir_all(&outside).unwrap();
    std::fs::write(outside.join("secret.json"), b"{\"secret\": 1}").unwrap();
    write(&outside.join("w.safetensors"), &[("w", &[1.0])], None);
    std::fs::write(outside.join("index.json"), b"{\"weight_map\": {}}").unwrap();
    let fresh = |name: &str| {
        let m = dir.join(name);
        model(&m);
        m
    };
    // A file in a copied folder, a whole folder, the weights, the index, /dev/zero.
    let m = fresh("pooling");
    symlink(outside.join("secret.json"), m.join("1_Pooling/extra.json")).unwrap();
    refused(
        &dir,
        &m,
        &["1_Pooling/extra.json", "secret.json", "outside the model"],
    );
    let m = fresh("folder");
    symlink(&outside, m.join("data")).unwrap();
    refused(&dir, &m, &["folder/data", "outside"]);
    let m = fresh("shard");
    std::fs::remove_file(m.join("model.safetensors")).unwrap();
    symlink(outside.join("w.safetensors"), m.join("model.safetensors")).unwrap();
    refused(&dir, &m, &["shard/model.safetensors", "w.safetensors"]);
    let m = fresh("index");
    symlink(
        outside.join("index.json"),
        m.join("model.safetensors.index.json"),
    )
    .unwrap();
    refused(
        &dir,
        &m,
        &["model.safetensors.index.json", "outside/index.json"],
    );
    refused(
        &dir,
        &m.join("model.safetensors.index.json"),
        &["model.safetensors.index.json", "outside/index.json"],
    );
    let m = fresh("zero");
    symlink("/dev/zero", m.join("model.safetensors.index.json")).unwrap();
    refused(&dir, &m, &["model.safetensors.index.json", "/dev/zero"]);
    // A dangling link says so.
    let m = fresh("dangling");
    symlink(dir.join("nowhere"), m.join("vocab.txt")).unwrap();
    refused(&dir, &m, &["dangling/vocab.txt", "does not exist"]);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[cfg(unix)]
#[test]
fn links_inside_the_directory_and_the_hugging_face_cache_are_followed() {
    use std::os::unix::fs::symlink;
    let dir = scratch("cache");
    // The cache's layout: the snapshot's files are links to ../../blobs/HASH.
    let repo = dir.join("hub/models--org--tiny");
    let blobs = repo.join("blobs");
    let snapshot = repo.join("snapshots/0123abc");
    std::fs::create_dir_all(&blobs).unwrap();
    std::fs::create_dir_all(snapshot.join("1_Pooling")).unwrap();
    write(&blobs.join("aaa"), &[("w", &[1.0, 2.5])], None);
    std::fs::write(blobs.join("bbb"), br#"{"model_type": "bert"}"#).unwrap();
    std::fs::write(blobs.join("ccc"), b"{\"pooling\": 1}").unwrap();
    symlink("../../blobs/aaa", snapshot.join("model.safetensors")).unwrap();
    symlink("../../blobs/bbb", snapshot.join("config.json")).unwrap();
    symlink("../../../blobs/ccc", snapshot.join("1_Pooling/config.json")).unwrap();
    // A link that stays inside the directory is copied as the file it names.
    symlink("config.json", snapshot.join("config_copy.json")).unwrap();
    let out = dir.join("out");
    lowp_io::convert(&Options::new(&snapshot, Some(out.clone()), FloatType::BF16)).unwrap();
    assert_eq!(read(&out.join("model.safetensors"))["w"].0, Dtype::BF16);
    for name in ["config.json", "config_copy.json", "1_Pooling/config.json"] {
        let meta = std::fs::symlink_metadata(out.join(name)).unwrap();
        assert!(meta.is_file(), "{name} is copied as a file");
    }
    assert_eq!(
        std::fs::read(out.join("config_copy.json")).unwrap(),
        br#"{"model_type": "bert"}"#
    );
    // The same links outside a cache's snapshot folder lead out of the model directory.
    std::fs::remove_dir_all(&out).unwrap();
    let fake = repo.join("elsewhere/0123abc");
    std::fs::create_dir_all(&fake).unwrap();
    symlink("../../blobs/aaa", fake.join("model.safetensors")).unwrap();
    refused(
        &dir,
        &fake,
        &["model.safetensors", "outside the model directory"],
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[cfg(unix)]
#[test]
fn special_files_are_refused_without_being_opened() {
    use std::os::unix::net::UnixListener;
    let dir = scratch("special");
    let fifo = |p: &Path| {
        let ok = std::process::Command::new("mkfifo")
            .arg(p)
            .status()
            .unwrap()
            .success();
        assert!(ok, "mkfifo {}", p.display());
    };
    let cases = ["tokenizer.json", "1_Pooling/config.json", "config.json"];
    for (i, name) in cases.iter().enumerate() {
        let m = dir.join(format!("m{i}"));
        model(&m);
        std::fs::remove_file(m.join(name)).unwrap();
        fifo(&m.join(name));
        refused(&dir, &m, &[name, "FIFO"]);
        std::fs::remove_dir_all(&m).unwrap();
    }
    // A FIFO as the weights, as the index given as IN, as IN itself.
    let m = dir.join("weights");
    model(&m);
    std::fs::remove_file(m.join("model.safetensors")).unwrap();
    fifo(&m.join("model.safetensors"));
    refused(&dir, &m, &["model.safetensors", "FIFO"]);
    std::fs::remove_dir_all(&m).unwrap();
    let m = dir.join("index");
    model(&m);
    fifo(&m.join("model.safetensors.index.json"));
    refused(
        &dir,
        &m.join("model.safetensors.index.json"),
        &["index.json", "FIFO"],
    );
    std::fs::remove_dir_all(&m).unwrap();
    let lone = dir.join("lone.safetensors");
    fifo(&lone);
    let err = lowp_io::convert(&Options::new(&lone, None, FloatType::BF16)).unwrap_err();
    assert!(err.to_string().contains("FIFO"), "{err}");
    std::fs::remove_file(&lone).unwrap();
    // A socket in a folder.
    let m = dir.join("socket");
    model(&m);
    let _listener = UnixListener::bind(m.join("1_Pooling/sock")).unwrap();
    refused(&dir, &m, &["1_Pooling/sock", "socket"]);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn every_file_ends_up_in_out_converted_copied_or_reported() {
    let dir = scratch("every");
    let m = dir.join("in");
    model(&m);
    // sentence-transformers' Dense layer, a PEFT adapter, a folder with an index of its own.
    std::fs::create_dir_all(m.join("2_Dense")).unwrap();
    write(
        &m.join("2_Dense/model.safetensors"),
        &[("linear.weight", &[0.5, 1.5])],
        None,
    );
    std::fs::write(m.join("2_Dense/config.json"), b"{\"in_features\": 2}").unwrap();
    std::fs::write(m.join("modules.json"), b"[{\"path\": \"2_Dense\"}]").unwrap();
    write(
        &m.join("adapter_model.safetensors"),
        &[("lora_A", &[3.0])],
        None,
    );
    std::fs::create_dir_all(m.join("unet")).unwrap();
    write(
        &m.join("unet/diffusion_pytorch_model-1.safetensors"),
        &[("a", &[1.0])],
        None,
    );
    write(
        &m.join("unet/diffusion_pytorch_model-2.safetensors"),
        &[("b", &[2.0])],
        None,
    );
    std::fs::write(
        m.join("unet/diffusion_pytorch_model.safetensors.index.json"),
        br#"{"weight_map": {"a": "diffusion_pytorch_model-1.safetensors",
                            "b": "diffusion_pytorch_model-2.safetensors"}}"#,
    )
    .unwrap();
    // Left out, and said so.
    std::fs::create_dir_all(m.join(".git")).unwrap();
    std::fs::write(m.join(".git/HEAD"), b"ref").unwrap();
    std::fs::write(m.join(".model.safetensors.lowp-4194999-7.tmp"), b"x").unwrap();
    let out = dir.join("out");
    let report = lowp_io::convert(&Options::new(&m, Some(out.clone()), FloatType::BF16)).unwrap();
    let tensors: Vec<&str> = report.tensors.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(
        tensors,
        [
            "w",
            "adapter_model.safetensors/lora_A",
            "2_Dense/linear.weight",
            "unet/a",
            "unet/b"
        ]
    );
    assert!(report.tensors.iter().all(|t| t.to == "BF16"));
    assert_eq!(
        read(&out.join("2_Dense/model.safetensors"))["linear.weight"].0,
        Dtype::BF16
    );
    assert_eq!(
        read(&out.join("adapter_model.safetensors"))["lora_A"].0,
        Dtype::BF16
    );
    let index: serde_json::Value = serde_json::from_slice(
        &std::fs::read(out.join("unet/diffusion_pytorch_model.safetensors.index.json")).unwrap(),
    )
    .unwrap();
    for (tensor, shard) in index["weight_map"].as_object().unwrap() {
        let held = read(&out.join("unet").join(shard.as_str().unwrap()));
        assert_eq!(held[tensor].0, Dtype::BF16, "{tensor}");
    }
    for copied in [
        "config.json",
        "tokenizer.json",
        "modules.json",
        "1_Pooling/config.json",
    ] {
        assert_eq!(
            std::fs::read(out.join(copied)).unwrap(),
            std::fs::read(m.join(copied)).unwrap(),
            "{copied}"
        );
    }
    assert_eq!(
        std::fs::read(out.join("2_Dense/config.json")).unwrap(),
        b"{\"in_features\": 2}"
    );
    let skipped: Vec<String> = report.skipped.iter().map(|s| s.to_string()).collect();
    assert_eq!(
        skipped,
        [
            ".git (hidden)",
            ".model.safetensors.lowp-4194999-7.tmp (a temporary output of a lowp run)"
        ]
    );
    for unit in ["adapter_model.safetensors", "2_Dense", "unet"] {
        assert!(
            report.notes.iter().any(|n| n.starts_with(unit)),
            "{unit}: {:?}",
            report.notes
        );
    }
    assert!(!out.join(".git").exists());
    // --strict refuses anything left out, before any work.
    std::fs::remove_dir_all(&out).unwrap();
    let strict = Options {
        strict: Some(lowp_io::Verdict::Fail),
        ..Options::new(&m, Some(out.clone()), FloatType::BF16)
    };
    let err = lowp_io::convert(&strict).unwrap_err().to_string();
    assert!(
        err.contains(".git (hidden)") && err.contains("--strict"),
        "{err}"
    );
    assert!(!out.exists());
    assert_eq!(names(&dir), ["in"]);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn out_inside_in_is_not_read_and_the_leftover_sweep_spares_in() {
    let dir = scratch("inside");
    let m = dir.join("in");
    model(&m);
    // A file of IN named like a leftover of a dead process: the user's, not lowp's.
    let lookalike = m.join(".out.lowp-4194999-1.tmp");
    std::fs::write(&lookalike, b"mine").unwrap();
    let out = m.join("out");
    let report = lowp_io::convert(&Options::new(&m, Some(out.clone()), FloatType::BF16)).unwrap();
    assert_eq!(std::fs::read(&lookalike).unwrap(), b"mine");
    assert_eq!(report.tensors.len(), 1);
    assert!(!out.join("out").exists());
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Where a test sets the cancel flag.
#[derive(Clone, Copy, Debug, PartialEq)]
enum At {
    /// Before anything is read.
    Before,
    /// When the conversion starts, after the headers, before any tensor.
    Start,
    /// Once this many bytes are done.
    Bytes(u64),
    /// Once this many bytes are done, which is all of them: only the rename is left.
    End(u64),
}

/// Sets the cancel flag when the conversion reaches `at`.
struct CancelAt<'a> {
    /// Where.
    at: At,
    /// The flag.
    flag: &'a AtomicBool,
    /// Bytes so far.
    done: AtomicU64,
    /// The total announced.
    total: AtomicU64,
}

impl Progress for CancelAt<'_> {
    fn start(&self, total: u64) {
        self.total.store(total, Ordering::SeqCst);
        if self.at == At::Start {
            self.flag.store(true, Ordering::SeqCst);
        }
    }
    fn advance(&self, bytes: u64) {
        let done = self.done.fetch_add(bytes, Ordering::SeqCst) + bytes;
        let reached = match self.at {
            At::Bytes(n) => done >= n,
            At::End(n) => done >= n,
            At::Before | At::Start => false,
        };
        if reached {
            self.flag.store(true, Ordering::SeqCst);
        }
    }
}

#[test]
fn a_cancel_in_any_phase_leaves_nothing() {
    let dir = scratch("cancel");
    let m = dir.join("in");
    model(&m);
    // An extra file of 12 MB: three chunks of copying.
    std::fs::write(m.join("1_Pooling/big.bin"), vec![7u8; 12 << 20]).unwrap();
    // Progress counts the tensors' bytes (three f32), then the copied files'.
    let weights = 12;
    let copied: u64 = [
        "config.json",
        "tokenizer.json",
        "1_Pooling/config.json",
        "1_Pooling/big.bin",
    ]
    .iter()
    .map(|f| std::fs::metadata(m.join(f)).unwrap().len())
    .sum();
    let out = dir.join("out");
    let opts = Options::new(&m, Some(out.clone()), FloatType::BF16);
    for at in [
        At::Before,
        At::Start,
        At::Bytes(weights + 1),
        At::End(weights + copied),
    ] {
        let flag = AtomicBool::new(at == At::Before);
        let progress = CancelAt {
            at,
            flag: &flag,
            done: AtomicU64::new(0),
            total: AtomicU64::new(0),
        };
        let result = lowp_io::convert_with(&opts, &progress, &flag);
        assert_eq!(result.err(), Some(Error::Cancelled), "{at:?}");
        assert_eq!(names(&dir), ["in"], "{at:?}");
        let done = progress.done.load(Ordering::SeqCst);
        match at {
            // Stopped within the big file, a chunk after the flag.
            At::Bytes(_) => assert!(done < weights + copied, "{done}"),
            At::End(n) => assert_eq!(done, n),
            At::Before | At::Start => assert_eq!(done, 0),
        }
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn merged_metadata_never_makes_a_header_over_safetensors_limit() {
    let dir = scratch("metadata");
    let m = dir.join("in");
    std::fs::create_dir_all(&m).unwrap();
    // Two shards of 60 MB of metadata each: the one output shard cannot hold both.
    let big = |key: &str, c: char| {
        let mut meta = HashMap::new();
        meta.insert("format".to_string(), "pt".to_string());
        meta.insert(key.to_string(), c.to_string().repeat(60_000_000));
        meta
    };
    write(
        &m.join("a.safetensors"),
        &[("a", &[1.0])],
        Some(big("notes_a", 'a')),
    );
    write(
        &m.join("b.safetensors"),
        &[("b", &[2.0])],
        Some(big("notes_b", 'b')),
    );
    std::fs::write(
        m.join("model.safetensors.index.json"),
        br#"{"weight_map": {"a": "a.safetensors", "b": "b.safetensors"}}"#,
    )
    .unwrap();
    let out = dir.join("out");
    let opts = Options {
        shard_size: Some(1 << 30),
        ..Options::new(&m, Some(out.clone()), FloatType::BF16)
    };
    let report = lowp_io::convert(&opts).unwrap();
    let shards: Vec<String> = names(&out)
        .into_iter()
        .filter(|n| n.ends_with(".safetensors"))
        .collect();
    assert_eq!(shards.len(), 1);
    let bytes = std::fs::read(out.join(&shards[0])).unwrap();
    let header = u64::from_le_bytes(bytes[..8].try_into().unwrap());
    assert!(header <= lowp_io::safetensors::MAX_HEADER, "{header}");
    let st = SafeTensors::deserialize(&bytes).expect("safetensors reads it");
    assert_eq!(st.tensors().len(), 2);
    let (_, meta) = SafeTensors::read_metadata(&bytes).unwrap();
    let kept = meta.metadata().clone().unwrap();
    assert_eq!(kept["format"], "pt");
    assert_eq!(kept.len(), 2, "one of the two large entries dropped");
    assert!(
        report
            .notes
            .iter()
            .any(|n| n.contains("__metadata__ entry 'notes_") && n.contains("dropped")),
        "{:?}",
        report.notes
    );
    // Split into one output shard per input shard, each keeps its own metadata.
    let split = dir.join("split");
    let opts = Options {
        shard_size: Some(1),
        ..Options::new(&m, Some(split.clone()), FloatType::BF16)
    };
    let report = lowp_io::convert(&opts).unwrap();
    assert!(report.notes.is_empty(), "{:?}", report.notes);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn an_index_past_the_bound_is_refused_at_once() {
    let dir = scratch("index");
    let m = dir.join("in");
    model(&m);
    let index = m.join("model.safetensors.index.json");
    let file = std::fs::File::create(&index).unwrap();
    file.set_len(lowp_io::model::MAX_INDEX + 1).unwrap();
    let start = std::time::Instant::now();
    refused(
        &dir,
        &m,
        &["model.safetensors.index.json", "too large for an index"],
    );
    assert!(start.elapsed().as_secs() < 5);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn unreadable_and_invalid_inputs_fail_before_any_work() {
    let dir = scratch("upfront");
    // An invalid config.json of a folder's own model.
    let m = dir.join("config");
    model(&m);
    std::fs::create_dir_all(m.join("2_Dense")).unwrap();
    write(&m.join("2_Dense/model.safetensors"), &[("w", &[1.0])], None);
    std::fs::write(m.join("2_Dense/config.json"), b"{not json").unwrap();
    refused(&dir, &m, &["2_Dense/config.json", "not valid JSON"]);
    std::fs::remove_dir_all(&m).unwrap();
    // An unreadable extra file (where permissions bind: not as root).
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let m = dir.join("unreadable");
        model(&m);
        let secret = m.join("1_Pooling/secret.bin");
        std::fs::write(&secret, b"x").unwrap();
        std::fs::set_permissions(&secret, std::fs::Permissions::from_mode(0o000)).unwrap();
        if std::fs::File::open(&secret).is_err() {
            refused(&dir, &m, &["1_Pooling/secret.bin", "ermission denied"]);
        }
        std::fs::set_permissions(&secret, std::fs::Permissions::from_mode(0o600)).unwrap();
        std::fs::remove_dir_all(&m).unwrap();
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn patterns_select_another_models_tensors_by_its_folder_or_their_own_names() {
    let dir = scratch("patterns");
    let input = dir.join("m");
    model(&input);
    std::fs::create_dir_all(input.join("2_Dense")).unwrap();
    write(
        &input.join("2_Dense/model.safetensors"),
        &[("linear.weight", &[0.1, 0.2]), ("linear.bias", &[0.3])],
        None,
    );
    let run = |only: &[&str], out: &str| {
        let mut opts = Options::new(&input, Some(dir.join(out)), FloatType::BF16);
        opts.only = only.iter().map(|p| p.to_string()).collect();
        opts.strict = Some(lowp_io::Verdict::Fail);
        lowp_io::convert(&opts).unwrap()
    };
    let dtype = |out: &str, file: &str, name: &str| read(&dir.join(out).join(file))[name].0;
    // By the folder: every tensor of 2_Dense, none of the main model.
    assert!(run(&["2_Dense/*"], "by-folder").written);
    let dense = "2_Dense/model.safetensors";
    assert_eq!(dtype("by-folder", dense, "linear.weight"), Dtype::BF16);
    assert_eq!(dtype("by-folder", dense, "linear.bias"), Dtype::BF16);
    assert_eq!(dtype("by-folder", "model.safetensors", "w"), Dtype::F32);
    // By its own name: matched there, and not reported as matching nothing (--strict).
    assert!(run(&["linear.weight"], "by-name").written);
    assert_eq!(dtype("by-name", dense, "linear.weight"), Dtype::BF16);
    assert_eq!(dtype("by-name", dense, "linear.bias"), Dtype::F32);
    std::fs::remove_dir_all(&dir).unwrap();
}
