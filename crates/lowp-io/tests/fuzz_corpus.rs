//! The committed fuzz seed corpus (`fuzz/corpus/TARGET/`, made by
//! `tools/make_fuzz_corpus.py`) replayed through the functions the cargo-fuzz targets call
//! (`tests/fuzz_feed/mod.rs`): every file must give a clean error or a successful parse, without
//! a panic, within a bounded time, so a crash or hang the fuzzer found and the corpus keeps
//! fails here on stable instead of waiting for someone to run the fuzzer.

mod fuzz_feed;

use std::path::PathBuf;
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// Far more than any file needs (each takes milliseconds); what it catches is a .npy header
/// parser gone exponential, which takes seconds at depth 20 and hours at 32.
const LIMIT: Duration = Duration::from_secs(10);

fn corpus_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../fuzz/corpus")
}

#[test]
fn every_corpus_file_is_refused_or_read_in_bounded_time() {
    let root = corpus_dir();
    let mut total = 0;
    let mut failures = Vec::new();
    // LOWP_FUZZ_VERBOSE=1 prints why each refused file was refused.
    let verbose = std::env::var_os("LOWP_FUZZ_VERBOSE").is_some();
    for &(target, feed) in fuzz_feed::TARGETS {
        let dir = root.join(target);
        let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
            .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
            .map(|entry| entry.unwrap().path())
            .collect();
        files.sort();
        assert!(!files.is_empty(), "{}: no corpus files", dir.display());
        let mut refused = 0;
        for path in &files {
            total += 1;
            let bytes = std::fs::read(path).unwrap();
            let (tx, rx) = mpsc::channel();
            let start = Instant::now();
            // A thread of its own, so that a hang fails the test after LIMIT instead of
            // hanging it, and a panic is reported with the file's name.
            std::thread::spawn(move || {
                let answer = std::panic::catch_unwind(|| feed(&bytes));
                let _ = tx.send(answer);
            });
            match rx.recv_timeout(LIMIT) {
                Ok(Ok(Ok(()))) => {}
                Ok(Ok(Err(message))) => {
                    assert!(!message.is_empty(), "{}: empty error", path.display());
                    if verbose {
                        eprintln!("{}: {message}", path.display());
                    }
                    refused += 1;
                }
                Ok(Err(_)) => failures.push(format!("{}: panicked", path.display())),
                Err(_) => failures.push(format!(
                    "{}: no answer after {:?}",
                    path.display(),
                    start.elapsed()
                )),
            }
        }
        eprintln!("{target}: {} files, {refused} refused", files.len());
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert!(total > 0);
}
