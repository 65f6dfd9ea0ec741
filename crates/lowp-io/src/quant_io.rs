//! Block-quantizing one tensor of a file into its layout's tensors, and decoding one back,
//! band by band on all threads.
//!
//! A band is a run of whole rows that no block crosses: for the row-wise schemes (MX, NVFP4)
//! about a megabyte of rows, for `fp8-block` one band of 128 rows of one matrix (its blocks
//! are 128 rows tall). Bands are independent, so each thread reads its band with a positioned
//! read, quantizes it and writes the elements and the scales at their places in the output,
//! which the output header fixed in advance. NVFP4's per-tensor scale needs the tensor's
//! largest magnitude first: one more reading pass.

use crate::error::Error;
use crate::files::{self, Block};
use crate::kernel::{self, FloatType, Rounding};
use crate::layouts::{Quantized, Scaling, Second};
use crate::model::Model;
use crate::progress::Control;
use crate::quant::{self, QuantOptions, QuantStats, ScaleCheck, Scheme};
use lowp::fit::FitStats;
use lowp::prelude::LowpSliceExt;
use rayon::prelude::*;
use safetensors::Dtype;
use std::fs::File;
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

/// Input bytes per band of the row-wise schemes, as the plain pipeline's blocks.
const BAND_BYTES: usize = 1 << 20;

thread_local! {
    /// Each thread's buffers: input bytes, values, element data, scales.
    static BUFFERS: std::cell::RefCell<Buffers> = std::cell::RefCell::default();
}

/// A thread's reusable buffers.
#[derive(Default)]
struct Buffers {
    input: Block,
    values: Vec<f32>,
    wide: Vec<f64>,
    swapped: Vec<f64>,
    data: Vec<u8>,
    scales: Vec<u8>,
    output: Block,
}

/// A file and its path, for errors.
#[derive(Clone, Copy)]
pub struct At<'a> {
    /// The open file.
    pub file: &'a File,
    /// Its path.
    pub path: &'a Path,
    /// The offset of the tensor's first byte.
    pub offset: u64,
}

impl At<'_> {
    /// Reads `buf.len()` bytes from `at` bytes into the tensor.
    pub fn read(&self, buf: &mut [u8], at: u64) -> Result<(), Error> {
        files::read_at(self.file, buf, self.offset + at)
            .map_err(|e| files::read_error(self.path, &e))
    }
    /// Reads the little-endian f32 at the tensor's start (a scale stored as a scalar).
    pub fn read_f32(&self) -> Result<f32, Error> {
        let mut four = [0u8; 4];
        self.read(&mut four, 0)?;
        Ok(f32::from_le_bytes(four))
    }

    /// Writes `buf` at `at` bytes into the tensor.
    pub fn write(&self, buf: &[u8], at: u64) -> Result<(), Error> {
        files::write_at(self.file, buf, self.offset + at)
            .map_err(|e| files::write_error(self.path, &e))
    }
}

/// The bands of a `[..., R, C]` tensor under `scheme`: (first row, rows, scale byte offset).
fn bands(scheme: Scheme, shape: &[usize], row_bytes: usize) -> Vec<(usize, usize, usize)> {
    let cols = shape[shape.len() - 1];
    let scale_bytes = scheme.scale_row_bytes(cols);
    if scheme == Scheme::Fp8Block {
        let rows = shape[shape.len() - 2];
        let matrices: usize = shape[..shape.len() - 2].iter().product();
        let per_matrix = rows.div_ceil(128);
        let mut out = Vec::with_capacity(matrices * per_matrix);
        for m in 0..matrices {
            for j in 0..per_matrix {
                let first = j * 128;
                out.push((
                    m * rows + first,
                    (rows - first).min(128),
                    (m * per_matrix + j) * scale_bytes,
                ));
            }
        }
        return out;
    }
    let rows: usize = shape[..shape.len() - 1].iter().product();
    let per_band = (BAND_BYTES / row_bytes.max(1)).max(1);
    (0..rows.div_ceil(per_band))
        .map(|i| {
            let first = i * per_band;
            (first, (rows - first).min(per_band), first * scale_bytes)
        })
        .collect()
}

/// Widens `bytes` of `from` elements (machine byte order), a type narrower than f32, into f32
/// values, exactly.
fn widen_f32(from: FloatType, bytes: &[u8], out: &mut Vec<f32>) {
    let n = bytes.len() / from.size();
    out.resize(n, 0.0);
    match from {
        FloatType::F16 => bytemuck::cast_slice::<u8, lowp::f16>(bytes).convert_to_f32_slice(out),
        FloatType::BF16 => bytemuck::cast_slice::<u8, lowp::bf16>(bytes).convert_to_f32_slice(out),
        FloatType::F8E4M3FN => {
            bytemuck::cast_slice::<u8, lowp::f8e4m3fn>(bytes).convert_to_f32_slice(out)
        }
        FloatType::F8E5M2 => {
            bytemuck::cast_slice::<u8, lowp::f8e5m2>(bytes).convert_to_f32_slice(out)
        }
        FloatType::F32 | FloatType::F64 => unreachable!("quantized where they were read"),
    }
}

/// How a weight is written in its layout, besides its scheme: what [`quantize`] and
/// [`quantize_transposed`] need of [`crate::layouts`].
#[derive(Clone, Copy, Debug)]
pub struct Encoding {
    /// The scheme.
    pub scheme: Scheme,
    /// Element rounding, scale choice and the type of fp8 scales.
    pub opts: QuantOptions,
    /// The dtype the scales are stored as: the codec's bytes (E8M0, E4M3, little-endian f32),
    /// or for fp8 scales of another float type, those f32s converted (exactly: the codec chose
    /// them in that type).
    pub scale_dtype: Dtype,
    /// How NVFP4's second scale is stored.
    pub second: Second,
}

impl Encoding {
    /// NVFP4's per-tensor `scale_2` for a tensor of largest magnitude `amax`: ModelOpt's
    /// `amax / (448 * 6)` ([`quant::nvfp4_tensor_scale`]), or for a divided global scale the
    /// power of two whose inverse is exact ([`quant::nvfp4_pow2_tensor_scale`]).
    pub fn tensor_scale(&self, amax: f64) -> f32 {
        match self.second {
            Second::Multiply => quant::nvfp4_tensor_scale(amax),
            Second::Divide => quant::nvfp4_pow2_tensor_scale(amax),
        }
    }

    /// The bytes of the second scale as stored: `scale_2`, or its inverse.
    fn second_bytes(&self, scale_2: f32) -> [u8; 4] {
        match self.second {
            Second::Multiply => scale_2.to_le_bytes(),
            Second::Divide => (1.0 / scale_2).to_le_bytes(),
        }
    }

    /// Where the codec's scale byte `at` goes in the stored scales: fp8 scales of 2 bytes
    /// take half the room of the codec's f32s.
    fn stored_offset(&self, at: usize) -> usize {
        if self.scheme.float_scales() && self.scale_dtype != Dtype::F32 {
            at / 2
        } else {
            at
        }
    }

    /// The scale bytes as stored, from the codec's.
    fn stored_scales<'b>(&self, codec: &'b mut [u8], out: &'b mut Block) -> &'b [u8] {
        if !self.scheme.float_scales() || self.scale_dtype == Dtype::F32 {
            return codec;
        }
        let n = codec.len() / 4;
        let bytes = out.bytes(2 * n);
        for (o, c) in bytes.chunks_exact_mut(2).zip(codec.chunks_exact(4)) {
            let v = f32::from_le_bytes([c[0], c[1], c[2], c[3]]);
            let bits = match self.scale_dtype {
                Dtype::BF16 => lowp::bf16::from_f32(v).to_bits(),
                _ => lowp::f16::from_f32(v).to_bits(),
            };
            o.copy_from_slice(&bits.to_le_bytes());
        }
        bytes
    }
}

/// Quantizes the tensor of type `from` and shape `shape` (at least 2-D) read from `input`
/// into its layout's tensors, written at `outputs` (the data's, the scales', and for NVFP4 the
/// second scale's place, in the order of [`crate::layouts::Placement::parts`]).
pub fn quantize(
    input: At<'_>,
    from: FloatType,
    shape: &[usize],
    encoding: &Encoding,
    outputs: Option<[At<'_>; 3]>,
    control: Control<'_>,
) -> Result<QuantStats, Error> {
    let scheme = encoding.scheme;
    let cols = shape[shape.len() - 1];
    let row_bytes = cols * from.size();
    let bands = bands(scheme, shape, row_bytes);
    let mut tensor_scale = 0.0f32;
    if scheme == Scheme::Nvfp4 {
        let amax = bands
            .par_iter()
            .map(|&(first, rows, _)| {
                BUFFERS.with_borrow_mut(|b| {
                    control.check()?;
                    let bytes = b.input.bytes(rows * row_bytes);
                    input.read(bytes, (first * row_bytes) as u64)?;
                    Ok(kernel::block_amax(from, bytes))
                })
            })
            .try_reduce(|| 0.0, |a: f64, b| Ok(a.max(b)))?;
        tensor_scale = encoding.tensor_scale(amax);
        if let Some(out) = &outputs {
            out[2].write(&encoding.second_bytes(tensor_scale), 0)?;
        }
    }
    let data_row = scheme.data_row_bytes(cols);
    bands
        .par_iter()
        .map(|&(first, rows, scale_at)| {
            BUFFERS.with_borrow_mut(|b| {
                control.check()?;
                let Buffers {
                    input: raw,
                    values,
                    data,
                    scales,
                    output,
                    ..
                } = b;
                let bytes = raw.bytes(rows * row_bytes);
                input.read(bytes, (first * row_bytes) as u64)?;
                data.resize(rows * data_row, 0);
                let scale_len = scheme.scale_bytes(rows, cols);
                scales.resize(scale_len, 0);
                let first_element = (first * cols) as u64;
                let chunk = Chunk {
                    cols,
                    first: first_element,
                    tensor_scale,
                };
                let stats = quantize_values(encoding, from, bytes, values, chunk, data, scales)?;
                if let Some(out) = &outputs {
                    out[0].write(data, (first * data_row) as u64)?;
                    let stored = encoding.stored_scales(scales, output);
                    out[1].write(stored, encoding.stored_offset(scale_at) as u64)?;
                }
                control.add(bytes.len() as u64);
                Ok(stats)
            })
        })
        .try_reduce(QuantStats::default, |mut a, b| {
            a.merge(&b);
            Ok(a)
        })
}

/// Where a chunk of rows lies in its tensor.
#[derive(Clone, Copy)]
struct Chunk {
    /// Columns of a row.
    cols: usize,
    /// The index of its first element in the tensor (for stochastic rounding).
    first: u64,
    /// NVFP4's `scale_2`.
    tensor_scale: f32,
}

/// Quantizes the values in `bytes` (of type `from`, whole rows): f32 and f64 where they were
/// read (the buffer is 8-byte aligned), narrower types widened into `values` first.
fn quantize_values(
    encoding: &Encoding,
    from: FloatType,
    bytes: &[u8],
    values: &mut Vec<f32>,
    chunk: Chunk,
    data: &mut [u8],
    scales: &mut [u8],
) -> Result<QuantStats, Error> {
    let (scheme, opts) = (encoding.scheme, &encoding.opts);
    let Chunk {
        cols,
        first,
        tensor_scale,
    } = chunk;
    if from == FloatType::F64 {
        let x: &[f64] = bytemuck::cast_slice(bytes);
        return quant::quantize(scheme, opts, x, cols, first, tensor_scale, data, scales)
            .map_err(Error::file);
    }
    let x: &[f32] = if from == FloatType::F32 {
        bytemuck::cast_slice(bytes)
    } else {
        widen_f32(from, bytes, values);
        values
    };
    quant::quantize(scheme, opts, x, cols, first, tensor_scale, data, scales).map_err(Error::file)
}

/// Quantizes a stack of matrices `[E, in, out]` (gpt-oss's experts) stored transposed, each as
/// `[out, in]` rows: MXFP4 blocks along the input. One matrix is read whole per thread,
/// transposed in memory and quantized; matrices run in parallel.
pub fn quantize_transposed(
    input: At<'_>,
    from: FloatType,
    shape: &[usize],
    encoding: &Encoding,
    outputs: Option<[At<'_>; 3]>,
    control: Control<'_>,
) -> Result<QuantStats, Error> {
    let scheme = encoding.scheme;
    let n = shape.len();
    let (ins, outs) = (shape[n - 2], shape[n - 1]);
    let matrices: usize = shape[..n - 2].iter().product();
    let matrix_bytes = ins * outs * from.size();
    let (data_rows, scale_rows) = (scheme.data_row_bytes(ins), scheme.scale_row_bytes(ins));
    (0..matrices)
        .into_par_iter()
        .map(|m| {
            BUFFERS.with_borrow_mut(|b| {
                control.check()?;
                let Buffers {
                    input: raw,
                    values,
                    data,
                    scales,
                    output,
                    ..
                } = b;
                let bytes = raw.bytes(matrix_bytes);
                input.read(bytes, (m * matrix_bytes) as u64)?;
                let t = output.bytes(matrix_bytes);
                transpose(bytes, t, ins, outs, from.size());
                data.resize(outs * data_rows, 0);
                scales.resize(scheme.scale_bytes(outs, ins), 0);
                let chunk = Chunk {
                    cols: ins,
                    first: (m * ins * outs) as u64,
                    tensor_scale: 0.0,
                };
                let stats = quantize_values(encoding, from, t, values, chunk, data, scales)?;
                if let Some(out) = &outputs {
                    out[0].write(data, (m * outs * data_rows) as u64)?;
                    out[1].write(scales, (m * outs * scale_rows) as u64)?;
                }
                control.add(matrix_bytes as u64);
                Ok(stats)
            })
        })
        .try_reduce(QuantStats::default, |mut a, b| {
            a.merge(&b);
            Ok(a)
        })
}

/// Transposes the `rows` x `cols` matrix `src` of `width`-byte elements into `dst` (`cols` x
/// `rows`).
fn transpose(src: &[u8], dst: &mut [u8], rows: usize, cols: usize, width: usize) {
    for (r, row) in src.chunks_exact(cols * width).enumerate() {
        for (c, e) in row.chunks_exact(width).enumerate() {
            let at = (c * rows + r) * width;
            dst[at..at + width].copy_from_slice(e);
        }
    }
}

/// Where the data of the tensor `r` of `model` is.
pub fn at<'m>(model: &'m Model, r: crate::model::TensorRef) -> At<'m> {
    let shard = &model.shards[r.shard];
    At {
        file: &shard.file,
        path: &shard.path,
        offset: shard.header.data_start + model.entry(r).begin,
    }
}

/// Decodes the quantized weight `q` of `model` and stores it as `to` at `output` (`None`:
/// measure only), with the model's own name and shape (gpt-oss's transposed experts back in
/// `[E, in, out]`).
///
/// Each element is the value the layout defines, rounded once to `to`: `q * scale` (fp8, MX),
/// `q * s * scale_2` (ModelOpt's NVFP4) are products exact in f64 ([`quant::dequantize_f64`]),
/// rounded to `to` from there. compressed-tensors' NVFP4, `q * s / global_scale`, is the
/// f64 quotient of the exact product, rounded to `to`: correctly rounded too, since the
/// quotient of a number of at most 8 significant bits by an f32 cannot fall within 2^-53 of a
/// tie of `to` (25 bits at most) without being that tie (the lemma of
/// [`crate::quant::codec`]'s documentation). The statistics are those of storing the decoded
/// values in `to` (a NaN or infinity decoded counts as in any conversion), with what checking
/// every scale found: [`quant::check_scales`] for each block, and for a per-tensor scale
/// one block judged the same way (bad when NaN, ±infinity, negative, or zero while some
/// element is not).
pub fn dequantize(
    model: &Model,
    q: &Quantized,
    to: FloatType,
    output: Option<At<'_>>,
    control: Control<'_>,
) -> Result<(FitStats, ScaleCheck), Error> {
    let Scaling::Blocks(scheme) = q.scaling else {
        return dequantize_per_tensor(model, q, to, output, control);
    };
    let decoder = Decoder::new(model, q, scheme)?;
    let stats = dequantize_blocks(&decoder, q, to, output, control)?;
    Ok((stats, decoder.checked()))
}

/// [`dequantize`] of a block-scaled weight, its scales checked into the decoder.
fn dequantize_blocks(
    decoder: &Decoder<'_>,
    q: &Quantized,
    to: FloatType,
    output: Option<At<'_>>,
    control: Control<'_>,
) -> Result<FitStats, Error> {
    let scheme = decoder.scheme;
    if q.transposed {
        return decoder.transposed(to, output, control);
    }
    let cols = q.shape[q.shape.len() - 1];
    let data_row = scheme.data_row_bytes(cols);
    // The scheme's bands of rows, as ranges of elements of the decoded tensor.
    let bands: Vec<Band> = bands(scheme, &q.shape, data_row)
        .into_iter()
        .map(|(first, rows, scale_at)| (first * cols, rows * cols, scale_at))
        .collect();
    element_bands(&bands, to, output, control, |(first, n, scale_at), b| {
        // Rows of no columns (a malformed but consistent header) decode to nothing.
        let (first_row, rows) = (
            first.checked_div(cols).unwrap_or(0),
            n.checked_div(cols).unwrap_or(0),
        );
        b.wide.resize(n, 0.0);
        let read = decoder.rows(first_row, rows, cols, scale_at, b)?;
        Ok((Decoded::F64, read))
    })
}

/// What decoding a block-scaled weight reads.
struct Decoder<'a> {
    scheme: Scheme,
    data: At<'a>,
    scales: At<'a>,
    /// The stored dtype of the scales.
    scale_dtype: Dtype,
    /// What the codec multiplies the block scales by (`scale_2`, or 1).
    multiply: f32,
    /// What the products are divided by (compressed-tensors' global scale), if anything.
    divide: Option<f64>,
    /// What nvfp4's block scales are multiplied by in effect, for checking them: `scale_2`,
    /// or the inverse of the divided global scale (1 without a second scale).
    second: f64,
    /// The blocks whose scales were checked so far ([`quant::check_scales`]), added to by
    /// every thread.
    blocks: AtomicU64,
    /// Those of them with a bad scale.
    bad: AtomicU64,
    /// The weight's shape in the model.
    shape: &'a [usize],
}

impl<'a> Decoder<'a> {
    /// The decoder of `q`, its second scale read.
    fn new(model: &'a Model, q: &'a Quantized, scheme: Scheme) -> Result<Decoder<'a>, Error> {
        let second = match q.scale_2 {
            Some(s2) => Some(at(model, s2).read_f32()?),
            None => None,
        };
        let (multiply, divide) = match (second, q.second) {
            (None, _) => (0.0, None),
            (Some(s), Second::Multiply) => (s, None),
            (Some(s), Second::Divide) => (1.0, Some(f64::from(s))),
        };
        // A block scale times `1 / global_scale` is NaN, infinite, negative or zero exactly
        // when the quotient the decoder takes is (1 / 0 is infinity, 1 / infinity zero).
        let checked_second = match (second, q.second) {
            (None, _) => 1.0,
            (Some(s), Second::Multiply) => f64::from(s),
            (Some(s), Second::Divide) => 1.0 / f64::from(s),
        };
        Ok(Decoder {
            scheme,
            data: at(model, q.data),
            scales: at(model, q.scales),
            scale_dtype: model.entry(q.scales).dtype,
            multiply,
            divide,
            second: checked_second,
            blocks: AtomicU64::new(0),
            bad: AtomicU64::new(0),
            shape: &q.shape,
        })
    }

    /// What checking the scales found, over every block decoded so far.
    fn checked(&self) -> ScaleCheck {
        ScaleCheck {
            blocks: self.blocks.load(Ordering::Relaxed),
            bad: self.bad.load(Ordering::Relaxed),
        }
    }

    /// Decodes `rows` stored rows of `cols` columns from stored row `first_row` (scales from
    /// the codec's byte `scale_at`) into `b.wide`, exactly, and adds what checking their
    /// scales found to the decoder's counts; gives the bytes read.
    fn rows(
        &self,
        first_row: usize,
        rows: usize,
        cols: usize,
        scale_at: usize,
        b: &mut Buffers,
    ) -> Result<u64, Error> {
        let scheme = self.scheme;
        let data_row = scheme.data_row_bytes(cols);
        let bytes = b.input.bytes(rows * data_row);
        self.data.read(bytes, (first_row * data_row) as u64)?;
        let codec_len = scheme.scale_bytes(rows, cols);
        b.scales.resize(codec_len, 0);
        read_scales(
            &self.scales,
            self.scale_dtype,
            scheme,
            scale_at,
            &mut b.scales,
            &mut b.output,
        )?;
        let check = quant::check_scales(scheme, bytes, &b.scales, rows, cols, self.second)
            .map_err(Error::file)?;
        self.blocks.fetch_add(check.blocks, Ordering::Relaxed);
        self.bad.fetch_add(check.bad, Ordering::Relaxed);
        let n = rows * cols;
        quant::dequantize_f64(
            scheme,
            bytes,
            &b.scales,
            cols,
            self.multiply,
            &mut b.wide[..n],
        )
        .map_err(Error::file)?;
        if let Some(d) = self.divide {
            b.wide[..n].iter_mut().for_each(|v| *v /= d);
        }
        Ok((bytes.len() + codec_len) as u64)
    }

    /// Decodes a stack of matrices stored transposed (`[E, out, in]` for the model's `[E, in,
    /// out]`), one matrix per thread, and stores them as `to` at `output`.
    fn transposed(
        &self,
        to: FloatType,
        output: Option<At<'_>>,
        control: Control<'_>,
    ) -> Result<FitStats, Error> {
        let n = self.shape.len();
        let (ins, outs) = (self.shape[n - 2], self.shape[n - 1]);
        let matrices: usize = self.shape[..n - 2].iter().product();
        let scale_row = self.scheme.scale_row_bytes(ins);
        (0..matrices)
            .into_par_iter()
            .map(|m| {
                BUFFERS.with_borrow_mut(|b| {
                    control.check()?;
                    let elements = ins * outs;
                    b.wide.resize(elements, 0.0);
                    let read = self.rows(m * outs, outs, ins, m * outs * scale_row, b)?;
                    // [out, in] to [in, out].
                    let t = &mut b.swapped;
                    t.resize(elements, 0.0);
                    for (o, row) in b.wide[..elements].chunks_exact(ins).enumerate() {
                        for (i, &v) in row.iter().enumerate() {
                            t[i * outs + o] = v;
                        }
                    }
                    let out = b.output.bytes(elements * to.size());
                    let stats = kernel::convert_block(
                        FloatType::F64,
                        to,
                        bytemuck::cast_slice(&t[..]),
                        out,
                        Rounding::NEAREST,
                    );
                    if let Some(o) = &output {
                        o.write(out, (m * elements * to.size()) as u64)?;
                    }
                    control.add(read);
                    Ok(stats)
                })
            })
            .try_reduce(FitStats::default, |mut a, b| {
                a.merge(&b);
                Ok(a)
            })
    }
}

/// Reads the scales from the codec's byte `at` into `codec` (its length is what to read), as
/// the codec takes them: fp8 scales stored as bf16 or f16 widened to little-endian f32s.
fn read_scales(
    scales: &At<'_>,
    dtype: Dtype,
    scheme: Scheme,
    at: usize,
    codec: &mut [u8],
    scratch: &mut Block,
) -> Result<(), Error> {
    let width = match dtype {
        Dtype::BF16 | Dtype::F16 if scheme.float_scales() => 2,
        _ => return scales.read(codec, at as u64),
    };
    let n = codec.len() / 4;
    let stored = scratch.bytes(n * width);
    scales.read(stored, (at / 4 * width) as u64)?;
    for (c, s) in codec.chunks_exact_mut(4).zip(stored.chunks_exact(2)) {
        let bits = u16::from_le_bytes([s[0], s[1]]);
        let v = if dtype == Dtype::BF16 {
            lowp::bf16::from_bits(bits).to_f32()
        } else {
            lowp::f16::from_bits(bits).to_f32()
        };
        c.copy_from_slice(&v.to_le_bytes());
    }
    Ok(())
}

/// Which buffer a band's decoded values are in.
enum Decoded {
    /// `values`, f32.
    F32,
    /// `wide`, f64 (exact products for an f64 target).
    F64,
}

/// A band of a decoded tensor: its first element, its element count, and the offset of its
/// scales (block-scaled layouts; 0 otherwise).
type Band = (usize, usize, usize);

/// `elements` elements in bands of `per_band` (no scales).
fn even_bands(elements: usize, per_band: usize) -> Vec<Band> {
    (0..elements.div_ceil(per_band))
        .map(|i| {
            let first = i * per_band;
            (first, (elements - first).min(per_band), 0)
        })
        .collect()
}

/// Decodes a tensor band by band on all threads: `decode` reads a band and leaves its values
/// in the thread's buffers, saying which, and how many input bytes it read; each band is then
/// stored as `to` at `output` (`None`: measured only).
fn element_bands(
    bands: &[Band],
    to: FloatType,
    output: Option<At<'_>>,
    control: Control<'_>,
    decode: impl Fn(Band, &mut Buffers) -> Result<(Decoded, u64), Error> + Sync,
) -> Result<FitStats, Error> {
    bands
        .par_iter()
        .map(|&band| {
            BUFFERS.with_borrow_mut(|b| {
                control.check()?;
                let (first, n, _) = band;
                let (decoded, read) = decode(band, b)?;
                let (from, values): (FloatType, &[u8]) = match decoded {
                    Decoded::F32 => (FloatType::F32, bytemuck::cast_slice(&b.values)),
                    Decoded::F64 => (FloatType::F64, bytemuck::cast_slice(&b.wide)),
                };
                let out = b.output.bytes(n * to.size());
                let stats = kernel::convert_block(from, to, values, out, Rounding::NEAREST);
                if let Some(o) = &output {
                    o.write(out, (first * to.size()) as u64)?;
                }
                control.add(read);
                Ok(stats)
            })
        })
        .try_reduce(FitStats::default, |mut a, b| {
            a.merge(&b);
            Ok(a)
        })
}

/// Decodes the tensor `r` of `model`, of the read-only dtype `packed`, into `to` at `output`
/// (`None`: measure only): every element widened exactly to f32, then stored as `to`.
pub fn decode_packed(
    model: &Model,
    r: crate::model::TensorRef,
    packed: crate::packed::Packed,
    to: FloatType,
    output: Option<At<'_>>,
    control: Control<'_>,
) -> Result<FitStats, Error> {
    let data = at(model, r);
    let elements: usize = model.entry(r).shape.iter().product();
    let per_band = BAND_BYTES / packed.group() * packed.group();
    let bands = even_bands(elements, per_band);
    element_bands(&bands, to, output, control, |(first, n, _), b| {
        let begin = first * packed.bits() / 8;
        let end = ((first + n) * packed.bits()).div_ceil(8);
        let bytes = b.input.bytes(end - begin);
        data.read(bytes, begin as u64)?;
        b.values.resize(n, 0.0);
        packed.decode(bytes, &mut b.values);
        Ok((Decoded::F32, (end - begin) as u64))
    })
}

/// Decodes an FP8 weight with one float scale: the exact product `q * scale` in f64, rounded
/// once to `to`. The scale is checked as one block of [`quant::check_scales`]: bad when NaN,
/// ±infinity or negative, or zero while some element is not ±0 (a NaN element included).
fn dequantize_per_tensor(
    model: &Model,
    q: &Quantized,
    to: FloatType,
    output: Option<At<'_>>,
    control: Control<'_>,
) -> Result<(FitStats, ScaleCheck), Error> {
    let data = at(model, q.data);
    let entry = model.entry(q.data);
    let from = FloatType::from_safetensors(entry.dtype)
        .ok_or_else(|| Error::file(format!("tensor '{}' is not FP8", entry.name)))?;
    let scale = read_float_scalar(model, q.scales)?;
    let elements = (entry.end - entry.begin) as usize;
    let bands = even_bands(elements, BAND_BYTES);
    // Both FP8 formats spell ±0 with every bit but the sign clear.
    let nonzero = AtomicBool::new(false);
    let stats = element_bands(&bands, to, output, control, |(first, n, _), b| {
        let bytes = b.input.bytes(n);
        data.read(bytes, first as u64)?;
        if scale == 0.0 && bytes.iter().any(|e| e & 0x7f != 0) {
            nonzero.store(true, Ordering::Relaxed);
        }
        widen_f32(from, bytes, &mut b.values);
        b.wide.clear();
        b.wide
            .extend(b.values.iter().map(|&v| f64::from(v) * scale));
        Ok((Decoded::F64, n as u64))
    })?;
    let bad = !scale.is_finite() || scale < 0.0 || (scale == 0.0 && nonzero.into_inner());
    let check = ScaleCheck {
        blocks: 1,
        bad: u64::from(bad),
    };
    Ok((stats, check))
}

/// The one value of a float tensor (F32, BF16 or F16) of `model`.
fn read_float_scalar(model: &Model, r: crate::model::TensorRef) -> Result<f64, Error> {
    let place = at(model, r);
    Ok(match model.entry(r).dtype {
        Dtype::BF16 | Dtype::F16 => {
            let mut two = [0u8; 2];
            place.read(&mut two, 0)?;
            let bits = u16::from_le_bytes(two);
            if model.entry(r).dtype == Dtype::BF16 {
                lowp::bf16::from_bits(bits).to_f64()
            } else {
                lowp::f16::from_bits(bits).to_f64()
            }
        }
        _ => f64::from(place.read_f32()?),
    })
}
