//! Ctrl-C and SIGTERM: the first stops the running command at its next block (so temporary
//! files are removed and nothing is half-written), a second exits at once.
//!
//! The libraries take a cancel flag instead of handling signals; this module owns the
//! process's one flag and hands it to them ([`flag`]). Files a command makes for itself
//! ([`Scratch`]) are removed however it ends, the second signal's immediate exit included.

use crate::error::{self, CliError};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, Once};

/// Set by Ctrl-C or SIGTERM.
static INTERRUPTED: AtomicBool = AtomicBool::new(false);

/// Installs the handler (once per process).
pub fn watch_interrupts() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        // Without a handler (an unusual platform) Ctrl-C just kills the process, which
        // still never leaves a half-written output: only a temporary file.
        let _ = ctrlc::set_handler(|| {
            if INTERRUPTED.swap(true, Ordering::SeqCst) {
                // The handler runs on a thread of its own, so it may touch files.
                for path in SCRATCH.lock().unwrap_or_else(|e| e.into_inner()).iter() {
                    let _ = std::fs::remove_file(path);
                }
                std::process::exit(error::INTERRUPTED);
            }
        });
    });
}

/// The flag the handler sets: the cancel flag to give the libraries.
pub fn flag() -> &'static AtomicBool {
    &INTERRUPTED
}

/// An error (exit code 130) once the run was interrupted.
pub fn check_interrupted() -> Result<(), CliError> {
    if INTERRUPTED.load(Ordering::Relaxed) {
        Err(CliError {
            message: "interrupted; nothing was written".to_string(),
            code: error::INTERRUPTED,
        })
    } else {
        Ok(())
    }
}

/// The files of every live [`Scratch`], for the handler's immediate exit.
static SCRATCH: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

/// Files a command makes for itself (`lowp bench convert-file`'s generated input and
/// outputs), removed when this is dropped or, on a second Ctrl-C or SIGTERM, just before the
/// process exits. Create it before the files, and watch interrupts ([`watch_interrupts`]) so
/// that the first signal makes the command return (and drop this) instead of killing it.
pub struct Scratch(Vec<PathBuf>);

impl Scratch {
    /// Removes `paths` at the end.
    pub fn new(paths: Vec<PathBuf>) -> Scratch {
        SCRATCH
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .extend(paths.iter().cloned());
        Scratch(paths)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let mut all = SCRATCH.lock().unwrap_or_else(|e| e.into_inner());
        for p in &self.0 {
            // Best effort: a file that is already gone is fine.
            let _ = std::fs::remove_file(p);
            if let Some(i) = all.iter().position(|q| q == p) {
                all.swap_remove(i);
            }
        }
    }
}
