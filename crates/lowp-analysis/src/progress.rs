//! How a long analysis tells its caller how far it is, and how a caller stops it.
//!
//! The library draws nothing and installs no signal handler: a command line implements
//! [`Progress`] with a progress bar and sets the cancel flag from its Ctrl-C handler; a
//! program that wants neither passes [`Control::none`].

use crate::error::Error;
use std::sync::atomic::{AtomicBool, Ordering};

/// Receives progress reports, from several threads at once (hence `Sync` and `&self`).
pub trait Progress: Sync {
    /// A phase of `total` items (`unit` names them: "functions", "f32 values") starts.
    fn start(&self, total: u64, unit: &str) {
        let _ = (total, unit);
    }
    /// `n` more items are done.
    fn advance(&self, n: u64) {
        let _ = n;
    }
    /// What is being worked on now (a format's name, a function).
    fn message(&self, text: &str) {
        let _ = text;
    }
    /// The phase ended, successfully or not.
    fn finish(&self) {}
}

/// A [`Progress`] that ignores every report.
#[derive(Clone, Copy, Debug, Default)]
pub struct NoProgress;

impl Progress for NoProgress {}

/// What a long computation reports to and listens to.
#[derive(Clone, Copy)]
pub struct Control<'a> {
    /// Where progress goes.
    pub progress: &'a dyn Progress,
    /// Set by the caller (from another thread, a signal handler) to stop the computation.
    pub cancel: &'a AtomicBool,
}

/// The flag of [`Control::none`], never set.
static NEVER: AtomicBool = AtomicBool::new(false);

impl Control<'static> {
    /// No progress reports and no way to cancel.
    pub fn none() -> Self {
        Control {
            progress: &NoProgress,
            cancel: &NEVER,
        }
    }
}

impl<'a> Control<'a> {
    /// Reports to `progress` and stops once `cancel` is set.
    pub fn new(progress: &'a dyn Progress, cancel: &'a AtomicBool) -> Self {
        Control { progress, cancel }
    }

    /// Whether the caller asked to stop.
    pub fn cancelled(&self) -> bool {
        self.cancel.load(Ordering::Relaxed)
    }

    /// [`Error::Cancelled`] once the cancel flag is set.
    pub fn check(&self) -> Result<(), Error> {
        if self.cancelled() {
            Err(Error::Cancelled)
        } else {
            Ok(())
        }
    }
}
