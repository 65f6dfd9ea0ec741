//! Decoding what the encoder wrote, in f32 as the loaders do and exactly in f64.

use super::element::Elem;
use super::lengths::{check_bytes, rows_of};
use super::round::widen;
use super::scale::{scale_bits, scale_factor_f64};
use crate::quant::Scheme;
use crate::quant::divisor::{SEG, pow2_f32};
use lowp::{f4e2m1fn, f8e4m3fn};

/// Decodes what [`quantize`](super::quantize) wrote into f32s, bit for bit as the reference decoders compute in
/// f32:
///
/// * fp8-block: `f32(q) * scale_inv` (DeepSeek-V3's `weight_dequant`, transformers' FP8
///   loader);
/// * mxfp8 / mxfp4: `q * 2^(s - 127)`, one correctly rounded f32 multiplication (exact unless
///   the product leaves f32's normal range; gpt-oss's `ldexp`, which runs in bf16 by default
///   and so differs only below bf16's smallest subnormal, 2^-133); `s = 255` gives NaN;
/// * nvfp4: `q * (f32(s) * scale_2)`, the product of the two scales rounded to f32 first, as
///   ModelOpt's `NVFP4QTensor.dequantize` orders it
///   (`modelopt/torch/quantization/qtensor/nvfp4_tensor.py`: `per_block_scale =
///   q_per_block_scale * per_block_quant_scale`, then `deq_data * per_block_scale`). A NaN
///   E4M3 scale (0x7F/0xFF) gives NaN.
///
/// `dst` holds `rows * cols` values; `data` and `scales` are those of these rows as
/// [`quantize`](super::quantize) takes them (for fp8-block one band of at most 128 rows). FP4 padding nibbles
/// are ignored. Returns an error naming the mismatch when a length does not fit.
pub fn dequantize(
    scheme: Scheme,
    data: &[u8],
    scales: &[u8],
    cols: usize,
    tensor_scale: f32,
    dst: &mut [f32],
) -> Result<(), String> {
    let rows = rows_of("dst", scheme, dst.len(), cols)?;
    check_bytes(scheme, rows, cols, data.len(), scales.len())?;
    let mul = |bits: u32| -> f32 {
        match scheme {
            Scheme::Fp8Block | Scheme::Fp8Channel => f32::from_bits(bits),
            Scheme::Mxfp8 | Scheme::Mxfp4 if bits == 0xff => f32::NAN,
            Scheme::Mxfp8 | Scheme::Mxfp4 => pow2_f32(bits as i32 - 127),
            Scheme::Nvfp4 => f8e4m3fn::from_bits(bits as u8).to_f32() * tensor_scale,
        }
    };
    decode(scheme, data, scales, cols, rows, dst, mul, |q, m| q * m)
}

/// The exact values of what [`quantize`](super::quantize) wrote, in f64: `q * scale_inv`, `q * 2^(s - 127)`
/// and `q * s * scale_2`, every product exact in f64 (the `x̂` of [`QuantStats::noise`](super::QuantStats::noise)).
/// E8M0 255 and a NaN E4M3 scale give NaN. Lengths as for [`dequantize`].
pub fn dequantize_f64(
    scheme: Scheme,
    data: &[u8],
    scales: &[u8],
    cols: usize,
    tensor_scale: f32,
    dst: &mut [f64],
) -> Result<(), String> {
    let rows = rows_of("dst", scheme, dst.len(), cols)?;
    check_bytes(scheme, rows, cols, data.len(), scales.len())?;
    let mul = |bits: u32| scale_factor_f64(scheme, bits, f64::from(tensor_scale));
    decode(scheme, data, scales, cols, rows, dst, mul, |q, m| {
        q as f64 * m
    })
}

/// The body of the two decoders: elements widened to f32 a segment at a time, each block's
/// values `apply(q, mul(scale bits))`.
#[allow(clippy::too_many_arguments)] // the decoders' arguments, and their two arithmetics
pub(super) fn decode<D, M: Copy>(
    scheme: Scheme,
    data: &[u8],
    scales: &[u8],
    cols: usize,
    rows: usize,
    dst: &mut [D],
    mul: impl Fn(u32) -> M,
    apply: impl Fn(f32, M) -> D,
) -> Result<(), String> {
    match scheme {
        Scheme::Fp8Block | Scheme::Fp8Channel | Scheme::Mxfp8 => {
            decode_rows::<f8e4m3fn, D, M>(scheme, data, scales, cols, rows, dst, mul, apply)
        }
        Scheme::Mxfp4 | Scheme::Nvfp4 => {
            decode_rows::<f4e2m1fn, D, M>(scheme, data, scales, cols, rows, dst, mul, apply)
        }
    }
    Ok(())
}

/// [`decode`] for element type `T`.
#[allow(clippy::too_many_arguments)] // as decode
pub(super) fn decode_rows<T: Elem, D, M: Copy>(
    scheme: Scheme,
    data: &[u8],
    scales: &[u8],
    cols: usize,
    rows: usize,
    dst: &mut [D],
    mul: impl Fn(u32) -> M,
    apply: impl Fn(f32, M) -> D,
) {
    if cols == 0 {
        return;
    }
    let bc = scheme.block_cols();
    let (drb, srb) = (scheme.data_row_bytes(cols), scheme.scale_row_bytes(cols));
    let mut elems = [T::default(); SEG];
    let mut q = [0f32; SEG];
    for (r, out) in dst.chunks_exact_mut(cols).enumerate().take(rows) {
        let drow = &data[r * drb..][..drb];
        // fp8-block's one band of scales serves every row; the others have a row each.
        let srow = if scheme == Scheme::Fp8Block {
            scales
        } else {
            &scales[r * srb..][..srb]
        };
        for (k, out) in out.chunks_mut(SEG).enumerate() {
            let c0 = k * SEG;
            let n = out.len();
            T::load(
                &drow[T::bytes(c0)..T::bytes(c0) + T::bytes(n)],
                &mut elems[..n],
            );
            widen(&elems, n, &mut q);
            for (b, (out, q)) in out.chunks_mut(bc).zip(q[..n].chunks(bc)).enumerate() {
                let m = mul(scale_bits(scheme, srow, c0 / bc + b));
                out.iter_mut().zip(q).for_each(|(y, &q)| *y = apply(q, m));
            }
        }
    }
}
