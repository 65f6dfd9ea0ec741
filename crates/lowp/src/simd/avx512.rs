//! The AVX-512 paths: 16 lanes with AVX-512 F/BW, `vcvtps2ph`/`vcvtph2ps` for f16; with
//! AVX512-BF16 `vcvtneps2bf16` for bf16; with AVX512-FP16 `vcvtps2phx`/`vcvtph2psx` for f16.
//! Compiled only by Rust 1.89 and later, where their intrinsics are stable (`build.rs`); the
//! AVX512-FP16 path by 1.94 and later.

#[cfg(target_arch = "x86")]
use core::arch::x86::*;
#[cfg(target_arch = "x86_64")]
use core::arch::x86_64::*;

use super::conversions;
use super::isa::{Isa, narrow4};
use super::plan::NarrowPlan;
use crate::LowpFloat;
use crate::format::formats;

/// AVX512-FP16's conversions, whose intrinsics are stable from Rust 1.94 (`build.rs` sets
/// `lowp_avx512fp16` from there on; before, the `avx512fp16` path is not compiled and `FP16`
/// is never true where these would be called).
#[cfg(lowp_avx512fp16)]
#[clippy::msrv = "1.94"]
mod fp16 {
    #[cfg(target_arch = "x86")]
    use core::arch::x86::*;
    #[cfg(target_arch = "x86_64")]
    use core::arch::x86_64::*;

    /// `vcvtps2phx`: 16 f32s rounded to nearest even into f16s.
    ///
    /// # Safety
    ///
    /// The CPU has AVX512-FP16.
    #[inline(always)]
    pub(super) unsafe fn narrow(f: __m512) -> __m256i {
        // SAFETY: the caller's promise.
        unsafe { _mm256_castph_si256(_mm512_cvtxps_ph(f)) }
    }

    /// `vcvtph2psx`: 16 f16s widened to f32s.
    ///
    /// # Safety
    ///
    /// The CPU has AVX512-FP16.
    #[inline(always)]
    pub(super) unsafe fn widen(h: __m256i) -> __m512 {
        // SAFETY: the caller's promise.
        unsafe { _mm512_cvtxph_ps(_mm256_castsi256_ph(h)) }
    }
}

/// Proof that the CPU has AVX-512 F and BW and F16C, plus AVX512-BF16 when `BF16` and
/// AVX512-FP16 when `FP16`: made only inside functions compiled for those features.
#[derive(Clone, Copy)]
pub(crate) struct Avx512<const BF16: bool, const FP16: bool>(());

// SAFETY (for every `unsafe` block of this impl): an `Avx512<BF16, FP16>` exists only inside
// the `#[target_feature]` entry points at the end of this file, each compiled for the
// features its parameters promise and run only on CPUs that have them; the BF16 and FP16
// instructions are reached only when those parameters are true. The pointer methods pass on
// their callers' guarantee that `LANES` elements are readable or writable there.
impl<const BF16: bool, const FP16: bool> Isa for Avx512<BF16, FP16> {
    type V = __m512i;
    type M = __mmask16;
    const LANES: usize = 16;

    #[inline(always)]
    fn splat(self, x: u32) -> __m512i {
        // SAFETY: see the impl.
        unsafe { _mm512_set1_epi32(x as i32) }
    }
    #[inline(always)]
    fn and(self, a: __m512i, b: __m512i) -> __m512i {
        // SAFETY: see the impl.
        unsafe { _mm512_and_si512(a, b) }
    }
    #[inline(always)]
    fn or(self, a: __m512i, b: __m512i) -> __m512i {
        // SAFETY: see the impl.
        unsafe { _mm512_or_si512(a, b) }
    }
    #[inline(always)]
    fn add(self, a: __m512i, b: __m512i) -> __m512i {
        // SAFETY: see the impl.
        unsafe { _mm512_add_epi32(a, b) }
    }
    #[inline(always)]
    fn sub(self, a: __m512i, b: __m512i) -> __m512i {
        // SAFETY: see the impl.
        unsafe { _mm512_sub_epi32(a, b) }
    }
    #[inline(always)]
    fn shr(self, a: __m512i, n: u32) -> __m512i {
        // SAFETY: see the impl.
        unsafe { _mm512_srl_epi32(a, _mm_cvtsi32_si128(n as i32)) }
    }
    #[inline(always)]
    fn shl(self, a: __m512i, n: u32) -> __m512i {
        // SAFETY: see the impl.
        unsafe { _mm512_sll_epi32(a, _mm_cvtsi32_si128(n as i32)) }
    }
    #[inline(always)]
    fn gt(self, a: __m512i, b: __m512i) -> __mmask16 {
        // SAFETY: see the impl.
        unsafe { _mm512_cmpgt_epi32_mask(a, b) }
    }
    #[inline(always)]
    fn eq(self, a: __m512i, b: __m512i) -> __mmask16 {
        // SAFETY: see the impl.
        unsafe { _mm512_cmpeq_epi32_mask(a, b) }
    }
    #[inline(always)]
    fn either(self, a: __mmask16, b: __mmask16) -> __mmask16 {
        a | b
    }
    #[inline(always)]
    fn select(self, m: __mmask16, t: __m512i, f: __m512i) -> __m512i {
        // SAFETY: see the impl.
        unsafe { _mm512_mask_blend_epi32(m, f, t) }
    }
    #[inline(always)]
    fn add_f32(self, a: __m512i, b: __m512i) -> __m512i {
        // SAFETY: see the impl.
        unsafe {
            _mm512_castps_si512(_mm512_add_ps(
                _mm512_castsi512_ps(a),
                _mm512_castsi512_ps(b),
            ))
        }
    }
    #[inline(always)]
    fn max(self, a: __m512i, b: __m512i) -> __m512i {
        // SAFETY: see the impl.
        unsafe { _mm512_max_epi32(a, b) }
    }
    #[inline(always)]
    fn int_to_f32_scaled(self, a: __m512i, scale: f32) -> __m512i {
        // SAFETY: see the impl.
        unsafe { _mm512_castps_si512(_mm512_mul_ps(_mm512_cvtepi32_ps(a), _mm512_set1_ps(scale))) }
    }

    #[inline(always)]
    unsafe fn load_f32(self, p: *const f32) -> __m512i {
        // SAFETY: see the impl.
        unsafe { _mm512_castps_si512(_mm512_loadu_ps(p)) }
    }
    #[inline(always)]
    unsafe fn load_f64_odd(self, p: *const f64) -> __m512i {
        // SAFETY: see the impl.
        unsafe {
            let (lo, lo_inexact) = truncate(_mm512_loadu_pd(p));
            let (hi, hi_inexact) = truncate(_mm512_loadu_pd(p.add(8)));
            let bits = _mm512_inserti64x4::<1>(_mm512_castsi256_si512(lo), hi);
            let inexact = lo_inexact as u16 | (hi_inexact as u16) << 8;
            _mm512_mask_or_epi32(bits, inexact, bits, _mm512_set1_epi32(1))
        }
    }
    #[inline(always)]
    unsafe fn store_f32<const STREAM: bool>(self, p: *mut f32, v: __m512i) {
        // SAFETY: see the impl.
        unsafe { store::<STREAM>(p.cast(), v) }
    }
    #[inline(always)]
    unsafe fn store_f64<const STREAM: bool>(self, p: *mut f64, v: __m512i) {
        // SAFETY: see the impl.
        unsafe {
            let lo = _mm256_castsi256_ps(_mm512_castsi512_si256(v));
            let hi = _mm256_castsi256_ps(_mm512_extracti64x4_epi64::<1>(v));
            store::<STREAM>(p.cast(), _mm512_castpd_si512(_mm512_cvtps_pd(lo)));
            store::<STREAM>(p.add(8).cast(), _mm512_castpd_si512(_mm512_cvtps_pd(hi)));
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
    unsafe fn load_u8(self, p: *const u8) -> __m512i {
        // SAFETY: see the impl.
        unsafe { _mm512_cvtepu8_epi32(_mm_loadu_si128(p.cast())) }
    }
    #[inline(always)]
    unsafe fn load_u16(self, p: *const u16) -> __m512i {
        // SAFETY: see the impl.
        unsafe { _mm512_cvtepu16_epi32(_mm256_loadu_si256(p.cast())) }
    }
    #[inline(always)]
    unsafe fn store_u8x4<const STREAM: bool>(self, p: *mut u8, v: [__m512i; 4]) {
        // SAFETY: see the impl.
        unsafe {
            let mut all = _mm512_castsi128_si512(_mm512_cvtepi32_epi8(v[0]));
            all = _mm512_inserti32x4::<1>(all, _mm512_cvtepi32_epi8(v[1]));
            all = _mm512_inserti32x4::<2>(all, _mm512_cvtepi32_epi8(v[2]));
            all = _mm512_inserti32x4::<3>(all, _mm512_cvtepi32_epi8(v[3]));
            store::<STREAM>(p.cast(), all);
        }
    }
    #[inline(always)]
    unsafe fn store_u16x4<const STREAM: bool>(self, p: *mut u16, v: [__m512i; 4]) {
        // SAFETY: see the impl.
        unsafe {
            let pair = |a: __m512i, b: __m512i| {
                let lo = _mm512_castsi256_si512(_mm512_cvtepi32_epi16(a));
                _mm512_inserti64x4::<1>(lo, _mm512_cvtepi32_epi16(b))
            };
            store::<STREAM>(p.cast(), pair(v[0], v[1]));
            store::<STREAM>(p.add(32).cast(), pair(v[2], v[3]));
        }
    }

    #[inline(always)]
    unsafe fn store_f16x4<const STREAM: bool>(self, p: *mut u16, x: [__m512i; 4], saturate: bool) {
        if saturate {
            const PLAN: NarrowPlan = NarrowPlan::of(&formats::F16);
            // SAFETY: see the impl.
            return unsafe { self.store_u16x4::<STREAM>(p, narrow4(self, &PLAN, x, true)) };
        }
        // SAFETY: see the impl (`FP16` promises AVX512-FP16).
        unsafe {
            let h = |v: __m512i| {
                let f = _mm512_castsi512_ps(v);
                #[cfg(lowp_avx512fp16)]
                if FP16 {
                    return fp16::narrow(f);
                }
                _mm512_cvtps_ph::<_MM_FROUND_TO_NEAREST_INT>(f)
            };
            let pair = |a, b| _mm512_inserti64x4::<1>(_mm512_castsi256_si512(h(a)), h(b));
            store::<STREAM>(p.cast(), pair(x[0], x[1]));
            store::<STREAM>(p.add(32).cast(), pair(x[2], x[3]));
        }
    }
    #[inline(always)]
    unsafe fn load_f16(self, p: *const u16) -> __m512i {
        // SAFETY: see the impl (`FP16` promises AVX512-FP16).
        unsafe {
            let h = _mm256_loadu_si256(p.cast());
            #[cfg(lowp_avx512fp16)]
            if FP16 {
                return _mm512_castps_si512(fp16::widen(h));
            }
            _mm512_castps_si512(_mm512_cvtph_ps(h))
        }
    }
    #[inline(always)]
    unsafe fn store_bf16x4<const STREAM: bool>(self, p: *mut u16, x: [__m512i; 4], saturate: bool) {
        const PLAN: NarrowPlan = NarrowPlan::of(&formats::BF16);
        // `vcvtneps2bf16` flushes subnormal inputs to zero, and its NaNs are not promised to
        // match the engine's: a block with either kind of lane takes the integer kernel.
        let unusual = |v| {
            let abs = self.and(v, self.splat(0x7fff_ffff));
            self.either(
                self.gt(self.splat(0x0080_0000), abs),
                self.gt(abs, self.splat(0x7f80_0000)),
            )
        };
        let any = unusual(x[0]) | unusual(x[1]) | unusual(x[2]) | unusual(x[3]);
        if !BF16 || saturate || any != 0 {
            // SAFETY: see the impl.
            return unsafe { self.store_u16x4::<STREAM>(p, narrow4(self, &PLAN, x, saturate)) };
        }
        // SAFETY: see the impl (`BF16` promises AVX512-BF16).
        unsafe {
            let pair = |a: __m512i, b: __m512i| {
                let h = _mm512_cvtne2ps_pbh(_mm512_castsi512_ps(b), _mm512_castsi512_ps(a));
                core::mem::transmute::<__m512bh, __m512i>(h)
            };
            store::<STREAM>(p.cast(), pair(x[0], x[1]));
            store::<STREAM>(p.add(32).cast(), pair(x[2], x[3]));
        }
    }
}

/// Stores 64 bytes, non-temporally with `STREAM`.
///
/// # Safety
/// `p` must be valid for writing 64 bytes, and 64-byte aligned if `STREAM`.
#[inline(always)]
unsafe fn store<const STREAM: bool>(p: *mut __m512i, v: __m512i) {
    // SAFETY: see the impl; only called from its methods, with their callers' guarantees.
    unsafe {
        if STREAM {
            _mm512_stream_si512(p, v)
        } else {
            _mm512_storeu_si512(p, v)
        }
    }
}

/// Truncates eight f64s to f32 (toward zero, so overflow gives ±MAX), with the lanes where
/// that was inexact; NaN lanes compare unequal to everything and are left as converted.
#[inline(always)]
fn truncate(x: __m512d) -> (__m256i, __mmask8) {
    // SAFETY: see the impl; only called from its methods.
    unsafe {
        let t = _mm512_cvt_roundpd_ps::<{ _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC }>(x);
        let inexact = _mm512_cmp_pd_mask::<_CMP_NEQ_OQ>(_mm512_cvtps_pd(t), x);
        (_mm256_castps_si256(t), inexact)
    }
}

super::entry_points!(
    plain,
    "avx512f,avx512bw,avx2,f16c",
    Avx512::<false, false>(())
);
super::entry_points!(
    with_bf16,
    "avx512f,avx512bw,avx2,f16c,avx512bf16",
    Avx512::<true, false>(())
);
#[cfg(lowp_avx512fp16)]
super::entry_points!(
    with_fp16,
    "avx512f,avx512bw,avx2,f16c,avx512bf16,avx512fp16",
    Avx512::<true, true>(())
);
