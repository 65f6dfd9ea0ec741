//! The `f16c` path: AVX2 lanes, 8 at a time, and F16C's `vcvtps2ph`/`vcvtph2ps` for f16.

#[cfg(target_arch = "x86")]
use core::arch::x86::*;
#[cfg(target_arch = "x86_64")]
use core::arch::x86_64::*;

use super::conversions;
use super::isa::{Isa, narrow4};
use crate::LowpFloat;

/// Proof that the CPU has AVX2 and F16C: made only inside functions compiled for them.
#[derive(Clone, Copy)]
pub(crate) struct Avx2(());

// SAFETY (for every `unsafe` block of this impl): an `Avx2` exists only inside the
// `#[target_feature(enable = "avx2,f16c")]` entry points below, which run only on CPUs that
// have both, so the intrinsics' features are present; the pointer methods pass on their
// callers' guarantee that `LANES` elements are readable or writable there.
impl Isa for Avx2 {
    type V = __m256i;
    type M = __m256i;
    const LANES: usize = 8;

    #[inline(always)]
    fn splat(self, x: u32) -> __m256i {
        // SAFETY: see the impl.
        unsafe { _mm256_set1_epi32(x as i32) }
    }
    #[inline(always)]
    fn and(self, a: __m256i, b: __m256i) -> __m256i {
        // SAFETY: see the impl.
        unsafe { _mm256_and_si256(a, b) }
    }
    #[inline(always)]
    fn or(self, a: __m256i, b: __m256i) -> __m256i {
        // SAFETY: see the impl.
        unsafe { _mm256_or_si256(a, b) }
    }
    #[inline(always)]
    fn add(self, a: __m256i, b: __m256i) -> __m256i {
        // SAFETY: see the impl.
        unsafe { _mm256_add_epi32(a, b) }
    }
    #[inline(always)]
    fn sub(self, a: __m256i, b: __m256i) -> __m256i {
        // SAFETY: see the impl.
        unsafe { _mm256_sub_epi32(a, b) }
    }
    #[inline(always)]
    fn shr(self, a: __m256i, n: u32) -> __m256i {
        // SAFETY: see the impl.
        unsafe { _mm256_srl_epi32(a, _mm_cvtsi32_si128(n as i32)) }
    }
    #[inline(always)]
    fn shl(self, a: __m256i, n: u32) -> __m256i {
        // SAFETY: see the impl.
        unsafe { _mm256_sll_epi32(a, _mm_cvtsi32_si128(n as i32)) }
    }
    #[inline(always)]
    fn gt(self, a: __m256i, b: __m256i) -> __m256i {
        // SAFETY: see the impl.
        unsafe { _mm256_cmpgt_epi32(a, b) }
    }
    #[inline(always)]
    fn eq(self, a: __m256i, b: __m256i) -> __m256i {
        // SAFETY: see the impl.
        unsafe { _mm256_cmpeq_epi32(a, b) }
    }
    #[inline(always)]
    fn either(self, a: __m256i, b: __m256i) -> __m256i {
        self.or(a, b)
    }
    #[inline(always)]
    fn select(self, m: __m256i, t: __m256i, f: __m256i) -> __m256i {
        // SAFETY: see the impl.
        unsafe { _mm256_blendv_epi8(f, t, m) }
    }
    #[inline(always)]
    fn add_f32(self, a: __m256i, b: __m256i) -> __m256i {
        // SAFETY: see the impl.
        unsafe {
            _mm256_castps_si256(_mm256_add_ps(
                _mm256_castsi256_ps(a),
                _mm256_castsi256_ps(b),
            ))
        }
    }
    #[inline(always)]
    fn max(self, a: __m256i, b: __m256i) -> __m256i {
        // SAFETY: see the impl.
        unsafe { _mm256_max_epi32(a, b) }
    }
    #[inline(always)]
    fn int_to_f32_scaled(self, a: __m256i, scale: f32) -> __m256i {
        // SAFETY: see the impl.
        unsafe { _mm256_castps_si256(_mm256_mul_ps(_mm256_cvtepi32_ps(a), _mm256_set1_ps(scale))) }
    }

    #[inline(always)]
    unsafe fn load_f32(self, p: *const f32) -> __m256i {
        // SAFETY: see the impl.
        unsafe { _mm256_castps_si256(_mm256_loadu_ps(p)) }
    }
    #[inline(always)]
    unsafe fn load_f64_odd(self, p: *const f64) -> __m256i {
        // SAFETY: see the impl.
        unsafe {
            let lo = round_to_odd(_mm256_loadu_pd(p));
            let hi = round_to_odd(_mm256_loadu_pd(p.add(4)));
            _mm256_set_m128i(hi, lo)
        }
    }
    #[inline(always)]
    unsafe fn store_f32<const STREAM: bool>(self, p: *mut f32, v: __m256i) {
        // SAFETY: see the impl.
        unsafe { store::<STREAM>(p.cast(), v) }
    }
    #[inline(always)]
    unsafe fn store_f64<const STREAM: bool>(self, p: *mut f64, v: __m256i) {
        // SAFETY: see the impl.
        unsafe {
            let f = _mm256_castsi256_ps(v);
            let lo = _mm256_castpd_si256(_mm256_cvtps_pd(_mm256_castps256_ps128(f)));
            let hi = _mm256_castpd_si256(_mm256_cvtps_pd(_mm256_extractf128_ps::<1>(f)));
            store::<STREAM>(p.cast(), lo);
            store::<STREAM>(p.add(4).cast(), hi);
        }
    }
    #[inline(always)]
    fn fence(self) {
        // SAFETY: see the impl.
        unsafe { _mm_sfence() }
    }
    #[inline(always)]
    fn prefetch<P>(self, p: *const P) {
        // SAFETY: see the impl; a prefetch never faults, whatever the address.
        unsafe { _mm_prefetch::<_MM_HINT_T0>(p.cast()) }
    }
    #[inline(always)]
    unsafe fn load_u8(self, p: *const u8) -> __m256i {
        // SAFETY: see the impl.
        unsafe { _mm256_cvtepu8_epi32(_mm_loadl_epi64(p.cast())) }
    }
    #[inline(always)]
    unsafe fn load_u16(self, p: *const u16) -> __m256i {
        // SAFETY: see the impl.
        unsafe { _mm256_cvtepu16_epi32(_mm_loadu_si128(p.cast())) }
    }
    #[inline(always)]
    unsafe fn store_u8x4<const STREAM: bool>(self, p: *mut u8, v: [__m256i; 4]) {
        // SAFETY: see the impl.
        unsafe {
            // Packing works within 128-bit halves: bytes come out as a0-3 b0-3 c0-3 d0-3 |
            // a4-7 b4-7 c4-7 d4-7, and one dword permutation puts them in order.
            let ab = _mm256_packus_epi32(v[0], v[1]);
            let cd = _mm256_packus_epi32(v[2], v[3]);
            let bytes = _mm256_packus_epi16(ab, cd);
            let order = _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7);
            store::<STREAM>(p.cast(), _mm256_permutevar8x32_epi32(bytes, order));
        }
    }
    #[inline(always)]
    unsafe fn store_u16x4<const STREAM: bool>(self, p: *mut u16, v: [__m256i; 4]) {
        // SAFETY: see the impl.
        unsafe {
            // a0-3 b0-3 | a4-7 b4-7 as words; swapping the middle quadwords orders them.
            let ab = _mm256_permute4x64_epi64::<0b11_01_10_00>(_mm256_packus_epi32(v[0], v[1]));
            let cd = _mm256_permute4x64_epi64::<0b11_01_10_00>(_mm256_packus_epi32(v[2], v[3]));
            store::<STREAM>(p.cast(), ab);
            store::<STREAM>(p.add(16).cast(), cd);
        }
    }

    #[inline(always)]
    unsafe fn store_f16x4<const STREAM: bool>(self, p: *mut u16, x: [__m256i; 4], saturate: bool) {
        if saturate {
            const PLAN: super::plan::NarrowPlan =
                super::plan::NarrowPlan::of(&crate::format::formats::F16);
            // SAFETY: see the impl.
            return unsafe { self.store_u16x4::<STREAM>(p, narrow4(self, &PLAN, x, true)) };
        }
        // SAFETY: see the impl.
        unsafe {
            let h =
                |v: __m256i| _mm256_cvtps_ph::<_MM_FROUND_TO_NEAREST_INT>(_mm256_castsi256_ps(v));
            store::<STREAM>(p.cast(), _mm256_set_m128i(h(x[1]), h(x[0])));
            store::<STREAM>(p.add(16).cast(), _mm256_set_m128i(h(x[3]), h(x[2])));
        }
    }
    #[inline(always)]
    unsafe fn load_f16(self, p: *const u16) -> __m256i {
        // SAFETY: see the impl.
        unsafe { _mm256_castps_si256(_mm256_cvtph_ps(_mm_loadu_si128(p.cast()))) }
    }
}

/// Stores 32 bytes, non-temporally with `STREAM`.
///
/// # Safety
/// `p` must be valid for writing 32 bytes, and 32-byte aligned if `STREAM`.
#[inline(always)]
unsafe fn store<const STREAM: bool>(p: *mut __m256i, v: __m256i) {
    // SAFETY: see the impl; only called from its methods, with their callers' guarantees.
    unsafe {
        if STREAM {
            _mm256_stream_si256(p, v)
        } else {
            _mm256_storeu_si256(p, v)
        }
    }
}

/// Rounds four f64s to odd at f32's precision: converted to nearest, moved one step toward
/// zero where that went up in magnitude, then the last bit set where it was inexact. NaN lanes
/// compare unequal to everything, so they keep the conversion's quiet NaN.
#[inline(always)]
fn round_to_odd(x: __m256d) -> __m128i {
    // SAFETY: see the impl; only called from its methods.
    unsafe {
        let y = _mm256_cvtpd_ps(x);
        let back = _mm256_cvtps_pd(y);
        let abs = _mm256_castsi256_pd(_mm256_set1_epi64x(0x7fff_ffff_ffff_ffff));
        let inexact = _mm256_cmp_pd::<_CMP_NEQ_OQ>(back, x);
        let above = _mm256_cmp_pd::<_CMP_GT_OQ>(_mm256_and_pd(back, abs), _mm256_and_pd(x, abs));
        let bits = _mm_add_epi32(_mm_castps_si128(y), low_halves(above));
        _mm_or_si128(bits, _mm_and_si128(low_halves(inexact), _mm_set1_epi32(1)))
    }
}

/// The low 32 bits of each 64-bit lane of a comparison mask, as four 32-bit lanes.
#[inline(always)]
fn low_halves(m: __m256d) -> __m128i {
    // SAFETY: see the impl; only called from its methods.
    unsafe {
        let low = _mm256_setr_epi32(0, 2, 4, 6, 0, 2, 4, 6);
        _mm256_castsi256_si128(_mm256_permutevar8x32_epi32(_mm256_castpd_si256(m), low))
    }
}

super::entry_points!(path, "avx2,f16c", Avx2(()));

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::formats;
    use crate::simd::isa::narrow;
    use crate::simd::plan::{Method, NarrowPlan};

    /// The integer rounding method serves only E8M0 among today's formats (the FPU method
    /// covers the others); this runs it for every format, over a stride through all f32 bit
    /// patterns, against the scalar engine, so a future format that needs it finds it working.
    #[test]
    fn the_integer_method_matches_the_engine_for_every_format() {
        if !crate::cpu::Path::F16c.is_supported() {
            return;
        }
        // SAFETY: the CPU has AVX2 and F16C, checked just above.
        unsafe { integer_method_sweep() }
    }

    #[target_feature(enable = "avx2,f16c")]
    unsafe fn integer_method_sweep() {
        let isa = Avx2(());
        for fmt in formats::ALL {
            let plan = NarrowPlan {
                method: Method::Integer,
                ..NarrowPlan::of(&fmt)
            };
            for saturate in [false, true] {
                let mut lanes = [0u32; 8];
                let mut bits = 0u32;
                for _ in 0..(1u64 << 32) / (8 * 251) {
                    for l in &mut lanes {
                        *l = bits;
                        bits = bits.wrapping_add(251);
                    }
                    // SAFETY: `lanes` holds 8 values; the CPU has AVX2.
                    let x = unsafe { _mm256_loadu_si256(lanes.as_ptr().cast()) };
                    let mut out = [0u32; 8];
                    let code = narrow(isa, &plan, x, saturate);
                    // SAFETY: `out` has room for 8 values.
                    unsafe { _mm256_storeu_si256(out.as_mut_ptr().cast(), code) };
                    for (&l, &o) in lanes.iter().zip(&out) {
                        let want =
                            crate::round::from_f32_nearest(&fmt, f32::from_bits(l), saturate);
                        assert_eq!(o, want, "{} {l:#010x} saturate {saturate}", fmt.name);
                    }
                }
            }
        }
    }
}
