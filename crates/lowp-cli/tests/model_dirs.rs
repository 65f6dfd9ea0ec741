//! `lowp convert` on hostile model directories: a signal while the other files are copied,
//! names that hold terminal escapes, FIFOs, a link as OUT.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

mod common;
use common::{listing, lowp};

/// A fresh directory for one test.
fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("lowp-cli-mdir-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Writes a safetensors file of one f32 tensor `name` holding `values`.
fn write(path: &Path, name: &str, values: &[f32]) {
    let bytes: Vec<u8> = values.iter().flat_map(|x| x.to_le_bytes()).collect();
    let view =
        safetensors::tensor::TensorView::new(safetensors::Dtype::F32, vec![values.len()], &bytes)
            .unwrap();
    safetensors::serialize_to_file(vec![(name.to_string(), view)], None, path).unwrap();
}

/// A model directory: `model.safetensors` with one tensor `name`, and a config.
fn model(dir: &Path, name: &str) {
    std::fs::create_dir_all(dir).unwrap();
    write(&dir.join("model.safetensors"), name, &[1.0, 2.5, 3.0]);
    std::fs::write(dir.join("config.json"), br#"{"model_type": "bert"}"#).unwrap();
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

#[cfg(unix)]
#[test]
fn sigterm_while_copying_the_other_files_exits_130_and_leaves_nothing() {
    let dir = scratch("sigterm");
    let input = dir.join("in");
    model(&input, "w");
    // A large file to copy (sparse here, written out in full by the copy).
    let big = std::fs::File::create(input.join("big.bin")).unwrap();
    big.set_len(300 << 20).unwrap();
    drop(big);
    let out = dir.join("out");
    let mut child = Command::new(env!("CARGO_BIN_EXE_lowp"))
        .args(["convert", s(&input), s(&out), "--to", "bf16"])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Wait until the copy of big.bin has started in OUT's temporary directory.
    let deadline = Instant::now() + Duration::from_secs(60);
    let copying = || {
        listing(&dir)
            .iter()
            .filter(|n| n.starts_with(".out.lowp-"))
            .any(|t| dir.join(t).join("big.bin").exists())
    };
    while !copying() {
        assert!(Instant::now() < deadline, "the copy never started");
        assert!(
            child.try_wait().unwrap().is_none(),
            "lowp ended before the copy"
        );
        std::thread::sleep(Duration::from_millis(1));
    }
    let killed = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    let output = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(130), "{err}");
    assert!(err.contains("interrupted"), "{err}");
    assert_eq!(listing(&dir), ["in"]);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[cfg(unix)]
#[test]
fn names_with_terminal_escapes_are_printed_escaped() {
    let dir = scratch("escapes");
    let input = dir.join("in");
    model(&input, "w\x1b[2Jcleared");
    let out = dir.join("out");
    let done = lowp(&["convert", s(&input), s(&out), "--to", "bf16"]);
    let stdout = String::from_utf8_lossy(&done.stdout);
    assert!(
        done.status.success(),
        "{}",
        String::from_utf8_lossy(&done.stderr)
    );
    assert!(stdout.contains("w\\x1b[2Jcleared"), "{stdout}");
    assert!(!done.stdout.contains(&0x1b) && !done.stderr.contains(&0x1b));
    // A file name in an error message, and in a note.
    let odd = input.join("tokenizer\x1b]0;owned\x07.json");
    std::os::unix::fs::symlink("/etc/hostname", &odd).unwrap();
    let failed = lowp(&["convert", s(&input), s(&dir.join("out2")), "--to", "bf16"]);
    let err = String::from_utf8_lossy(&failed.stderr);
    assert_eq!(failed.status.code(), Some(1), "{err}");
    assert!(err.contains("tokenizer\\x1b]0;owned\\x07.json"), "{err}");
    assert!(!failed.stderr.contains(&0x1b) && !failed.stderr.contains(&0x07));
    std::fs::remove_file(&odd).unwrap();
    std::fs::write(input.join(".hidden\x1b[31m"), b"x").unwrap();
    let noted = lowp(&["convert", "--dry-run", s(&input), "--to", "bf16"]);
    let err = String::from_utf8_lossy(&noted.stderr);
    assert!(noted.status.success(), "{err}");
    assert!(
        err.contains("note: left out .hidden\\x1b[31m (hidden)"),
        "{err}"
    );
    assert!(!noted.stderr.contains(&0x1b));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[cfg(unix)]
#[test]
fn fifos_are_refused_at_once_even_in_a_dry_run() {
    let dir = scratch("fifo");
    let input = dir.join("in");
    model(&input, "w");
    std::fs::create_dir_all(input.join("1_Pooling")).unwrap();
    let fifo = input.join("1_Pooling/config.json");
    let lone = input.join("1_Pooling/lone.safetensors");
    for f in [&fifo, &lone] {
        assert!(Command::new("mkfifo").arg(f).status().unwrap().success());
    }
    for (args, named) in [
        (
            vec!["convert", s(&input), "OUT", "--to", "bf16"],
            "1_Pooling/config.json",
        ),
        (
            vec!["convert", "--dry-run", s(&input), "--to", "bf16"],
            "1_Pooling/config.json",
        ),
        (
            vec!["convert", s(&lone), "OUT.safetensors", "--to", "bf16"],
            "lone.safetensors",
        ),
    ] {
        let args: Vec<String> = args
            .iter()
            .map(|a| match *a {
                "OUT" => s(&dir.join("out")).to_string(),
                "OUT.safetensors" => s(&dir.join("out.safetensors")).to_string(),
                other => other.to_string(),
            })
            .collect();
        let mut child = Command::new(env!("CARGO_BIN_EXE_lowp"))
            .args(&args)
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let deadline = Instant::now() + Duration::from_secs(20);
        while child.try_wait().unwrap().is_none() {
            if Instant::now() > deadline {
                let _ = child.kill();
                panic!("lowp {args:?} hangs on a FIFO");
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        let output = child.wait_with_output().unwrap();
        let err = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(1), "{args:?}: {err}");
        assert!(err.contains(named) && err.contains("FIFO"), "{err}");
        assert_eq!(listing(&dir), ["in"]);
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[cfg(unix)]
#[test]
fn a_link_as_out_is_refused_before_any_work() {
    let dir = scratch("outlink");
    let input = dir.join("in");
    model(&input, "w");
    std::fs::create_dir_all(dir.join("real")).unwrap();
    std::os::unix::fs::symlink("real", dir.join("out")).unwrap();
    let done = lowp(&["convert", s(&input), s(&dir.join("out")), "--to", "bf16"]);
    let err = String::from_utf8_lossy(&done.stderr);
    assert_eq!(done.status.code(), Some(2), "{err}");
    assert!(err.contains("symbolic link"), "{err}");
    assert!(done.stdout.is_empty(), "the report of work done");
    assert_eq!(listing(&dir), ["in", "out", "real"]);
    assert!(listing(&dir.join("real")).is_empty());
    std::fs::remove_dir_all(&dir).unwrap();
}
