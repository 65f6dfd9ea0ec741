//! Conversion instructions of the CPU, chosen at run time.
//!
//! Each function answers `None` when the instruction is not there (or not compiled in: no `std`,
//! or not x86), and the caller then takes the software engine. Both give the same bits on every
//! input; the exhaustive tests compare them over all 2^32 f32 values.

#[cfg(all(feature = "std", any(target_arch = "x86", target_arch = "x86_64")))]
mod f16c;

#[cfg(all(feature = "std", any(target_arch = "x86", target_arch = "x86_64")))]
pub(crate) use f16c::f16_from_f64;

/// Without F16C support compiled in there is nothing to offer.
#[cfg(not(all(feature = "std", any(target_arch = "x86", target_arch = "x86_64"))))]
mod fallback {
    #[inline(always)]
    pub(crate) fn f16_from_f64(_: f64) -> Option<u16> {
        None
    }
}
#[cfg(not(all(feature = "std", any(target_arch = "x86", target_arch = "x86_64"))))]
pub(crate) use fallback::f16_from_f64;

/// Whether `f16::from_f64` uses the F16C instruction in this process: the same answer as
/// [`crate::cpu::scalar_f16c`], which decides it.
pub fn f16c_in_use() -> bool {
    crate::cpu::scalar_f16c()
}
