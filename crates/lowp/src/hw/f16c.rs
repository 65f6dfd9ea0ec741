//! The x86 F16C instructions (`vcvtps2ph`, `vcvtph2ps`), one value at a time.
#![allow(unsafe_code)]

#[cfg(target_arch = "x86")]
use core::arch::x86::{
    _MM_FROUND_TO_NEAREST_INT, _MM_FROUND_TO_ZERO, _mm_cvtph_ps, _mm_cvtps_ph, _mm_cvtsi32_si128,
    _mm_cvtsi128_si32, _mm_cvtss_f32, _mm_set_ss,
};
#[cfg(target_arch = "x86_64")]
use core::arch::x86_64::{
    _MM_FROUND_TO_NEAREST_INT, _MM_FROUND_TO_ZERO, _mm_cvtph_ps, _mm_cvtps_ph, _mm_cvtsi32_si128,
    _mm_cvtsi128_si32, _mm_cvtss_f32, _mm_set_ss,
};

use crate::format::formats;
use crate::round::{self, SourceLayout};

/// Whether this CPU has F16C (std caches the answer after the first call).
#[inline(always)]
pub(crate) fn available() -> bool {
    std::is_x86_feature_detected!("f16c")
}

/// f32 to f16 bits, rounding to nearest even, with `vcvtps2ph`; `None` without F16C.
#[inline]
pub(crate) fn f16_from_f32(x: f32) -> Option<u16> {
    if available() {
        // SAFETY: the CPU has F16C, checked just above.
        Some(unsafe { f16_from_f32_f16c(x) })
    } else {
        None
    }
}

/// f16 bits to f32 with `vcvtph2ps`; `None` without F16C.
#[inline]
pub(crate) fn f16_to_f32(bits: u16) -> Option<f32> {
    if available() {
        // SAFETY: the CPU has F16C, checked just above.
        Some(unsafe { f16_to_f32_f16c(bits) })
    } else {
        None
    }
}

/// f32 to f8e4m3fn bits, rounding to nearest even, by way of F16C; `None` without F16C.
///
/// `vcvtps2ph` truncates to f16 and a second conversion back tells whether that lost anything;
/// if it did, the f16's last bit is forced to 1 (round to odd). An f16 rounded to odd carries 11
/// bits, at least 2 more than E4M3's 4, over E4M3's whole rounding range, so rounding it once
/// more to nearest even gives exactly the nearest-even rounding of the f32 (the classic
/// round-to-odd argument, Boldo and Melquiond 2008).
#[inline]
pub(crate) fn f8e4m3fn_from_f32(x: f32) -> Option<u8> {
    if available() {
        // SAFETY: the CPU has F16C, checked just above.
        let odd = unsafe { f16_round_to_odd_f16c(x) };
        Some(f8e4m3fn_from_f16_bits(odd))
    } else {
        None
    }
}

/// Nearest-even rounding of f16 bits to E4M3FN: the integer fast path, else the engine.
#[inline(always)]
fn f8e4m3fn_from_f16_bits(h: u16) -> u8 {
    const F16_LAYOUT: SourceLayout = SourceLayout {
        mantissa_bits: 10,
        bias: 15,
        bits: 16,
    };
    let fmt = &formats::F8E4M3FN;
    let bits = match round::nearest_even_from_bits(fmt, F16_LAYOUT, h as u64) {
        Some(b) => b,
        None => round::encode(
            fmt,
            round::decode(&formats::F16, h as u32),
            round::Rounding::NearestEven,
            false,
        ),
    };
    bits as u8
}

#[target_feature(enable = "f16c")]
fn f16_from_f32_f16c(x: f32) -> u16 {
    let h = _mm_cvtps_ph::<_MM_FROUND_TO_NEAREST_INT>(_mm_set_ss(x));
    _mm_cvtsi128_si32(h) as u16
}

#[target_feature(enable = "f16c")]
fn f16_to_f32_f16c(bits: u16) -> f32 {
    _mm_cvtss_f32(_mm_cvtph_ps(_mm_cvtsi32_si128(bits as i32)))
}

#[target_feature(enable = "f16c")]
fn f16_round_to_odd_f16c(x: f32) -> u16 {
    let h = _mm_cvtps_ph::<_MM_FROUND_TO_ZERO>(_mm_set_ss(x));
    let back = _mm_cvtss_f32(_mm_cvtph_ps(h));
    let truncated = _mm_cvtsi128_si32(h) as u16;
    // NaN compares unequal too; setting its last bit keeps it a NaN.
    truncated | (back != x) as u16
}
