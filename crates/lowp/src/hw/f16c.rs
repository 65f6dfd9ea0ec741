//! The x86 F16C instruction `vcvtps2ph`, one value at a time, for `f16::from_f64`.
#![allow(unsafe_code)]

#[cfg(target_arch = "x86")]
use core::arch::x86::{_MM_FROUND_TO_NEAREST_INT, _mm_cvtps_ph, _mm_cvtsi128_si32, _mm_set_ss};
#[cfg(target_arch = "x86_64")]
use core::arch::x86_64::{_MM_FROUND_TO_NEAREST_INT, _mm_cvtps_ph, _mm_cvtsi128_si32, _mm_set_ss};

/// Whether to use F16C: [`crate::cpu`] decides (the CPU has it and the process runs a vector
/// path), so `LOWP_FORCE_PATH=portable` reaches the scalar conversions too.
#[inline(always)]
pub(crate) fn available() -> bool {
    crate::cpu::scalar_f16c()
}

/// f64 to f16 bits, rounding to nearest even, with `vcvtps2ph`; `None` without F16C.
///
/// The f64 is first rounded to odd at f32's precision, by integer operations: its 29 mantissa
/// bits below f32's last place are cleared and, if any was set, f32's last place is set
/// instead. Throughout f32's normal range the result is an f32 exactly (the conversion to f32
/// does not round) that carries 24 bits, at least two more than f16's 11, so rounding it to
/// nearest even gives the nearest-even f16 of the f64 itself, with no double-rounding error
/// (Boldo and Melquiond 2008), unlike a plain `x as f32` first. Outside f32's normal range the
/// f64 is below every f16 rounding boundary (zero of its sign either way) or above f16's
/// overflow threshold (infinity either way); a NaN keeps its top payload bits, as in the engine.
#[inline]
pub(crate) fn f16_from_f64(x: f64) -> Option<u16> {
    if available() {
        let bits = x.to_bits();
        let below = bits & ((1 << 29) - 1);
        let odd = (bits & !((1 << 29) - 1)) | ((below != 0) as u64) << 29;
        // SAFETY: the CPU has F16C, checked just above.
        Some(unsafe { f16_from_f32_f16c(f64::from_bits(odd) as f32) })
    } else {
        None
    }
}

/// `vcvtps2ph` of one value. The caller promises the CPU has F16C.
#[target_feature(enable = "f16c")]
#[inline]
unsafe fn f16_from_f32_f16c(x: f32) -> u16 {
    let h = _mm_cvtps_ph::<_MM_FROUND_TO_NEAREST_INT>(_mm_set_ss(x));
    _mm_cvtsi128_si32(h) as u16
}
