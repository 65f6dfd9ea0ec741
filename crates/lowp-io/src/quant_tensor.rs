//! Block-quantizing one tensor of a file into its layout's tensors, and decoding one back,
//! tile by tile on all threads.
//!
//! A tile ([`crate::tiles`]) is a rectangle of the tensor's rows that no block crosses and that
//! fits a thread's buffers: about a megabyte of whole rows for the row-wise schemes (MX,
//! NVFP4, fp8-channel), one band of 128 rows for `fp8-block` (its blocks are 128 rows tall),
//! and where a row or a band is longer than that, a part of it cut at block boundaries. Tiles
//! are independent, so each thread reads its tile with positioned reads (one per row when the
//! tile cuts the rows), quantizes it and writes the elements and the scales at their places in
//! the output, which the output header fixed in advance. Memory is thus a few tiles per thread
//! whatever the tensor's shape. NVFP4's per-tensor scale needs the tensor's largest magnitude
//! first: one more reading pass; fp8-channel's one scale per row, for rows longer than a tile,
//! one or two more passes over the row ([`quant::LongRow`]).

use crate::block_convert::{self, Rounding};
use crate::error::Error;
use crate::files::{self, Block};
use crate::float_type::FloatType;
use crate::layouts::{Quantized, Scaling, Second};
use crate::model::Model;
use crate::progress::Control;
use crate::quant::{self, Place, QuantOptions, QuantStats, ScaleCheck, Scheme};
use crate::tiles::{self, Budget, Tile};
use lowp::fit::FitStats;
use lowp::prelude::LowpSliceExt;
use rayon::prelude::*;
use safetensors::Dtype;
use std::fs::File;
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

/// Input bytes per tile of the row-wise schemes, as the plain pipeline's blocks.
const TILE_BYTES: usize = 1 << 20;

/// Bytes of an fp8-block band of 128 rows read whole; a wider band is read in tiles of whole
/// blocks, so that a thread's buffers stay within a few of these whatever the rows' length.
const FP8_BLOCK_BAND_BYTES: usize = 8 << 20;

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
    transposed: Block,
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

/// The tiles a thread quantizes from a source of `unit`-byte elements.
fn quantize_budget(unit: usize) -> Budget {
    Budget {
        unit,
        bytes: TILE_BYTES,
        band_bytes: FP8_BLOCK_BAND_BYTES,
    }
}

/// The tiles a thread decodes: its values are f64s.
const DECODE_BUDGET: Budget = Budget {
    unit: 8,
    bytes: 4 * TILE_BYTES,
    band_bytes: FP8_BLOCK_BAND_BYTES,
};

/// Reads the `tile` of a tensor of rows of `cols` elements of `size` bytes into `buf`, row
/// after row: one read for whole rows, one per row otherwise.
fn read_tile(
    input: &At<'_>,
    tile: Tile,
    cols: usize,
    size: usize,
    buf: &mut [u8],
) -> Result<(), Error> {
    if tile.cols == cols || tile.rows <= 1 {
        return input.read(buf, ((tile.row * cols + tile.col) * size) as u64);
    }
    for (i, row) in buf.chunks_exact_mut(tile.cols * size).enumerate() {
        input.read(row, (((tile.row + i) * cols + tile.col) * size) as u64)?;
    }
    Ok(())
}

/// Writes `buf` as `runs` equal runs, run `i` at `offset(i)`; as one write when the runs
/// follow each other in the output (`contiguous`).
fn write_runs(
    output: &At<'_>,
    buf: &[u8],
    runs: usize,
    contiguous: bool,
    offset: impl Fn(usize) -> usize,
) -> Result<(), Error> {
    if contiguous || runs <= 1 {
        return output.write(buf, offset(0) as u64);
    }
    for (i, run) in buf.chunks_exact(buf.len() / runs).enumerate() {
        output.write(run, offset(i) as u64)?;
    }
    Ok(())
}

/// Widens `bytes` of `from` elements (machine byte order), a type narrower than f32, into f32
/// values, exactly.
fn widen_f32(from: FloatType, bytes: &[u8], out: &mut Vec<f32>) {
    let n = bytes.len() / from.size();
    out.resize(n, 0.0);
    let Some(format) = from.format() else {
        unreachable!("quantized where they were read")
    };
    lowp::with_format!(&format, T where all_bits => {
        bytemuck::cast_slice::<u8, T>(bytes).convert_to_f32_slice(out)
    }, else => unreachable!("{} is a whole-byte format", format.name))
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
/// second scale's place, in the order of [`crate::layouts::Placement::parts`]), tile by tile
/// on all threads ([`crate::tiles`]).
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
    let size = from.size();
    let tiles = tiles::tiles(scheme, shape, quantize_budget(size));
    let mut tensor_scale = 0.0f32;
    if scheme == Scheme::Nvfp4 {
        let amax = tiles
            .par_iter()
            .map(|&t| {
                BUFFERS.with_borrow_mut(|b| {
                    control.check()?;
                    let bytes = b.input.bytes(t.rows * t.cols * size);
                    read_tile(&input, t, cols, size, bytes)?;
                    Ok(block_convert::block_amax(from, bytes))
                })
            })
            .try_reduce(|| 0.0, |a: f64, b| Ok(a.max(b)))?;
        tensor_scale = encoding.tensor_scale(amax);
        if let Some(out) = &outputs {
            out[2].write(&encoding.second_bytes(tensor_scale), 0)?;
        }
    }
    if scheme == Scheme::Fp8Channel && tiles.iter().any(|t| t.cols < cols) {
        return quantize_long_rows(input, from, shape, encoding, &tiles, outputs, control);
    }
    tiles
        .par_iter()
        .map(|&t| {
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
                let bytes = raw.bytes(t.rows * t.cols * size);
                read_tile(&input, t, cols, size, bytes)?;
                let values = source(from, bytes, values);
                let buffers = (data, scales, output);
                let stats =
                    encode_tile(encoding, shape, t, tensor_scale, values, buffers, &outputs)?;
                control.add(bytes.len() as u64);
                Ok(stats)
            })
        })
        .try_reduce(QuantStats::default, |mut a, b| {
            a.merge(&b);
            Ok(a)
        })
}

/// Writes a quantized tile of a tensor of `shape` (stored, as the codec cuts it): its element
/// data row by row and its scales, scale row by scale row, converted to their stored dtype.
fn write_tile(
    encoding: &Encoding,
    shape: &[usize],
    t: Tile,
    data: &[u8],
    scales: &mut [u8],
    scratch: &mut Block,
    out: &[At<'_>; 3],
) -> Result<(), Error> {
    let scheme = encoding.scheme;
    let cols = shape[shape.len() - 1];
    let whole = t.cols == cols;
    write_runs(&out[0], data, t.rows, whole, |i| {
        tiles::data_offset(scheme, cols, t.row + i, t.col)
    })?;
    let scale_rows = t.rows.div_ceil(scheme.block_rows());
    let stored = encoding.stored_scales(scales, scratch);
    write_runs(&out[1], stored, scale_rows, whole, |i| {
        let row = Tile {
            row: t.row + i * scheme.block_rows(),
            ..t
        };
        encoding.stored_offset(tiles::scale_offset(scheme, shape, row))
    })
}

/// fp8-channel's rows too long for one tile, row after row: the row's scale is chosen from
/// passes over its pieces ([`quant::LongRow`]: its amax, then each candidate's error when
/// searching), then the pieces are rounded with it; the pieces of each pass run in parallel.
fn quantize_long_rows(
    input: At<'_>,
    from: FloatType,
    shape: &[usize],
    encoding: &Encoding,
    tiles: &[Tile],
    outputs: Option<[At<'_>; 3]>,
    control: Control<'_>,
) -> Result<QuantStats, Error> {
    let cols = shape[shape.len() - 1];
    let read = Reading {
        input,
        from,
        cols,
        control,
    };
    let mut total = QuantStats::default();
    for row in tiles.chunk_by(|a, b| a.row == b.row) {
        let scans = read.each(row, |_, src, _| {
            Ok(match src {
                Source::F32(x) => quant::RowScan::of(x),
                Source::F64(x) => quant::RowScan::of(x),
            })
        })?;
        let mut scan = quant::RowScan::default();
        scans.into_iter().for_each(|s| scan.merge(s));
        let mut long = quant::LongRow::new(&encoding.opts, scan);
        if long.searching() {
            let n = long.candidate_count();
            let per_piece = read.each(row, |_, src, _| {
                let mut errors = vec![0f64; n];
                match src {
                    Source::F32(x) => long.errors(x, &mut errors),
                    Source::F64(x) => long.errors(x, &mut errors),
                }
                Ok(errors)
            })?;
            // Summed in the pieces' order, so the choice does not depend on the threads.
            let mut errors = vec![0f64; n];
            for piece in per_piece {
                errors.iter_mut().zip(piece).for_each(|(e, p)| *e += p);
            }
            long.choose(&errors);
        }
        let r = row[0].row;
        if let Some(out) = &outputs {
            let mut codec = long.scale_bytes();
            let mut scratch = Block::default();
            let stored = encoding.stored_scales(&mut codec, &mut scratch);
            out[1].write(stored, encoding.stored_offset(r * 4) as u64)?;
        }
        let stats = read.each(row, |t, src, data| {
            data.resize(t.cols, 0);
            let first = (r * cols + t.col) as u64;
            let stats = match src {
                Source::F32(x) => long.encode(x, first, data),
                Source::F64(x) => long.encode(x, first, data),
            };
            if let Some(out) = &outputs {
                let at = tiles::data_offset(Scheme::Fp8Channel, cols, r, t.col);
                out[0].write(data, at as u64)?;
            }
            control.add((t.cols * from.size()) as u64);
            Ok(stats)
        })?;
        total.merge(&long.block_stats());
        stats.iter().for_each(|s| total.merge(s));
    }
    Ok(total)
}

/// Reads the tiles of a tensor for a pass over them.
#[derive(Clone, Copy)]
struct Reading<'a> {
    input: At<'a>,
    from: FloatType,
    /// Columns of the tensor's rows.
    cols: usize,
    control: Control<'a>,
}

impl Reading<'_> {
    /// Runs `f` on each tile of `tiles` in parallel, with its values and the thread's buffer
    /// for element data; gives the results in the tiles' order.
    fn each<R: Send>(
        &self,
        tiles: &[Tile],
        f: impl Fn(Tile, Source<'_>, &mut Vec<u8>) -> Result<R, Error> + Sync,
    ) -> Result<Vec<R>, Error> {
        let size = self.from.size();
        tiles
            .par_iter()
            .map(|&t| {
                BUFFERS.with_borrow_mut(|b| {
                    self.control.check()?;
                    let Buffers {
                        input,
                        values,
                        data,
                        ..
                    } = b;
                    let bytes = input.bytes(t.rows * t.cols * size);
                    read_tile(&self.input, t, self.cols, size, bytes)?;
                    f(t, source(self.from, bytes, values), data)
                })
            })
            .collect()
    }
}

/// A chunk's values as the codec takes them.
enum Source<'a> {
    /// f32 values (f32 sources where they were read, narrower types widened exactly).
    F32(&'a [f32]),
    /// f64 values, where they were read.
    F64(&'a [f64]),
}

/// The values in `bytes` (of type `from`, in a buffer aligned for it): f32 and f64 where they
/// are, narrower types widened into `values` first.
fn source<'a>(from: FloatType, bytes: &'a [u8], values: &'a mut Vec<f32>) -> Source<'a> {
    match from {
        FloatType::F64 => Source::F64(bytemuck::cast_slice(bytes)),
        FloatType::F32 => Source::F32(bytemuck::cast_slice(bytes)),
        _ => {
            widen_f32(from, bytes, values);
            Source::F32(values)
        }
    }
}

/// Quantizes the tile `t` of a tensor stored as `stored` (as the codec cuts it), whose
/// values are `values`, into the thread's `data` and `scales` buffers, and writes it at
/// `outputs` (`None`: measure only), converting the scales with the third buffer;
/// `tensor_scale` is NVFP4's `scale_2`.
fn encode_tile(
    encoding: &Encoding,
    stored: &[usize],
    t: Tile,
    tensor_scale: f32,
    values: Source<'_>,
    (data, scales, scratch): (&mut Vec<u8>, &mut Vec<u8>, &mut Block),
    outputs: &Option<[At<'_>; 3]>,
) -> Result<QuantStats, Error> {
    let (scheme, opts) = (encoding.scheme, &encoding.opts);
    data.resize(t.rows * scheme.data_row_bytes(t.cols), 0);
    scales.resize(scheme.scale_bytes(t.rows, t.cols), 0);
    // Stochastic rounding's element indices are the stored tensor's.
    let cols = stored[stored.len() - 1];
    let place = Place {
        first: (t.row * cols + t.col) as u64,
        stride: cols,
    };
    let stats = match values {
        Source::F32(x) => {
            quant::quantize_at(scheme, opts, x, t.cols, place, tensor_scale, data, scales)
        }
        Source::F64(x) => {
            quant::quantize_at(scheme, opts, x, t.cols, place, tensor_scale, data, scales)
        }
    }
    .map_err(Error::file)?;
    if let Some(out) = outputs {
        write_tile(encoding, stored, t, data, scales, scratch, out)?;
    }
    Ok(stats)
}

/// Quantizes a stack of matrices `[E, in, out]` (gpt-oss's experts) stored transposed, each as
/// `[out, in]` rows, with a row-wise scheme (blocks along the input): tile by tile of the stored
/// matrices ([`tiles::transposed_tiles`]), each read from the model's layout, transposed in
/// memory and quantized; tiles run in parallel.
pub fn quantize_transposed(
    input: At<'_>,
    from: FloatType,
    shape: &[usize],
    encoding: &Encoding,
    outputs: Option<[At<'_>; 3]>,
    control: Control<'_>,
) -> Result<QuantStats, Error> {
    let scheme = encoding.scheme;
    if scheme.block_rows() != 1 || scheme == Scheme::Fp8Channel || scheme == Scheme::Nvfp4 {
        return Err(Error::invalid(format!(
            "{scheme} cannot quantize transposed experts: only the MX schemes can"
        )));
    }
    let n = shape.len();
    let (ins, outs) = (shape[n - 2], shape[n - 1]);
    let stored: Vec<usize> = [&shape[..n - 2], &[outs, ins]].concat();
    let size = from.size();
    let tiles = tiles::transposed_tiles(scheme, &stored, quantize_budget(size));
    tiles
        .par_iter()
        .map(|&t| {
            BUFFERS.with_borrow_mut(|b| {
                control.check()?;
                let Buffers {
                    input: raw,
                    values,
                    data,
                    scales,
                    output,
                    transposed,
                    ..
                } = b;
                let bytes = raw.bytes(t.rows * t.cols * size);
                let (m, o0) = (t.row / outs, t.row % outs);
                // The model's rows `in` of the tile, `t.rows` outputs of each.
                let region = Tile {
                    row: m * ins + t.col,
                    rows: t.cols,
                    col: o0,
                    cols: t.rows,
                };
                read_tile(&input, region, outs, size, bytes)?;
                let swapped = transposed.bytes(bytes.len());
                transpose(bytes, swapped, t.cols, t.rows, size);
                let values = source(from, swapped, values);
                let buffers = (data, scales, output);
                let stats = encode_tile(encoding, &stored, t, 0.0, values, buffers, &outputs)?;
                control.add(bytes.len() as u64);
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
    let tiles = tiles::tiles(scheme, &q.shape, DECODE_BUDGET);
    tiles
        .par_iter()
        .map(|&t| {
            BUFFERS.with_borrow_mut(|b| {
                control.check()?;
                let read = decoder.tile(&q.shape, t, b)?;
                let n = t.rows * t.cols;
                let out = b.output.bytes(n * to.size());
                let values = bytemuck::cast_slice(&b.wide[..n]);
                let stats = block_convert::convert_block(
                    FloatType::F64,
                    to,
                    values,
                    out,
                    Rounding::NEAREST,
                );
                if let Some(o) = &output {
                    write_runs(o, out, t.rows, t.cols == cols, |i| {
                        ((t.row + i) * cols + t.col) * to.size()
                    })?;
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
    /// The rows of fp8-channel cut into pieces whose scale a piece found bad.
    bad_rows: std::sync::Mutex<std::collections::BTreeSet<usize>>,
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
            bad_rows: Default::default(),
            shape: &q.shape,
        })
    }

    /// What checking the scales found, over every block decoded so far: a long fp8-channel
    /// row's one block counted once, bad when any of its pieces found it so.
    fn checked(&self) -> ScaleCheck {
        let bad_rows = self.bad_rows.lock().map_or(0, |rows| rows.len()) as u64;
        ScaleCheck {
            blocks: self.blocks.load(Ordering::Relaxed),
            bad: self.bad.load(Ordering::Relaxed) + bad_rows,
        }
    }

    /// Decodes the tile `t` of the stored tensor of shape `stored` into `b.wide`, exactly, and
    /// adds what checking its scales found to the decoder's counts; gives the bytes read.
    fn tile(&self, stored: &[usize], t: Tile, b: &mut Buffers) -> Result<u64, Error> {
        let scheme = self.scheme;
        let cols = stored[stored.len() - 1];
        let whole = t.cols == cols;
        let data_row = scheme.data_row_bytes(t.cols);
        let bytes = b.input.bytes(t.rows * data_row);
        for (i, run) in bytes
            .chunks_exact_mut(if whole { bytes.len().max(1) } else { data_row })
            .enumerate()
        {
            let at = tiles::data_offset(scheme, cols, t.row + i, t.col);
            self.data.read(run, at as u64)?;
        }
        let codec_len = scheme.scale_bytes(t.rows, t.cols);
        b.scales.resize(codec_len, 0);
        let scale_rows = t.rows.div_ceil(scheme.block_rows());
        let run = if whole {
            codec_len
        } else {
            codec_len / scale_rows.max(1)
        };
        for (i, codec) in b.scales.chunks_exact_mut(run.max(1)).enumerate() {
            let row = Tile {
                row: t.row + i * scheme.block_rows(),
                ..t
            };
            let at = tiles::scale_offset(scheme, stored, row);
            read_scales(
                &self.scales,
                self.scale_dtype,
                scheme,
                at,
                codec,
                &mut b.output,
            )?;
        }
        let n = t.rows * t.cols;
        b.wide.resize(n, 0.0);
        let check = quant::check_scales(scheme, bytes, &b.scales, t.rows, t.cols, self.second)
            .map_err(Error::file)?;
        if t.cols < cols && scheme == Scheme::Fp8Channel {
            // A piece of a row whose one scale the other pieces share: the row is one block.
            if t.col == 0 {
                self.blocks.fetch_add(1, Ordering::Relaxed);
            }
            if check.bad > 0
                && let Ok(mut rows) = self.bad_rows.lock()
            {
                rows.insert(t.row);
            }
        } else {
            self.blocks.fetch_add(check.blocks, Ordering::Relaxed);
            self.bad.fetch_add(check.bad, Ordering::Relaxed);
        }
        quant::dequantize_f64(
            scheme,
            bytes,
            &b.scales,
            t.cols,
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
    /// out]`) tile by tile ([`tiles::transposed_tiles`]), and stores them as `to` at `output`
    /// in the model's layout.
    fn transposed(
        &self,
        to: FloatType,
        output: Option<At<'_>>,
        control: Control<'_>,
    ) -> Result<FitStats, Error> {
        let n = self.shape.len();
        let (ins, outs) = (self.shape[n - 2], self.shape[n - 1]);
        let stored: Vec<usize> = [&self.shape[..n - 2], &[outs, ins]].concat();
        let tiles = tiles::transposed_tiles(self.scheme, &stored, DECODE_BUDGET);
        tiles
            .par_iter()
            .map(|&t| {
                BUFFERS.with_borrow_mut(|b| {
                    control.check()?;
                    let read = self.tile(&stored, t, b)?;
                    let elements = t.rows * t.cols;
                    // [out, in] to [in, out].
                    let swapped = &mut b.swapped;
                    swapped.resize(elements, 0.0);
                    for (o, row) in b.wide[..elements].chunks_exact(t.cols).enumerate() {
                        for (i, &v) in row.iter().enumerate() {
                            swapped[i * t.rows + o] = v;
                        }
                    }
                    let out = b.output.bytes(elements * to.size());
                    let stats = block_convert::convert_block(
                        FloatType::F64,
                        to,
                        bytemuck::cast_slice(&swapped[..]),
                        out,
                        Rounding::NEAREST,
                    );
                    if let Some(o) = &output {
                        let (m, o0) = (t.row / outs, t.row % outs);
                        write_runs(o, out, t.cols, t.rows == outs, |i| {
                            ((m * ins + t.col + i) * outs + o0) * to.size()
                        })?;
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

/// Which buffer a run's decoded values are in.
enum Decoded {
    /// `values`, f32.
    F32,
    /// `wide`, f64 (exact products for an f64 target).
    F64,
}

/// A run of elements of a decoded tensor: its first element and its element count.
type Run = (usize, usize);

/// `elements` elements in runs of `per_run`.
fn even_runs(elements: usize, per_run: usize) -> Vec<Run> {
    (0..elements.div_ceil(per_run))
        .map(|i| {
            let first = i * per_run;
            (first, (elements - first).min(per_run))
        })
        .collect()
}

/// Decodes a tensor run by run on all threads: `decode` reads a run and leaves its values
/// in the thread's buffers, saying which, and how many input bytes it read; each run is then
/// stored as `to` at `output` (`None`: measured only).
fn element_runs(
    runs: &[Run],
    to: FloatType,
    output: Option<At<'_>>,
    control: Control<'_>,
    decode: impl Fn(Run, &mut Buffers) -> Result<(Decoded, u64), Error> + Sync,
) -> Result<FitStats, Error> {
    runs.par_iter()
        .map(|&run| {
            BUFFERS.with_borrow_mut(|b| {
                control.check()?;
                let (first, n) = run;
                let (decoded, read) = decode(run, b)?;
                let (from, values): (FloatType, &[u8]) = match decoded {
                    Decoded::F32 => (FloatType::F32, bytemuck::cast_slice(&b.values)),
                    Decoded::F64 => (FloatType::F64, bytemuck::cast_slice(&b.wide)),
                };
                let out = b.output.bytes(n * to.size());
                let stats = block_convert::convert_block(from, to, values, out, Rounding::NEAREST);
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
    let per_run = TILE_BYTES / packed.group() * packed.group();
    let runs = even_runs(elements, per_run);
    element_runs(&runs, to, output, control, |(first, n), b| {
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
    let runs = even_runs(elements, TILE_BYTES);
    // Both FP8 formats spell ±0 with every bit but the sign clear.
    let nonzero = AtomicBool::new(false);
    let stats = element_runs(&runs, to, output, control, |(first, n), b| {
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
