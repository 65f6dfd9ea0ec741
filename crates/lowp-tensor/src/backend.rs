//! Where kernels run: one part of the key a kernel is registered under, and of the errors
//! that name a missing kernel.

use std::fmt;

/// Where a kernel runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Backend {
    /// The CPU: SIMD conversion paths and rayon threads.
    Cpu,
}

impl fmt::Display for Backend {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad(match self {
            Backend::Cpu => "cpu",
        })
    }
}
