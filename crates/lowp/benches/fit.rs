//! What the conversion statistics ([`lowp::fit::FitStats`]) cost on top of the conversion,
//! on values shaped like a trained model's weights.
//!
//! Each group narrows the same 1 Mi f32 weights (roughly normal, standard deviation 0.02, one
//! in 2,000 an outlier 40 times larger) to one format three ways: `convert` (the slice
//! conversion alone), `convert+stats` (`FitStats::of`, which converts block by block and
//! measures) and `stats` (`FitStats::measure` of values already converted). The path follows
//! `LOWP_FORCE_PATH`. Run with `cargo bench -p lowp --bench fit`.

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use lowp::fit::FitStats;
use lowp::prelude::*;
use lowp::{bf16, f4e2m1fn, f8e4m3fn, f8e5m2, f16};
use std::hint::black_box;
use std::time::Duration;

const N: usize = 1 << 20;

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
    // The sum of four uniforms less 2 has standard deviation sqrt(1/3).
    let spread = sigma * 3f32.sqrt();
    (0..n)
        .map(|i| {
            let z = (uniform() + uniform() + uniform() + uniform() - 2.0) * spread;
            if i % 2000 == 0 { z * 40.0 } else { z }
        })
        .collect()
}

/// The three rows of format `T`.
fn format<T: LowpFloat>(c: &mut Criterion, src: &[f32]) {
    let mut stored = vec![T::default(); src.len()];
    stored.convert_from_f32_slice(src);
    let mut g = c.benchmark_group(format!("{}_fit", T::FORMAT.name));
    g.throughput(Throughput::Elements(src.len() as u64));
    let mut out = vec![T::default(); src.len()];
    g.bench_function("convert", |b| {
        b.iter(|| black_box(&mut out[..]).convert_from_f32_slice(black_box(src)))
    });
    g.bench_function("convert+stats", |b| {
        b.iter(|| black_box(FitStats::of::<f32, T>(black_box(src), false)))
    });
    g.bench_function("stats", |b| {
        b.iter(|| {
            black_box(FitStats::measure(
                black_box(src),
                black_box(&stored[..]),
                1.0,
            ))
        })
    });
    g.finish();
}

fn fits(c: &mut Criterion) {
    let src = weights(N, 0.02);
    format::<bf16>(c, &src);
    format::<f16>(c, &src);
    format::<f8e4m3fn>(c, &src);
    format::<f8e5m2>(c, &src);
    format::<f4e2m1fn>(c, &src);
}

criterion_group! {
    name = benches;
    config = Criterion::default()
        .warm_up_time(Duration::from_millis(300))
        .measurement_time(Duration::from_millis(1000))
        .sample_size(20);
    targets = fits
}
criterion_main!(benches);
