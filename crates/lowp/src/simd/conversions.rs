//! The conversion kernels, written once for any [`Isa`], and the loops that run them over
//! slices.

use super::isa::{Isa, narrow4, widen};
use super::plan::{NarrowPlan, WidenPlan, same};
use crate::LowpFloat;
use crate::format::formats;

/// The format a slice element is, as far as the kernels care.
#[derive(PartialEq, Eq)]
enum Kind {
    F16,
    Bf16,
    Byte,
}

#[inline(always)]
fn kind<T: LowpFloat>() -> Kind {
    if same(&T::FORMAT, &formats::F16) {
        Kind::F16
    } else if same(&T::FORMAT, &formats::BF16) {
        Kind::Bf16
    } else {
        Kind::Byte
    }
}

/// How far ahead of the block being converted the streaming loop prefetches its source, in
/// each of its streams. With four narrowing streams, 256 to 1024 bytes ran fastest on the
/// Zen 4 this was measured on (AVX-512 path); 4096 (the best for two streams on a Zen 3)
/// cost the 8-bit narrowings about a fifth, and no software prefetch at all as much.
const PREFETCH_BYTES: usize = 1024;

/// How many parts of its slice a streaming narrowing converts side by side. One sequential
/// stream of reads keeps too few lines in flight; four is what glibc's largest `memcpy` loop
/// interleaves too, and measured faster than two for f16 and bf16 (eight was no faster).
const NARROW_STREAMS: usize = 4;

/// Vectors per block: four vectors of narrow results pack into whole vectors for the stores.
const UNROLL: usize = 4;
/// The largest block (AVX-512), and the largest head before a 64-byte boundary (64 bytes).
const MAX_BLOCK: usize = 64;

/// Rounds one block of f32s at `s` into `T`s at `d`.
///
/// # Safety
/// `s` and `d` must be valid for `UNROLL * LANES` elements, and `d` aligned to a vector
/// (`4 * LANES` bytes) if `STREAM`.
#[inline(always)]
unsafe fn narrow_f32_block<I: Isa, T: LowpFloat, const STREAM: bool>(
    isa: I,
    s: *const f32,
    d: *mut T,
    saturate: bool,
) {
    let l = I::LANES;
    // SAFETY: the caller's guarantee.
    unsafe {
        let x = [
            isa.load_f32(s),
            isa.load_f32(s.add(l)),
            isa.load_f32(s.add(2 * l)),
            isa.load_f32(s.add(3 * l)),
        ];
        narrow_store::<I, T, STREAM>(isa, x, d, saturate)
    }
}

/// Rounds one block of f64s at `s` into `T`s at `d`.
///
/// # Safety
/// As for [`narrow_f32_block`].
#[inline(always)]
unsafe fn narrow_f64_block<I: Isa, T: LowpFloat, const STREAM: bool>(
    isa: I,
    s: *const f64,
    d: *mut T,
    saturate: bool,
) {
    let l = I::LANES;
    // SAFETY: the caller's guarantee.
    unsafe {
        let x = [
            isa.load_f64_odd(s),
            isa.load_f64_odd(s.add(l)),
            isa.load_f64_odd(s.add(2 * l)),
            isa.load_f64_odd(s.add(3 * l)),
        ];
        narrow_store::<I, T, STREAM>(isa, x, d, saturate)
    }
}

/// Rounds a block of f32 lanes to `T` and stores it.
///
/// # Safety
/// As for [`narrow_f32_block`].
#[inline(always)]
unsafe fn narrow_store<I: Isa, T: LowpFloat, const STREAM: bool>(
    isa: I,
    x: [I::V; UNROLL],
    d: *mut T,
    saturate: bool,
) {
    const { assert!(size_of::<T>() == size_of::<T::Bits>()) };
    // SAFETY: every format type is a `repr(transparent)` newtype over its `Bits`, `u16` for
    // the 16-bit formats and `u8` for the rest, so the pointer casts keep the layout; room and
    // alignment are the caller's guarantee.
    unsafe {
        match kind::<T>() {
            Kind::F16 => isa.store_f16x4::<STREAM>(d.cast(), x, saturate),
            Kind::Bf16 => isa.store_bf16x4::<STREAM>(d.cast(), x, saturate),
            Kind::Byte => {
                let plan = const { NarrowPlan::of(&T::FORMAT) };
                isa.store_u8x4::<STREAM>(d.cast(), narrow4(isa, &plan, x, saturate))
            }
        }
    }
}

/// Loads `LANES` elements at `src` and widens them to f32 bits.
///
/// # Safety
/// `src` must be valid for reading `I::LANES` elements.
#[inline(always)]
unsafe fn load_widen<I: Isa, T: LowpFloat>(isa: I, src: *const T) -> I::V {
    let plan = const { WidenPlan::of(&T::FORMAT) };
    // SAFETY: as in `narrow_store`.
    unsafe {
        match kind::<T>() {
            Kind::F16 => isa.load_f16(src.cast()),
            Kind::Bf16 => widen(isa, &plan, isa.load_u16(src.cast())),
            Kind::Byte => widen(isa, &plan, isa.load_u8(src.cast())),
        }
    }
}

/// Widens one block of `T`s at `s` into f32s at `d`.
///
/// # Safety
/// As for [`narrow_f32_block`].
#[inline(always)]
unsafe fn widen_f32_block<I: Isa, T: LowpFloat, const STREAM: bool>(
    isa: I,
    s: *const T,
    d: *mut f32,
) {
    for k in 0..UNROLL {
        let o = k * I::LANES;
        // SAFETY: the caller's guarantee.
        unsafe { isa.store_f32::<STREAM>(d.add(o), load_widen(isa, s.add(o))) }
    }
}

/// Widens one block of `T`s at `s` into f64s at `d`.
///
/// # Safety
/// As for [`narrow_f32_block`].
#[inline(always)]
unsafe fn widen_f64_block<I: Isa, T: LowpFloat, const STREAM: bool>(
    isa: I,
    s: *const T,
    d: *mut f64,
) {
    for k in 0..UNROLL {
        let o = k * I::LANES;
        // SAFETY: the caller's guarantee.
        unsafe { isa.store_f64::<STREAM>(d.add(o), load_widen(isa, s.add(o))) }
    }
}

/// Runs `$block` over the slices: whole blocks in place, and the pieces shorter than a block
/// (the tail, and with `$stream` the head before the destination's first 64-byte boundary)
/// on copies padded to a block. With `$stream` the whole blocks are written with
/// non-temporal stores, which skip reading the destination's cache lines first: on buffers
/// larger than the caches that is a third of the memory traffic saved.
macro_rules! convert_slice {
    ($isa:ident, $src:expr, $dst:expr, $S:ty, $D:ty, $stream:expr, $block:ident($($extra:expr),*)) => {{
        let (src, dst): (&[$S], &mut [$D]) = ($src, $dst);
        debug_assert_eq!(src.len(), dst.len());
        let len = src.len().min(dst.len());
        let block = I::LANES * UNROLL;
        debug_assert!(block <= MAX_BLOCK);
        // Inlined: a closure is compiled for the baseline CPU unless it is inlined into the
        // caller, which the paths compile with their features, and out of line every
        // intrinsic in it became a call (a sixth of a bf16 product of n = 257, whose rows end
        // in a piece shorter than a block).
        // (`identity` only gives the attribute a place where stable Rust allows it.)
        let padded = core::convert::identity(#[inline(always)] |i: usize, n: usize, dst: &mut [$D]| {
            let mut a = [<$S>::default(); MAX_BLOCK];
            let mut b = [<$D>::default(); MAX_BLOCK];
            a[..n].copy_from_slice(&src[i..i + n]);
            // SAFETY: both buffers hold `MAX_BLOCK` elements, at least a block.
            unsafe { $block::<I, T, false>($isa, a.as_ptr(), b.as_mut_ptr() $(, $extra)*) };
            dst[i..i + n].copy_from_slice(&b[..n]);
        });
        let mut i = 0;
        if $stream {
            let misalign = dst.as_ptr() as usize % 64;
            let head = ((64 - misalign) % 64 / size_of::<$D>()).min(len);
            while i < head {
                let n = (head - i).min(block);
                padded(i, n, dst);
                i += n;
            }
            // A narrowing reads more than it writes, and one sequential stream of reads keeps
            // too few lines in flight: it converts `NARROW_STREAMS` equal parts side by side,
            // taking a whole destination line (`step` values, one block or more) from each in
            // turn, so that no line is left half written. A widening is bound by its writes,
            // and a second stream only slows it.
            let step = block * (64 / (block * size_of::<$D>())).max(1);
            let per_step = step / block;
            let streams = if size_of::<$S>() > size_of::<$D>() { NARROW_STREAMS } else { 1 };
            let steps = (len - i) / step / streams;
            let (first, rest) = (i, i + streams * steps * step);
            let paired = streams * steps * per_step;
            for b in 0..paired + (len - rest) / block {
                let at = if b < paired {
                    let (k, r) = (b / (streams * per_step), b % (streams * per_step));
                    first + r / per_step * steps * step + k * step + r % per_step * block
                } else {
                    rest + (b - paired) * block
                };
                // Out of cache the hardware prefetcher alone leaves the load units waiting, so
                // every source line is asked for well ahead.
                let mut line = 0;
                while line < block * size_of::<$S>() {
                    $isa.prefetch(src.as_ptr().wrapping_add(at + (PREFETCH_BYTES + line) / size_of::<$S>()));
                    line += 64;
                }
                // SAFETY: `at + block <= len`, so the block lies within both slices. `at - head`
                // is a multiple of the block, and a block's destination (`4 * LANES` values) is
                // a whole number of vectors, so `dst + at` is aligned to a vector.
                unsafe {
                    $block::<I, T, true>($isa, src.as_ptr().add(at), dst.as_mut_ptr().add(at) $(, $extra)*)
                };
            }
            i = rest + (len - rest) / block * block;
            $isa.fence();
        } else {
            while i + block <= len {
                // SAFETY: `i + block <= len`: the block lies within both slices.
                unsafe {
                    $block::<I, T, false>($isa, src.as_ptr().add(i), dst.as_mut_ptr().add(i) $(, $extra)*)
                };
                i += block;
            }
        }
        while i < len {
            let n = (len - i).min(block);
            padded(i, n, dst);
            i += n;
        }
    }};
}

/// Rounds f32s to nearest even (saturating overflow when asked) into `dst`.
#[inline(always)]
pub(crate) fn narrow_f32<I: Isa, T: LowpFloat>(
    isa: I,
    src: &[f32],
    dst: &mut [T],
    saturate: bool,
    stream: bool,
) {
    convert_slice!(isa, src, dst, f32, T, stream, narrow_f32_block(saturate));
}

/// Rounds f64s to nearest even (saturating overflow when asked) into `dst`: rounded to odd at
/// f32's precision first, which keeps all the second rounding needs (Boldo and Melquiond: f32
/// carries at least two more bits than any target at every magnitude, subnormals included).
#[inline(always)]
pub(crate) fn narrow_f64<I: Isa, T: LowpFloat>(
    isa: I,
    src: &[f64],
    dst: &mut [T],
    saturate: bool,
    stream: bool,
) {
    convert_slice!(isa, src, dst, f64, T, stream, narrow_f64_block(saturate));
}

/// Widens to f32, exactly.
#[inline(always)]
pub(crate) fn widen_f32<I: Isa, T: LowpFloat>(isa: I, src: &[T], dst: &mut [f32], stream: bool) {
    convert_slice!(isa, src, dst, T, f32, stream, widen_f32_block());
}

/// Widens to f64, exactly (through the exact f32).
#[inline(always)]
pub(crate) fn widen_f64<I: Isa, T: LowpFloat>(isa: I, src: &[T], dst: &mut [f64], stream: bool) {
    convert_slice!(isa, src, dst, T, f64, stream, widen_f64_block());
}
