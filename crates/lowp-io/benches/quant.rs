//! What block quantization ([`lowp_io::quant::quantize`]) costs per value, one thread, beside
//! copying the same bytes.
//!
//! Each group quantizes the same 1 MiB of f32 weights (one block of `lowp convert`'s pipeline:
//! 256 rows of 1024, roughly normal with standard deviation 0.02, one in 2,000 an outlier 40
//! times larger) into one scheme, rounding to nearest with the formula's scales, statistics
//! included; `memcpy` copies the 1 MiB in the same run, the floor any conversion of it stands
//! on. Run with `cargo bench -p lowp-io --bench quant`.

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use lowp_io::quant::{QuantOptions, Scheme, amax, nvfp4_tensor_scale, quantize};
use std::hint::black_box;
use std::time::Duration;

const COLS: usize = 1024;
const ROWS: usize = 256;

/// `n` weights: roughly normal with standard deviation `sigma` (a sum of four uniforms from a
/// fixed linear congruential sequence), every 2,000th multiplied by 40 to make an outlier.
fn weights(n: usize, sigma: f32) -> Vec<f32> {
    let mut state = 0x2545_f491_4f6c_dd1du64;
    let mut uniform = || {
        state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (state >> 40) as f32 / (1u64 << 24) as f32
    };
    let spread = sigma * 3f32.sqrt();
    (0..n)
        .map(|i| {
            let z = (uniform() + uniform() + uniform() + uniform() - 2.0) * spread;
            if i % 2000 == 0 { z * 40.0 } else { z }
        })
        .collect()
}

fn quant(c: &mut Criterion) {
    let src = weights(ROWS * COLS, 0.02);
    let opts = QuantOptions::default();
    let mut g = c.benchmark_group("quantize_1MiB_f32");
    g.throughput(Throughput::Bytes((src.len() * 4) as u64));
    let mut copy = vec![0f32; src.len()];
    g.bench_function("memcpy", |b| {
        b.iter(|| black_box(&mut copy[..]).copy_from_slice(black_box(&src)))
    });
    let tensor_scale = nvfp4_tensor_scale(amax(&src));
    for scheme in [
        Scheme::Fp8Block,
        Scheme::Mxfp8,
        Scheme::Mxfp4,
        Scheme::Nvfp4,
    ] {
        // fp8-block takes one band of 128 rows per call, the others any rows.
        let rows = if scheme == Scheme::Fp8Block {
            scheme.block_rows()
        } else {
            ROWS
        };
        let mut data = vec![0u8; rows * scheme.data_row_bytes(COLS)];
        let mut scales = vec![0u8; scheme.scale_bytes(rows, COLS)];
        g.bench_function(scheme.to_string(), |b| {
            b.iter(|| {
                for band in src.chunks(rows * COLS) {
                    black_box(
                        quantize(
                            scheme,
                            &opts,
                            black_box(band),
                            COLS,
                            0,
                            tensor_scale,
                            &mut data,
                            &mut scales,
                        )
                        .expect("lengths fit"),
                    );
                }
            })
        });
    }
    g.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default().measurement_time(Duration::from_secs(2)).warm_up_time(Duration::from_millis(500));
    targets = quant
}
criterion_main!(benches);
