//! Moving one tensor's data through the conversion, block by block on all threads.
//!
//! A tensor whose data lies in a file at a known place (safetensors, `.npy`) is a [`Segment`]:
//! its blocks are independent, so each rayon thread reads its block with a positioned read,
//! converts and measures it, and writes it with a positioned write at its place in the output,
//! which the output header fixed in advance. Both cores do I/O and arithmetic, and memory is a
//! pair of block buffers per thread, whatever the size of the tensor.
//!
//! A tensor that can only be read in order (an `.npz` member, maybe compressed) is streamed
//! instead: [`convert_stream`] reads a block, converts its parts on all threads, and writes it.

use crate::block_convert::{self, Rounding};
use crate::error::Error;
use crate::files::{self, Block};
use crate::float_type::FloatType;
use crate::progress::Control;
use lowp::fit::FitStats;
use rayon::prelude::*;
use std::fs::File;
use std::io::{Read, Write};
use std::path::Path;

/// Input bytes per block: large enough that a system call and a task cost nothing beside the
/// conversion, small enough that a block and its output stay in a core's cache.
const BLOCK_BYTES: usize = 1 << 20;

thread_local! {
    /// Each thread's input and output blocks, kept from tensor to tensor: allocating and
    /// zeroing a megabyte per block would cost as much as converting it.
    static BUFFERS: std::cell::RefCell<(Block, Block)> = std::cell::RefCell::default();
}

/// What happens to a tensor's data.
#[derive(Clone, Copy, Debug)]
pub enum Action {
    /// Copied byte for byte.
    Copy,
    /// Converted between float types.
    Convert {
        /// The stored type.
        from: FloatType,
        /// The type written.
        to: FloatType,
        /// Whether the input is in the other byte order than the machine's (big-endian NumPy).
        swap: bool,
        /// Rounding and scale.
        rounding: Rounding,
    },
}

/// One tensor's data in the input file and its place in the output.
#[derive(Clone, Copy, Debug)]
pub struct Segment {
    /// Offset of the data in the input file.
    pub input: u64,
    /// Offset in the output file.
    pub output: u64,
    /// Bytes of input.
    pub bytes: u64,
    /// Bytes per input element (1 for a copy).
    pub width: usize,
    /// What to do.
    pub action: Action,
}

/// The files a segment moves between.
pub struct Files<'a> {
    /// The input, and its path for errors.
    pub input: (&'a File, &'a Path),
    /// The output (none in a dry run), and the path it goes to, for errors.
    pub output: Option<(&'a File, &'a Path)>,
    /// Progress by input bytes, and the cancel flag.
    pub progress: Control<'a>,
}

/// The input blocks of a segment: (index, offset into the segment, length in bytes).
fn blocks(seg: &Segment) -> impl IndexedParallelIterator<Item = (u64, usize)> {
    let per_block = (BLOCK_BYTES / seg.width.max(1)).max(1) as u64 * seg.width.max(1) as u64;
    // Block counts fit usize: each block is at least a byte of a file that fits u64, and
    // blocks are a megabyte, so even on 32-bit machines the count stays below 2^44 / 2^20.
    let count = usize::try_from(seg.bytes.div_ceil(per_block)).unwrap_or(usize::MAX);
    let total = seg.bytes;
    (0..count).into_par_iter().map(move |i| {
        let start = i as u64 * per_block;
        (start, (total - start).min(per_block) as usize)
    })
}

/// Reads the block of `seg` at `start` into `buf`, in the machine's byte order (after a check
/// for cancellation).
fn read_block<'b>(
    seg: &Segment,
    files: &Files<'_>,
    start: u64,
    buf: &'b mut [u8],
) -> Result<&'b mut [u8], Error> {
    files.progress.check()?;
    let (input, in_path) = files.input;
    files::read_at(input, buf, seg.input + start).map_err(|e| files::read_error(in_path, &e))?;
    if let Action::Convert {
        from, swap: true, ..
    } = seg.action
    {
        block_convert::swap_bytes(buf, from.size());
    }
    Ok(buf)
}

/// Runs a segment: copies or converts it, and gives the statistics of a conversion.
pub fn run(seg: &Segment, files: &Files<'_>) -> Result<FitStats, Error> {
    blocks(seg)
        .map(|(start, len)| {
            BUFFERS.with_borrow_mut(|(src_buf, dst_buf)| {
                let src = read_block(seg, files, start, src_buf.bytes(len))?;
                let (out, stats, out_start) = match seg.action {
                    Action::Copy => (&*src, FitStats::default(), start),
                    Action::Convert {
                        from, to, rounding, ..
                    } => {
                        let n = len / from.size();
                        let dst = dst_buf.bytes(n * to.size());
                        let stats = block_convert::convert_block(from, to, src, dst, rounding);
                        (&*dst, stats, start / from.size() as u64 * to.size() as u64)
                    }
                };
                if let Some((output, out_path)) = files.output {
                    files::write_at(output, out, seg.output + out_start)
                        .map_err(|e| files::write_error(out_path, &e))?;
                }
                files.progress.add(len as u64);
                Ok(stats)
            })
        })
        .try_reduce(FitStats::default, |mut a, b| {
            a.merge(&b);
            Ok(a)
        })
}

/// The largest finite magnitude of a segment's float elements (the first pass of per-tensor
/// scaling).
pub fn amax(seg: &Segment, files: &Files<'_>) -> Result<f64, Error> {
    let Action::Convert { from, .. } = seg.action else {
        return Ok(0.0);
    };
    blocks(seg)
        .map(|(start, len)| {
            BUFFERS.with_borrow_mut(|(buf, _)| {
                let src = read_block(seg, files, start, buf.bytes(len))?;
                files.progress.add(len as u64);
                Ok(block_convert::block_amax(from, src))
            })
        })
        .try_reduce(|| 0.0, |a, b| Ok(f64::max(a, b)))
}

/// Converts `elements` elements of type `from` read in order from `reader` and writes them to
/// `writer` (none in a dry run): block by block, each block's parts on all threads.
/// `read_error` and `write_error` turn I/O errors into messages.
#[allow(clippy::too_many_arguments)]
pub fn convert_stream(
    reader: &mut dyn Read,
    mut writer: Option<&mut dyn Write>,
    elements: u64,
    from: FloatType,
    to: FloatType,
    swap: bool,
    rounding: Rounding,
    progress: Control<'_>,
    read_error: &dyn Fn(&std::io::Error) -> Error,
    write_error: &dyn Fn(&std::io::Error) -> Error,
) -> Result<FitStats, Error> {
    let per_block = (BLOCK_BYTES * 8 / from.size()) as u64;
    let (mut src_buf, mut dst_buf) = (Block::default(), Block::default());
    let mut stats = FitStats::default();
    let mut done = 0;
    while done < elements {
        progress.check()?;
        let n = (elements - done).min(per_block) as usize;
        let src = src_buf.bytes(n * from.size());
        reader.read_exact(src).map_err(|e| read_error(&e))?;
        if swap {
            block_convert::swap_bytes(src, from.size());
        }
        let dst = dst_buf.bytes(n * to.size());
        let part = 1 << 16;
        let block = src
            .par_chunks(part * from.size())
            .zip(dst.par_chunks_mut(part * to.size()))
            .map(|(s, d)| block_convert::convert_block(from, to, s, d, rounding))
            .reduce(FitStats::default, |mut a, b| {
                a.merge(&b);
                a
            });
        stats.merge(&block);
        if let Some(w) = writer.as_deref_mut() {
            w.write_all(dst).map_err(|e| write_error(&e))?;
        }
        progress.add((n * from.size()) as u64);
        done += n as u64;
    }
    Ok(stats)
}

/// [`amax`] of a stream.
pub fn stream_amax(
    reader: &mut dyn Read,
    elements: u64,
    from: FloatType,
    swap: bool,
    control: Control<'_>,
    read_error: &dyn Fn(&std::io::Error) -> Error,
) -> Result<f64, Error> {
    let per_block = (BLOCK_BYTES * 8 / from.size()) as u64;
    let mut buf = Block::default();
    let (mut amax, mut done) = (0.0f64, 0);
    while done < elements {
        control.check()?;
        let n = (elements - done).min(per_block) as usize;
        let src = buf.bytes(n * from.size());
        reader.read_exact(src).map_err(|e| read_error(&e))?;
        if swap {
            block_convert::swap_bytes(src, from.size());
        }
        amax = amax.max(block_convert::block_amax(from, src));
        done += n as u64;
    }
    Ok(amax)
}
