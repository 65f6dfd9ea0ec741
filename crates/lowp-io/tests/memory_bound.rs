//! Memory is bounded by the tile, not the tensor: one row of 2^28 f32s (1 GiB) is quantized
//! to every scheme and decoded back, and the process's peak resident memory stays under
//! 300 MB through each conversion. This file holds one test, so that its process measures
//! nothing else (Linux's `VmHWM`, reset before each conversion through `clear_refs`).

#![cfg(target_os = "linux")]

use lowp_io::layouts::Layout;
use lowp_io::quant::Scheme;
use lowp_io::{FloatType, Options, Target};
use std::io::Write;
use std::path::Path;

/// The limit the README promises for any shape: a few tiles per thread.
const PEAK_LIMIT: u64 = 300 << 20;

/// The process's peak resident memory since the last [`reset_peak`], in bytes.
fn peak() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let line = status.lines().find(|l| l.starts_with("VmHWM:")).unwrap();
    let kb: u64 = line.split_whitespace().nth(1).unwrap().parse().unwrap();
    kb << 10
}

/// Starts a new measurement of the peak (Linux: writing 5 to `clear_refs` resets `VmHWM`).
fn reset_peak() {
    std::fs::write("/proc/self/clear_refs", "5").unwrap();
}

/// Writes a safetensors file of one f32 tensor `[1, cols]`, varied values, without holding it.
fn write_row(path: &Path, cols: usize) {
    let header = format!(
        r#"{{"x.weight":{{"dtype":"F32","shape":[1,{cols}],"data_offsets":[0,{}]}}}}"#,
        cols * 4
    );
    let mut file = std::io::BufWriter::new(std::fs::File::create(path).unwrap());
    file.write_all(&(header.len() as u64).to_le_bytes())
        .unwrap();
    file.write_all(header.as_bytes()).unwrap();
    let mut state = 1u32;
    let mut chunk = Vec::with_capacity(1 << 22);
    for i in 0..cols {
        state = state.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
        // Magnitudes over twelve binades, both signs.
        let v = f32::from_bits((state >> 9) | 0x3f80_0000) - 1.5;
        let v = v * (1u32 << (i / 4096 % 12)) as f32;
        chunk.extend_from_slice(&v.to_le_bytes());
        if chunk.len() == chunk.capacity() {
            file.write_all(&chunk).unwrap();
            chunk.clear();
        }
    }
    file.write_all(&chunk).unwrap();
    file.flush().unwrap();
}

#[test]
fn a_one_gib_row_is_quantized_and_decoded_in_bounded_memory() {
    let dir = std::env::temp_dir().join(format!("lowp-memory-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let input = dir.join("row.safetensors");
    write_row(&input, 1 << 28);
    let mut peaks = Vec::new();
    for scheme in Scheme::ALL {
        let quantized = dir.join(format!("{scheme}.safetensors"));
        let mut opts = Options::new(&input, Some(quantized.clone()), Target::Scheme(scheme));
        opts.layout = Some(Layout::CompressedTensors);
        reset_peak();
        lowp_io::convert(&opts).unwrap();
        peaks.push((format!("{scheme}"), peak()));
        let decoded = dir.join(format!("{scheme}-bf16.safetensors"));
        reset_peak();
        lowp_io::convert(&Options::new(
            &quantized,
            Some(decoded.clone()),
            FloatType::BF16,
        ))
        .unwrap();
        peaks.push((format!("{scheme} decoded to bf16"), peak()));
        std::fs::remove_file(&quantized).unwrap();
        std::fs::remove_file(&decoded).unwrap();
    }
    std::fs::remove_dir_all(&dir).unwrap();
    for (what, bytes) in &peaks {
        eprintln!("peak resident memory, {what}: {} MB", bytes >> 20);
    }
    let over: Vec<_> = peaks.iter().filter(|(_, b)| *b > PEAK_LIMIT).collect();
    assert!(over.is_empty(), "over {} MB: {over:?}", PEAK_LIMIT >> 20);
}
