//! The conversion kernels, written once for any [`Isa`], and the loops that run them over
//! slices.

use super::isa::Isa;
use super::plan::{Below, Method, NanCode, NarrowPlan, Special, WidenPlan, same};
use crate::LowpFloat;
use crate::format::formats;

/// Rounds f32 lanes (bits) to nearest even into the plan's format; gives the codes.
///
/// Bit-identical to the scalar `round::from_f32_nearest`, lane by lane: each lane's
/// candidates (the magnitude rounded within the format's range as [`Method`] says, the
/// overflow code above it, the NaN code) are all computed and the lane's magnitude picks one;
/// then the sign goes on.
#[inline(always)]
pub(crate) fn narrow<I: Isa>(isa: I, plan: &NarrowPlan, x: I::V, saturate: bool) -> I::V {
    let s = |v| isa.splat(v);
    let abs = isa.and(x, s(0x7fff_ffff));
    let mut code = match plan.method {
        Method::TopHalf => return narrow_top_half(isa, plan, x, abs, saturate),
        Method::Float {
            emin_field,
            c_add,
            code_bias,
        } => {
            let c = isa.add(
                isa.max(isa.and(abs, s(0x7f80_0000)), s(emin_field)),
                s(c_add),
            );
            // `|x| + c` is rounded by the FPU onto the format's grid, and its bits above c's
            // count the format's quanta: the code, once the exponent is put back (see
            // `Method::Float`). Integer steps from there on: no f32 subnormal is ever made.
            let quanta = isa.sub(isa.add_f32(abs, c), c);
            isa.add(quanta, isa.sub(isa.shr(c, plan.shift), s(code_bias)))
        }
        Method::Integer => {
            let parity = if plan.parity {
                isa.and(isa.shr(abs, plan.shift), s(1))
            } else {
                s(1)
            };
            let sum = isa.add(isa.add(abs, s(plan.round_bias)), parity);
            let code = isa.sub(isa.shr(sum, plan.shift), s(plan.rebias));
            let below = isa.gt(s(plan.low), abs);
            match plan.below {
                Below::Nothing => code,
                Below::Subnormal { magic } => {
                    let sub = isa.sub(isa.add_f32(abs, s(magic)), s(magic));
                    isa.select(below, sub, code)
                }
                Below::Clamp { up_from } => {
                    let up = isa.gt(abs, s(up_from - 1));
                    isa.select(below, isa.select(up, s(1), s(0)), code)
                }
            }
        }
    };
    let over = isa.gt(abs, s(plan.overflow_after));
    let overflow = if saturate { plan.max } else { plan.overflow };
    code = isa.select(over, s(overflow), code);
    let sign = isa.shr(isa.and(x, s(0x8000_0000)), plan.sign_shift);
    if plan.signed {
        let signed = isa.or(code, sign);
        code = if plan.negative_zero {
            signed
        } else {
            isa.select(isa.eq(code, s(0)), code, signed)
        };
    }
    let nan = match plan.nan {
        NanCode::Ieee {
            canonical,
            shift,
            keep_payload,
        } => {
            let base = isa.or(sign, s(canonical));
            if keep_payload {
                isa.or(base, isa.shr(isa.and(abs, s(0x003f_ffff)), shift))
            } else {
                base
            }
        }
        NanCode::Fixed { code, signed } => {
            if signed {
                isa.or(sign, s(code))
            } else {
                s(code)
            }
        }
        // `sign` is 0 or the sign bit, so subtracting it from the sign bit flips it.
        NanCode::OppositeZero => isa.sub(s(0x8000_0000 >> plan.sign_shift), sign),
    };
    if saturate || !plan.nan_is_overflow {
        code = isa.select(isa.gt(abs, s(0x7f80_0000)), nan, code);
    }
    if !plan.signed {
        // Every negative input, -0 and -NaN included, is NaN in an unsigned format; so is zero
        // in a format without one.
        let mut bad = isa.gt(s(0), x);
        if !plan.zero {
            bad = isa.either(bad, isa.eq(abs, s(0)));
        }
        code = isa.select(bad, s(plan.unsigned_nan), code);
    }
    code
}

/// [`narrow`] for bf16, the top half of an f32: the integer trick on the whole word, sign
/// included (a carry out of the magnitude lands in the exponent, never in the sign).
#[inline(always)]
fn narrow_top_half<I: Isa>(isa: I, plan: &NarrowPlan, x: I::V, abs: I::V, saturate: bool) -> I::V {
    let s = |v| isa.splat(v);
    let parity = isa.and(isa.shr(x, 16), s(1));
    let mut code = isa.shr(isa.add(isa.add(x, s(0x7fff)), parity), 16);
    if saturate {
        let sign = isa.shr(isa.and(x, s(0x8000_0000)), 16);
        code = isa.select(
            isa.gt(abs, s(plan.overflow_after)),
            isa.or(sign, s(plan.max)),
            code,
        );
    }
    // NaN: the canonical one with the input's sign, payload dropped, as ml_dtypes has it.
    let nan = isa.or(isa.and(isa.shr(x, 16), s(0x8000)), s(0x7fc0));
    isa.select(isa.gt(abs, s(0x7f80_0000)), nan, code)
}

/// [`narrow`] on each of four vectors.
#[inline(always)]
pub(crate) fn narrow4<I: Isa>(
    isa: I,
    plan: &NarrowPlan,
    x: [I::V; 4],
    saturate: bool,
) -> [I::V; 4] {
    [
        narrow(isa, plan, x[0], saturate),
        narrow(isa, plan, x[1], saturate),
        narrow(isa, plan, x[2], saturate),
        narrow(isa, plan, x[3], saturate),
    ]
}

/// Widens lanes of codes to f32 bits, exactly.
#[inline(always)]
pub(crate) fn widen<I: Isa>(isa: I, plan: &WidenPlan, b: I::V) -> I::V {
    let s = |v| isa.splat(v);
    let mag = isa.and(b, s(plan.magnitude_mask));
    let sign = isa.shl(isa.and(b, s(plan.sign_mask)), plan.sign_shift);
    let mut bits = isa.add(isa.shl(mag, plan.shift), s(plan.rebias));
    if let Some((min_normal, quantum)) = plan.subnormal {
        let sub = isa.int_to_f32_scaled(mag, quantum);
        bits = isa.select(isa.gt(s(min_normal), mag), sub, bits);
    }
    match plan.special {
        Special::Nothing => isa.or(sign, bits),
        Special::Ieee { infinity, payload } => {
            let quiet = isa.select(isa.gt(mag, s(infinity)), s(0x0040_0000), s(0));
            let special = if payload {
                let man = isa.shl(isa.and(mag, s(infinity ^ plan.magnitude_mask)), plan.shift);
                isa.or(s(0x7f80_0000), isa.or(man, quiet))
            } else {
                isa.or(s(0x7f80_0000), quiet)
            };
            let bits = isa.select(isa.gt(mag, s(infinity - 1)), special, bits);
            isa.or(sign, bits)
        }
        Special::AllOnes => {
            let nan = isa.eq(mag, s(plan.magnitude_mask));
            isa.or(sign, isa.select(nan, s(0x7fc0_0000), bits))
        }
        Special::NegativeZero => {
            let nan = isa.eq(b, s(plan.sign_mask));
            isa.select(nan, s(0xffc0_0000), isa.or(sign, bits))
        }
        Special::E8m0 => {
            let bits = isa.shl(b, 23);
            let bits = isa.select(isa.eq(b, s(0)), s(0x0040_0000), bits);
            isa.select(isa.eq(b, s(0xff)), s(0x7fc0_0000), bits)
        }
    }
}

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
