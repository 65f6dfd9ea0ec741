//! Files left behind by killed runs: the next `lowp convert` beside OUT
//! removes the temporary outputs of processes that are gone and says so; `lowp bench
//! convert-file` removes its generated file when interrupted, and those of killed runs.

#![cfg(target_os = "linux")]

mod common;

use common::{data, listing, lowp};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// A PID no process has: above Linux's largest (2^22).
const DEAD: u32 = 4_194_999;

/// A fresh folder for one test.
fn folder(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("lowp-leftovers-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

#[test]
fn convert_removes_temporary_outputs_of_dead_processes_and_says_so() {
    let dir = folder("convert");
    let out = dir.join("out.safetensors");
    let dead = dir.join(format!(".out.safetensors.lowp-{DEAD}-0.tmp"));
    let dead_other = dir.join(format!(".other.safetensors.lowp-{DEAD}-3.tmp"));
    let dead_model = dir.join(format!(".model.lowp-{DEAD}-1.tmp"));
    // This test's own process is running: its file may be a conversion in progress.
    let live = dir.join(format!(
        ".out.safetensors.lowp-{}-0.tmp",
        std::process::id()
    ));
    let unrelated = dir.join(format!("notes.lowp-{DEAD}-0.tmp"));
    std::fs::write(&dead, vec![0u8; 1000]).unwrap();
    std::fs::write(&dead_other, b"x").unwrap();
    std::fs::create_dir(&dead_model).unwrap();
    std::fs::write(dead_model.join("model-00001-of-00002.safetensors"), b"x").unwrap();
    std::fs::write(&live, b"in progress").unwrap();
    std::fs::write(&unrelated, b"mine").unwrap();

    let run = lowp(&[
        "convert",
        data("model_f32.safetensors").to_str().unwrap(),
        out.to_str().unwrap(),
        "--to",
        "bf16",
    ]);
    let err = String::from_utf8_lossy(&run.stderr);
    assert!(run.status.success(), "{err}");
    for removed in [&dead, &dead_other, &dead_model] {
        assert!(!removed.exists(), "{} is still there", removed.display());
        let line = err
            .lines()
            .find(|l| l.contains(&*removed.to_string_lossy()))
            .unwrap_or_else(|| panic!("no message about {}: {err}", removed.display()));
        assert!(
            line.starts_with("note: removed")
                && line.contains(&format!("process {DEAD}"))
                && line.contains("no longer running"),
            "{line}"
        );
    }
    assert!(err.contains("(1000 bytes)"), "{err}");
    assert_eq!(err.lines().count(), 3, "{err}");
    assert_eq!(std::fs::read(&live).unwrap(), b"in progress");
    assert_eq!(std::fs::read(&unrelated).unwrap(), b"mine");
    assert!(out.is_file());

    // Nothing left to remove: the next run is silent.
    let run = lowp(&[
        "convert",
        data("model_f32.safetensors").to_str().unwrap(),
        out.to_str().unwrap(),
        "--to",
        "f16",
    ]);
    assert!(run.status.success() && run.stderr.is_empty());
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_dry_run_touches_nothing() {
    let dir = folder("dry");
    let dead = dir.join(format!(".out.safetensors.lowp-{DEAD}-0.tmp"));
    std::fs::write(&dead, b"x").unwrap();
    let run = lowp(&[
        "convert",
        data("model_f32.safetensors").to_str().unwrap(),
        "--dry-run",
        "--to",
        "bf16",
    ]);
    assert!(run.status.success() && run.stderr.is_empty());
    assert!(dead.exists());
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn bench_removes_the_files_of_killed_runs() {
    let dir = folder("bench-killed");
    let dead = dir.join(format!("lowp-bench-{DEAD}.safetensors"));
    let dead_cp = dir.join(format!("lowp-bench-{DEAD}-cp.safetensors"));
    let kept = dir.join(format!("lowp-bench-{}.safetensors", std::process::id()));
    for f in [&dead, &dead_cp, &kept] {
        std::fs::write(f, b"x").unwrap();
    }
    let run = lowp(&[
        "bench",
        "convert-file",
        "--size",
        "64K",
        "--runs",
        "1",
        "--dir",
        dir.to_str().unwrap(),
    ]);
    let err = String::from_utf8_lossy(&run.stderr);
    assert!(run.status.success(), "{err}");
    assert!(
        !dead.exists() && !dead_cp.exists() && kept.exists(),
        "{err}"
    );
    assert_eq!(err.matches("note: removed").count(), 2, "{err}");
    std::fs::remove_file(&kept).unwrap();
    assert!(listing(&dir).is_empty(), "{:?}", listing(&dir));
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Starts `lowp bench convert-file` of a large file in `dir`, waits until its generated file
/// appears, sends `signal` (`count` times) and returns the exit code.
fn interrupt_bench(dir: &Path, signal: &str, count: usize) -> Option<i32> {
    let mut child = Command::new(env!("CARGO_BIN_EXE_lowp"))
        .args([
            "bench",
            "convert-file",
            "--size",
            "4G",
            "--runs",
            "1",
            "--dir",
        ])
        .arg(dir)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let file = dir.join(format!("lowp-bench-{}.safetensors", child.id()));
    let start = Instant::now();
    while !file.exists() {
        assert!(
            start.elapsed() < Duration::from_secs(30),
            "no {}",
            file.display()
        );
        std::thread::sleep(Duration::from_millis(5));
    }
    for _ in 0..count {
        let sent = Command::new("kill")
            .args([signal, &child.id().to_string()])
            .status()
            .unwrap();
        assert!(sent.success());
        std::thread::sleep(Duration::from_millis(20));
    }
    let start = Instant::now();
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return status.code();
        }
        if start.elapsed() > Duration::from_secs(60) {
            let _ = child.kill();
            panic!("lowp bench did not stop after {signal}");
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

#[test]
fn an_interrupted_bench_removes_its_files() {
    for (signal, count) in [("-INT", 1), ("-TERM", 1), ("-INT", 2)] {
        let dir = folder(&format!("bench{signal}{count}"));
        let code = interrupt_bench(&dir, signal, count);
        assert_eq!(code, Some(130), "{signal} x{count}");
        assert!(
            listing(&dir).is_empty(),
            "{signal} x{count}: {:?}",
            listing(&dir)
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
