//! What a running benchmark says it is doing: a full run takes minutes, so a front end shows
//! each step as it starts.

/// Receives what a benchmark is doing.
pub trait Progress: Sync {
    /// A step starts (`measuring f16 from-f32 16KiB single`, `writing FILE ...`).
    fn step(&self, text: &str) {
        let _ = text;
    }
    /// Something the user should know that is not a result (a leftover file removed).
    fn note(&self, text: &str) {
        let _ = text;
    }
    /// The benchmark ended; nothing more is reported.
    fn done(&self) {}
}

/// A [`Progress`] that ignores every report.
#[derive(Clone, Copy, Debug, Default)]
pub struct NoProgress;

impl Progress for NoProgress {}
