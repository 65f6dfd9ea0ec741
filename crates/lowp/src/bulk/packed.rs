//! FP4 packed two values to a byte, as MX blocks and PyTorch's `float4_e2m1fn_x2` store them.

use super::active_path;
use crate::f4e2m1fn;

/// Values converted per stack buffer.
const CHUNK: usize = 1024;

/// Values [`pack_f4`] and [`unpack_f4`] take at a time (a fixed count, so that they run on
/// vectors).
const GROUP: usize = 32;

/// Panics unless `bytes` is exactly the packed size of `values` elements.
#[track_caller]
fn check_packed(values: usize, bytes: usize) {
    if bytes != values.div_ceil(2) {
        panic!(
            "lowp: {values} FP4 values pack into {} bytes, but the byte slice has {bytes}",
            values.div_ceil(2)
        );
    }
}

/// Packs FP4 values two to a byte: value `2i` in the low nibble of byte `i`, value `2i + 1` in
/// the high nibble (the order of the OCP MX specification and of PyTorch's
/// `float4_e2m1fn_x2`). With an odd count the last high nibble is zero (+0).
///
/// Panics unless `dst.len() == src.len().div_ceil(2)`.
///
/// ```
/// use lowp::bulk::pack_f4;
/// use lowp::f4e2m1fn;
///
/// let v = [1.0f32, -6.0, 0.5].map(f4e2m1fn::from_f32);
/// let mut bytes = [0u8; 2];
/// pack_f4(&v, &mut bytes);
/// assert_eq!(bytes, [0xF2, 0x01]); // -6 is 0xF, 1 is 0x2, 0.5 is 0x1
/// ```
#[track_caller]
pub fn pack_f4(src: &[f4e2m1fn], dst: &mut [u8]) {
    check_packed(src.len(), dst.len());
    // Whole groups of a fixed size first, which the compiler packs on vectors.
    let whole = src.len() / GROUP * GROUP;
    for (d, s) in dst
        .chunks_exact_mut(GROUP / 2)
        .zip(src[..whole].chunks_exact(GROUP))
    {
        let s: &[f4e2m1fn; GROUP] = s.try_into().expect("a whole group");
        for (i, d) in d.iter_mut().enumerate() {
            *d = s[2 * i].to_bits() | s[2 * i + 1].to_bits() << 4;
        }
    }
    let (src, dst) = (&src[whole..], &mut dst[whole / 2..]);
    let pairs = src.chunks_exact(2);
    let last = pairs.remainder().first().map(|v| v.to_bits());
    for (d, p) in dst.iter_mut().zip(pairs) {
        *d = p[0].to_bits() | p[1].to_bits() << 4;
    }
    if let Some(v) = last {
        dst[src.len() / 2] = v;
    }
}

/// Unpacks bytes of two FP4 values each (low nibble first) into `dst`; with an odd
/// `dst.len()` the last byte's high nibble is ignored.
///
/// Panics unless `src.len() == dst.len().div_ceil(2)`.
#[track_caller]
pub fn unpack_f4(src: &[u8], dst: &mut [f4e2m1fn]) {
    check_packed(dst.len(), src.len());
    // Whole groups of a fixed size first, which the compiler unpacks on vectors.
    let whole = dst.len() / GROUP * GROUP;
    for (d, s) in dst[..whole]
        .chunks_exact_mut(GROUP)
        .zip(src.chunks_exact(GROUP / 2))
    {
        let s: &[u8; GROUP / 2] = s.try_into().expect("a whole group");
        let nibbles: [u8; GROUP] = core::array::from_fn(|i| (s[i / 2] >> (4 * (i % 2))) & 0xF);
        for (d, n) in d.iter_mut().zip(nibbles) {
            *d = f4e2m1fn::from_bits(n);
        }
    }
    let (src, dst) = (&src[whole / 2..], &mut dst[whole..]);
    let mut pairs = dst.chunks_exact_mut(2);
    for (p, &b) in (&mut pairs).zip(src) {
        p[0] = f4e2m1fn::from_bits(b & 0xF);
        p[1] = f4e2m1fn::from_bits(b >> 4);
    }
    if let [last] = pairs.into_remainder() {
        *last = f4e2m1fn::from_bits(src[src.len() - 1] & 0xF);
    }
}

/// Rounds f32s to FP4 (nearest even; FP4 saturates overflow and ±infinity to ±6 and turns NaN
/// into +0, as [`f4e2m1fn::from_f32`] does) and packs them two to a byte, as [`pack_f4`].
///
/// Panics unless `dst.len() == src.len().div_ceil(2)`.
///
/// ```
/// use lowp::bulk::{pack_f4_from_f32, unpack_f4_to_f32};
///
/// let x = [0.3f32, 2.6, -100.0];
/// let mut packed = [0u8; 2];
/// pack_f4_from_f32(&x, &mut packed);
/// let mut back = [0f32; 3];
/// unpack_f4_to_f32(&packed, &mut back);
/// assert_eq!(back, [0.5, 3.0, -6.0]);
/// ```
#[track_caller]
pub fn pack_f4_from_f32(src: &[f32], dst: &mut [u8]) {
    check_packed(src.len(), dst.len());
    let path = active_path();
    let mut values = [f4e2m1fn::ZERO; CHUNK];
    for (s, d) in src.chunks(CHUNK).zip(dst.chunks_mut(CHUNK / 2)) {
        let values = &mut values[..s.len()];
        super::narrow_f32(path, s, values, false);
        pack_f4(values, d);
    }
}

/// Unpacks FP4 values (two to a byte, low nibble first) into f32s, exactly.
///
/// Panics unless `src.len() == dst.len().div_ceil(2)`.
#[track_caller]
pub fn unpack_f4_to_f32(src: &[u8], dst: &mut [f32]) {
    check_packed(dst.len(), src.len());
    let path = active_path();
    let mut values = [f4e2m1fn::ZERO; CHUNK];
    for (s, d) in src.chunks(CHUNK / 2).zip(dst.chunks_mut(CHUNK)) {
        let values = &mut values[..d.len()];
        unpack_f4(s, values);
        super::widen_f32(path, values, d);
    }
}

/// Rounds f32s to FP4 and packs them two to a byte (see [`pack_f4_from_f32`]), in a new
/// vector of `src.len().div_ceil(2)` bytes.
#[cfg(feature = "alloc")]
pub fn pack_f4_vec(src: &[f32]) -> alloc::vec::Vec<u8> {
    let mut v = alloc::vec![0; src.len().div_ceil(2)];
    pack_f4_from_f32(src, &mut v);
    v
}

/// The first `len` FP4 values of packed bytes, as f32s, in a new vector (see
/// [`unpack_f4_to_f32`]).
///
/// Panics unless `src.len() == len.div_ceil(2)`.
#[cfg(feature = "alloc")]
#[track_caller]
pub fn unpack_f4_vec(src: &[u8], len: usize) -> alloc::vec::Vec<f32> {
    let mut v = alloc::vec![0.0; len];
    unpack_f4_to_f32(src, &mut v);
    v
}
