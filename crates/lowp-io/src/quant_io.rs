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
use crate::layouts::{Layout, Quantized};
use crate::model::Model;
use crate::progress::Control;
use crate::quant::{self, QuantOptions, QuantStats, Scheme};
use lowp::fit::FitStats;
use lowp::prelude::LowpSliceExt;
use rayon::prelude::*;
use std::fs::File;
use std::path::Path;

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

/// Quantizes the tensor of type `from` and shape `shape` (at least 2-D) read from `input`
/// into `scheme`'s tensors, written at `outputs` (the data's, the scales', and for NVFP4 the
/// second scale's place, in the order of [`crate::layouts::parts`]).
pub fn quantize(
    input: At<'_>,
    from: FloatType,
    shape: &[usize],
    scheme: Scheme,
    opts: &QuantOptions,
    outputs: Option<[At<'_>; 3]>,
    control: Control<'_>,
) -> Result<QuantStats, Error> {
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
        tensor_scale = quant::nvfp4_tensor_scale(amax);
        if let Some(out) = &outputs {
            out[2].write(&tensor_scale.to_le_bytes(), 0)?;
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
                    ..
                } = b;
                let bytes = raw.bytes(rows * row_bytes);
                input.read(bytes, (first * row_bytes) as u64)?;
                data.resize(rows * data_row, 0);
                let scale_len = scheme.scale_bytes(rows, cols);
                scales.resize(scale_len, 0);
                let first_element = (first * cols) as u64;
                // f32 and f64 bytes are quantized where they were read (the buffer is 8-byte
                // aligned); narrower types are widened to f32 first.
                let stats = if from == FloatType::F64 {
                    let x: &[f64] = bytemuck::cast_slice(bytes);
                    quant::quantize(
                        scheme,
                        opts,
                        x,
                        cols,
                        first_element,
                        tensor_scale,
                        data,
                        scales,
                    )
                } else {
                    let x: &[f32] = if from == FloatType::F32 {
                        bytemuck::cast_slice(bytes)
                    } else {
                        widen_f32(from, bytes, values);
                        values
                    };
                    quant::quantize(
                        scheme,
                        opts,
                        x,
                        cols,
                        first_element,
                        tensor_scale,
                        data,
                        scales,
                    )
                }
                .map_err(Error::file)?;
                if let Some(out) = &outputs {
                    out[0].write(data, (first * data_row) as u64)?;
                    out[1].write(scales, scale_at as u64)?;
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
/// measure only). Decoding is the reference decoders' f32 arithmetic ([`quant::dequantize`]);
/// for an f64 target it is exact ([`quant::dequantize_f64`]). The statistics are those of
/// storing the decoded values in `to`.
pub fn dequantize(
    model: &Model,
    q: &Quantized,
    to: FloatType,
    output: Option<At<'_>>,
    control: Control<'_>,
) -> Result<FitStats, Error> {
    let data = at(model, q.data);
    let scales = at(model, q.scales);
    let cols = q.shape[q.shape.len() - 1];
    match q.layout {
        Layout::PerTensor => dequantize_per_tensor(model, q, to, output, control),
        Layout::Blocks(scheme) => {
            let data_row = scheme.data_row_bytes(cols);
            let tensor_scale = match q.scale_2 {
                Some(s2) => at(model, s2).read_f32()?,
                None => 0.0,
            };
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
                let bytes = b.input.bytes(rows * data_row);
                data.read(bytes, (first_row * data_row) as u64)?;
                b.scales.resize(scheme.scale_bytes(rows, cols), 0);
                scales.read(&mut b.scales, scale_at as u64)?;
                if to == FloatType::F64 {
                    b.wide.resize(n, 0.0);
                    quant::dequantize_f64(
                        scheme,
                        bytes,
                        &b.scales,
                        cols,
                        tensor_scale,
                        &mut b.wide,
                    )
                    .map_err(Error::file)?;
                    return Ok((Decoded::F64, bytes.len() as u64));
                }
                b.values.resize(n, 0.0);
                quant::dequantize(scheme, bytes, &b.scales, cols, tensor_scale, &mut b.values)
                    .map_err(Error::file)?;
                Ok((Decoded::F32, bytes.len() as u64))
            })
        }
    }
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

/// Decodes an FP8 weight with one F32 scale: `f32(q) * scale` in f32, as the loaders do (for
/// an f64 target the exact product).
fn dequantize_per_tensor(
    model: &Model,
    q: &Quantized,
    to: FloatType,
    output: Option<At<'_>>,
    control: Control<'_>,
) -> Result<FitStats, Error> {
    let data = at(model, q.data);
    let entry = model.entry(q.data);
    let from = FloatType::from_safetensors(entry.dtype)
        .ok_or_else(|| Error::file(format!("tensor '{}' is not FP8", entry.name)))?;
    let scale = at(model, q.scales).read_f32()?;
    let elements = (entry.end - entry.begin) as usize;
    let bands = even_bands(elements, BAND_BYTES);
    element_bands(&bands, to, output, control, |(first, n, _), b| {
        let bytes = b.input.bytes(n);
        data.read(bytes, first as u64)?;
        widen_f32(from, bytes, &mut b.values);
        if to == FloatType::F64 {
            b.wide.clear();
            b.wide
                .extend(b.values.iter().map(|&v| f64::from(v) * f64::from(scale)));
            return Ok((Decoded::F64, n as u64));
        }
        for v in b.values.iter_mut() {
            *v *= scale;
        }
        Ok((Decoded::F32, n as u64))
    })
}
