//! How a conversion tells its caller how far it is, and how a caller stops it.
//!
//! The library draws nothing and installs no signal handler: a command line implements
//! [`Progress`] with a progress bar and sets the cancel flag from its Ctrl-C handler; a
//! program that wants neither passes [`NoProgress`] and a flag nobody sets.

use crate::error::Error;
use std::sync::atomic::{AtomicBool, Ordering};

/// Receives progress reports, from several threads at once (hence `Sync` and `&self`).
///
/// Bytes are input bytes: a conversion that measures a tensor before converting it (the
/// first pass of per-tensor scaling) reads it twice and reports it twice, so the total can
/// exceed the file's size.
pub trait Progress: Sync {
    /// The conversion starts; `total_bytes` is the input file's size.
    fn start(&self, total_bytes: u64) {
        let _ = total_bytes;
    }
    /// `bytes` more input bytes were read and processed.
    fn advance(&self, bytes: u64) {
        let _ = bytes;
    }
    /// The tensor `name` is being converted now.
    fn tensor(&self, name: &str) {
        let _ = name;
    }
    /// The conversion ended, successfully or not.
    fn finish(&self) {}
    /// Before starting, the conversion removed `leftover`, a temporary output beside OUT of a
    /// process that is no longer running (killed before it could remove it; see
    /// [`crate::leftovers`]). Called before [`Progress::start`].
    fn removed_leftover(&self, leftover: &crate::Leftover) {
        let _ = leftover;
    }
}

/// A [`Progress`] that ignores every report.
#[derive(Clone, Copy, Debug, Default)]
pub struct NoProgress;

impl Progress for NoProgress {}

/// What the conversion reports to and listens to, handed down to every block.
#[derive(Clone, Copy)]
pub(crate) struct Control<'a> {
    /// Where progress goes.
    pub progress: &'a dyn Progress,
    /// Set by the caller to stop the conversion.
    pub cancel: &'a AtomicBool,
}

impl Control<'_> {
    /// `bytes` more input bytes were processed.
    pub fn add(&self, bytes: u64) {
        self.progress.advance(bytes);
    }

    /// The tensor `name` is next.
    pub fn tensor(&self, name: &str) {
        self.progress.tensor(name);
    }

    /// [`Error::Cancelled`] once the cancel flag is set.
    pub fn check(&self) -> Result<(), Error> {
        if self.cancel.load(Ordering::Relaxed) {
            Err(Error::Cancelled)
        } else {
            Ok(())
        }
    }
}
