//! Ctrl-C and SIGTERM: the first stops the running command at its next block (so temporary
//! files are removed and nothing is half-written), a second exits at once.
//!
//! The libraries take a cancel flag instead of handling signals; this module owns the
//! process's one flag and hands it to them ([`flag`]).

use crate::error::{self, CliError};
use std::sync::Once;
use std::sync::atomic::{AtomicBool, Ordering};

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
