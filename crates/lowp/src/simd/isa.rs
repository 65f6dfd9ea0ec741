//! The few lane operations the kernels are written in, one implementation per instruction set.

use super::kernel;
use super::plan::{NarrowPlan, WidenPlan};
use crate::format::formats;

/// A vector instruction set, as a zero-sized token that exists only where the CPU has it.
///
/// `V` holds `LANES` 32-bit lanes, `M` a mask of lanes. Arithmetic is on the lanes as `u32`
/// (comparisons as `i32`: every operand the kernels compare is below 2^31). The memory methods
/// read or write exactly `LANES` elements at the pointer, which need not be aligned.
pub(crate) trait Isa: Copy {
    /// `LANES` lanes of 32 bits.
    type V: Copy;
    /// A mask of lanes.
    type M: Copy;
    /// Lanes per vector.
    const LANES: usize;

    /// Every lane `x`.
    fn splat(self, x: u32) -> Self::V;
    /// Bitwise and.
    fn and(self, a: Self::V, b: Self::V) -> Self::V;
    /// Bitwise or.
    fn or(self, a: Self::V, b: Self::V) -> Self::V;
    /// Wrapping addition.
    fn add(self, a: Self::V, b: Self::V) -> Self::V;
    /// Wrapping subtraction.
    fn sub(self, a: Self::V, b: Self::V) -> Self::V;
    /// Logical shift right by `n` (below 32).
    fn shr(self, a: Self::V, n: u32) -> Self::V;
    /// Shift left by `n` (below 32).
    fn shl(self, a: Self::V, n: u32) -> Self::V;
    /// Lanes where `a > b` as signed integers.
    fn gt(self, a: Self::V, b: Self::V) -> Self::M;
    /// Lanes where `a == b`.
    fn eq(self, a: Self::V, b: Self::V) -> Self::M;
    /// Lanes in `a` or `b`.
    fn either(self, a: Self::M, b: Self::M) -> Self::M;
    /// `t` in the lanes of `m`, `f` elsewhere.
    fn select(self, m: Self::M, t: Self::V, f: Self::V) -> Self::V;
    /// Lanes as f32, added as f32 (rounding to nearest even), as bits.
    fn add_f32(self, a: Self::V, b: Self::V) -> Self::V;
    /// The larger of each pair of lanes, as signed integers.
    fn max(self, a: Self::V, b: Self::V) -> Self::V;
    /// Lanes as integers, converted to f32 and multiplied by `scale`, as bits.
    fn int_to_f32_scaled(self, a: Self::V, scale: f32) -> Self::V;

    /// Loads f32s as bits.
    ///
    /// # Safety
    /// `p` must be valid for reading `LANES` f32s.
    unsafe fn load_f32(self, p: *const f32) -> Self::V;
    /// Loads f64s, rounded to odd at f32's precision (truncated, then the last bit set if that
    /// lost anything), as f32 bits; NaN as the CPU's f64-to-f32 conversion gives it.
    ///
    /// # Safety
    /// `p` must be valid for reading `LANES` f64s.
    unsafe fn load_f64_odd(self, p: *const f64) -> Self::V;
    /// Stores lanes (f32 bits) as f32s; with `STREAM`, non-temporally.
    ///
    /// # Safety
    /// `p` must be valid for writing `LANES` f32s, and aligned to a vector (`4 * LANES`
    /// bytes) if `STREAM`.
    unsafe fn store_f32<const STREAM: bool>(self, p: *mut f32, v: Self::V);
    /// Stores lanes (f32 bits) as f64s, exactly; with `STREAM`, non-temporally.
    ///
    /// # Safety
    /// `p` must be valid for writing `LANES` f64s, and aligned to a vector (`4 * LANES`
    /// bytes) if `STREAM`.
    unsafe fn store_f64<const STREAM: bool>(self, p: *mut f64, v: Self::V);
    /// Orders the non-temporal stores before whatever follows.
    fn fence(self);
    /// Asks for the cache line at `p` to be fetched (a hint: any address is harmless).
    fn prefetch<P>(self, p: *const P);
    /// Loads bytes, zero-extended.
    ///
    /// # Safety
    /// `p` must be valid for reading `LANES` bytes.
    unsafe fn load_u8(self, p: *const u8) -> Self::V;
    /// Loads 16-bit words, zero-extended.
    ///
    /// # Safety
    /// `p` must be valid for reading `LANES` words.
    unsafe fn load_u16(self, p: *const u16) -> Self::V;
    /// Stores four vectors of lanes (each below 256) as `4 * LANES` bytes; with `STREAM`,
    /// non-temporally.
    ///
    /// # Safety
    /// `p` must be valid for writing `4 * LANES` bytes, and aligned to a vector (`4 * LANES`
    /// bytes) if `STREAM`.
    unsafe fn store_u8x4<const STREAM: bool>(self, p: *mut u8, v: [Self::V; 4]);
    /// Stores four vectors of lanes (each below 65536) as `4 * LANES` words; with `STREAM`,
    /// non-temporally.
    ///
    /// # Safety
    /// `p` must be valid for writing `4 * LANES` words, and aligned to a vector (`4 * LANES`
    /// bytes) if `STREAM`.
    unsafe fn store_u16x4<const STREAM: bool>(self, p: *mut u16, v: [Self::V; 4]);

    /// Rounds four vectors of f32 lanes to f16 and stores them; an instruction set with a
    /// conversion instruction overrides this.
    ///
    /// # Safety
    /// As for [`Isa::store_u16x4`].
    #[inline(always)]
    unsafe fn store_f16x4<const STREAM: bool>(self, p: *mut u16, x: [Self::V; 4], saturate: bool) {
        const PLAN: NarrowPlan = NarrowPlan::of(&formats::F16);
        // SAFETY: the caller's guarantee is this method's.
        unsafe { self.store_u16x4::<STREAM>(p, kernel::narrow4(self, &PLAN, x, saturate)) }
    }
    /// Rounds four vectors of f32 lanes to bf16 and stores them; overridden where there is an
    /// instruction.
    ///
    /// # Safety
    /// As for [`Isa::store_u16x4`].
    #[inline(always)]
    unsafe fn store_bf16x4<const STREAM: bool>(self, p: *mut u16, x: [Self::V; 4], saturate: bool) {
        const PLAN: NarrowPlan = NarrowPlan::of(&formats::BF16);
        // SAFETY: the caller's guarantee is this method's.
        unsafe { self.store_u16x4::<STREAM>(p, kernel::narrow4(self, &PLAN, x, saturate)) }
    }
    /// Loads f16s and widens them to f32 bits; overridden where there is an instruction.
    ///
    /// # Safety
    /// `p` must be valid for reading `LANES` words.
    #[inline(always)]
    unsafe fn load_f16(self, p: *const u16) -> Self::V {
        const PLAN: WidenPlan = WidenPlan::of(&formats::F16);
        // SAFETY: the caller's guarantee is this method's.
        kernel::widen(self, &PLAN, unsafe { self.load_u16(p) })
    }
}
