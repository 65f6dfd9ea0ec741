//! What each fuzz target does with its bytes, shared by the cargo-fuzz targets in `fuzz/`
//! (which `#[path]`-include this file) and the corpus test `tests/fuzz_corpus.rs`, so the
//! test replays the committed corpus through exactly the code the fuzzer exercises.
//!
//! Every function takes arbitrary bytes and returns `Ok` when lowp accepted them, `Err` with
//! lowp's message when it refused them. A panic, a hang or a crash is the bug the fuzzer and
//! the test look for; either answer is fine.
//!
//! lowp-io's readers take paths, so the file-format targets write the bytes to a fresh
//! directory under the system temporary directory and run `lowp_io::convert` on it: once as
//! a dry run (headers, recognition, every tensor measured) and once writing an output beside
//! it (the copy paths, the .npz CRC check of copied members, the quantized layouts decoded).

#![allow(dead_code)]

use lowp_io::quant::{self, Scheme};
use lowp_io::{FloatType, Options, Target};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// What a target does with bytes: `Ok` if lowp accepted them, `Err` with its message if not.
pub type Feed = fn(&[u8]) -> Result<(), String>;

/// The fuzz targets, by the name of their directory under `fuzz/corpus/`, and what they do
/// with bytes.
pub const TARGETS: &[(&str, Feed)] = &[
    ("safetensors", safetensors),
    ("npy", npy),
    ("npz", npz),
    ("quant_fp8_block", quant_fp8_block),
    ("quant_mxfp8", quant_mxfp8),
    ("quant_mxfp4", quant_mxfp4),
    ("quant_nvfp4", quant_nvfp4),
    ("decimal", decimal),
];

/// A safetensors file (plain, or holding a block-quantized layout): converted to f16 as a
/// dry run, then to f32 into a file, which decodes any quantized weights it recognises.
pub fn safetensors(bytes: &[u8]) -> Result<(), String> {
    file(bytes, "in.safetensors", "out.safetensors")
}

/// A `.npy` file: converted to f16 as a dry run, then to f32 into a file.
pub fn npy(bytes: &[u8]) -> Result<(), String> {
    file(bytes, "in.npy", "out.npy")
}

/// A `.npz` archive: converted to f16 as a dry run, then to f32 into a file (f32 members are
/// copied, so their CRC check runs too).
pub fn npz(bytes: &[u8]) -> Result<(), String> {
    file(bytes, "in.npz", "out.npz")
}

/// fp8-block rows decoded from bytes (see [`quantized`]).
pub fn quant_fp8_block(bytes: &[u8]) -> Result<(), String> {
    quantized(Scheme::Fp8Block, bytes)
}

/// mxfp8 rows decoded from bytes (see [`quantized`]).
pub fn quant_mxfp8(bytes: &[u8]) -> Result<(), String> {
    quantized(Scheme::Mxfp8, bytes)
}

/// mxfp4 rows decoded from bytes (see [`quantized`]).
pub fn quant_mxfp4(bytes: &[u8]) -> Result<(), String> {
    quantized(Scheme::Mxfp4, bytes)
}

/// nvfp4 rows decoded from bytes (see [`quantized`]).
pub fn quant_nvfp4(bytes: &[u8]) -> Result<(), String> {
    quantized(Scheme::Nvfp4, bytes)
}

/// Decimal text: parsed into every format, through each type's `FromStr` and through
/// `lowp::Format::parse`. Bytes that are not UTF-8 are parsed after lossy decoding.
pub fn decimal(bytes: &[u8]) -> Result<(), String> {
    let text = String::from_utf8_lossy(bytes);
    let s = text.as_ref();
    let mut accepted = 0usize;
    macro_rules! parse_as {
        ($t:ident) => {
            if s.parse::<lowp::$t>().is_ok() {
                accepted += 1;
            }
        };
    }
    lowp::for_each_format!(parse_as);
    let mut by_format = 0usize;
    for format in lowp::format::formats::ALL.iter() {
        if format.parse(s).is_ok() {
            by_format += 1;
        }
    }
    if accepted != by_format {
        // The typed and the run-time parsers are one function; disagreeing is a bug.
        panic!("{s:?}: {accepted} types but {by_format} formats accept it");
    }
    if accepted == 0 {
        return Err(format!("no format accepts {s:?}"));
    }
    Ok(())
}

/// Block-quantized rows of `scheme` read from arbitrary bytes, decoded with
/// `lowp_io::quant::dequantize` and `dequantize_f64` and their scales checked with
/// `check_scales` (the tensor scale as nvfp4's second factor). The bytes are: rows (1 byte, 1 to 4),
/// columns (2 bytes little-endian, 1 to 1024), the tensor scale (4 bytes, f32 little-endian),
/// then the element data and the scales, each as long as the scheme wants for that shape or
/// as much as is left (so short inputs test the length checks).
pub fn quantized(scheme: Scheme, bytes: &[u8]) -> Result<(), String> {
    let Some((head, rest)) = bytes.split_first_chunk::<7>() else {
        return Err("shorter than the 7-byte header".into());
    };
    let rows = usize::from(head[0] % 4) + 1;
    let cols = usize::from(u16::from_le_bytes([head[1], head[2]]) % 1024) + 1;
    let tensor_scale = f32::from_le_bytes([head[3], head[4], head[5], head[6]]);
    let data_len = (scheme.data_row_bytes(cols) * rows).min(rest.len());
    let (data, rest) = rest.split_at(data_len);
    let scale_len = scheme.scale_bytes(rows, cols).min(rest.len());
    let scales = &rest[..scale_len];
    let mut out = vec![0f32; rows * cols];
    quant::dequantize(scheme, data, scales, cols, tensor_scale, &mut out)?;
    let mut wide = vec![0f64; rows * cols];
    quant::dequantize_f64(scheme, data, scales, cols, tensor_scale, &mut wide)?;
    let check = quant::check_scales(scheme, data, scales, rows, cols, f64::from(tensor_scale))?;
    let blocks = scheme.scale_bytes(rows, cols) / if scheme.float_scales() { 4 } else { 1 };
    if check.blocks != blocks as u64 || check.bad > check.blocks {
        panic!("{scheme:?}: {check:?} of {blocks} blocks");
    }
    for (a, b) in out.iter().zip(&wide) {
        // A NaN scale is NaN in both. The converse does not hold: nvfp4's f32 decoding
        // multiplies the two scales in f32 first (as ModelOpt does), so a product past f32's
        // range times a zero element is NaN there but 0 in the exact f64 decoding.
        if b.is_nan() && !a.is_nan() {
            panic!("{scheme:?}: f32 decoding {a} but f64 decoding {b}");
        }
    }
    Ok(())
}

/// `bytes` written to `input` in a fresh directory and converted: to f16 as a dry run, then
/// to f32 into `output` beside it. The directory is removed afterwards.
fn file(bytes: &[u8], input: &str, output: &str) -> Result<(), String> {
    let dir = Scratch::new()?;
    let input = dir.0.join(input);
    std::fs::write(&input, bytes).map_err(|e| format!("writing {}: {e}", input.display()))?;
    let dry = Options::new(&input, None, Target::Float(FloatType::F16));
    lowp_io::convert(&dry).map_err(|e| e.to_string())?;
    let out = dir.0.join(output);
    let write = Options::new(&input, Some(out), Target::Float(FloatType::F32));
    lowp_io::convert(&write).map_err(|e| e.to_string())?;
    Ok(())
}

/// A directory of its own under the system temporary directory, removed when dropped.
struct Scratch(PathBuf);

impl Scratch {
    fn new() -> Result<Scratch, String> {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let base = if Path::new("/dev/shm").is_dir() {
            PathBuf::from("/dev/shm")
        } else {
            std::env::temp_dir()
        };
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let dir = base.join(format!("lowp-fuzz-{}-{n}", std::process::id()));
        std::fs::create_dir(&dir).map_err(|e| format!("creating {}: {e}", dir.display()))?;
        Ok(Scratch(dir))
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}
