//! Bulk slice conversion throughput beside memcpy and the `half` crate, measured in one run.
//!
//! Each group converts one buffer of f32s (16 KiB or 1 MiB of them) to or from a format with
//! lowp's slice methods on the active path, then copies as many bytes with `copy_from_slice`
//! (`memcpy`: half the bytes each way), then runs `half`'s slice conversion of as many values
//! (`half::f16` for f16, `half::bf16` for the narrower formats: the closest thing `half` has).
//! Every throughput counts bytes read plus bytes written, so the lowp and memcpy rows of a group
//! move the same bytes; for the 8-bit and smaller formats the half row moves more per value, so
//! compare its time, not its GiB/s. The path follows `LOWP_FORCE_PATH`. Run with
//! `cargo bench -p lowp --bench bulk`.

use criterion::{BenchmarkGroup, Criterion, Throughput, criterion_group, criterion_main};
use half::slice::HalfFloatSliceExt;
use lowp::prelude::*;
use lowp::{bf16, f4e2m1fn, f8e4m3fn, f16};
use std::hint::black_box;
use std::time::Duration;

/// Sizes of the f32 buffer: one in L1/L2 cache, one beyond L2.
const SIZES: [usize; 2] = [16 << 10, 1 << 20];

/// `n` values with a roughly normal spread (a sum of four uniforms) whose standard deviation is
/// a third of `max`, from a fixed linear congruential sequence: most round, a few overflow.
fn inputs(n: usize, max: f32) -> Vec<f32> {
    let mut state = 0x2545_f491_4f6c_dd1du64;
    let mut uniform = || {
        state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (state >> 40) as f32 / (1u64 << 24) as f32
    };
    (0..n)
        .map(|_| (uniform() + uniform() + uniform() + uniform() - 2.0) * max / 3.0 * 3f32.sqrt())
        .collect()
}

/// Times `copy_from_slice` of `bytes / 2` bytes, counting `bytes` (read plus written).
fn memcpy(g: &mut BenchmarkGroup<'_, criterion::measurement::WallTime>, bytes: usize) {
    let src = vec![0x5au8; bytes / 2];
    let mut dst = vec![0xa5u8; bytes / 2];
    g.throughput(Throughput::Bytes(2 * src.len() as u64));
    g.bench_function("memcpy", |b| {
        b.iter(|| black_box(&mut dst[..]).copy_from_slice(black_box(&src)))
    });
}

/// The from_f32 and to_f32 groups of format `T`, with `half`'s `H` (named `half_name`) beside.
fn format<T: LowpFloat, H: Copy + Default>(c: &mut Criterion, max: f32, half_name: &str)
where
    [H]: HalfFloatSliceExt,
{
    for size in SIZES {
        let n = size / 4;
        let wide = inputs(n, max);
        let mut narrow = vec![T::default(); n];
        narrow.convert_from_f32_slice(&wide);
        let mut halves = vec![H::default(); n];
        HalfFloatSliceExt::convert_from_f32_slice(&mut halves[..], &wide);
        let lowp_bytes = n * (4 + size_of::<T>());
        let half_bytes = (n * (4 + size_of::<H>())) as u64;
        let name = T::FORMAT.name;
        let kib = size >> 10;

        let mut g = c.benchmark_group(format!("{name}_from_f32_{kib}KiB"));
        let mut out = vec![T::default(); n];
        g.throughput(Throughput::Bytes(lowp_bytes as u64));
        g.bench_function("lowp", |b| {
            b.iter(|| black_box(&mut out[..]).convert_from_f32_slice(black_box(&wide)))
        });
        memcpy(&mut g, lowp_bytes);
        let mut out = vec![H::default(); n];
        g.throughput(Throughput::Bytes(half_bytes));
        g.bench_function(format!("half_{half_name}"), |b| {
            b.iter(|| {
                HalfFloatSliceExt::convert_from_f32_slice(black_box_mut(&mut out), black_box(&wide))
            })
        });
        g.finish();

        let mut g = c.benchmark_group(format!("{name}_to_f32_{kib}KiB"));
        let mut out = vec![0f32; n];
        g.throughput(Throughput::Bytes(lowp_bytes as u64));
        g.bench_function("lowp", |b| {
            b.iter(|| black_box(&narrow[..]).convert_to_f32_slice(black_box_mut(&mut out)))
        });
        memcpy(&mut g, lowp_bytes);
        g.throughput(Throughput::Bytes(half_bytes));
        g.bench_function(format!("half_{half_name}"), |b| {
            b.iter(|| {
                HalfFloatSliceExt::convert_to_f32_slice(
                    black_box(&halves[..]),
                    black_box_mut(&mut out),
                )
            })
        });
        g.finish();
    }
}

/// `black_box` of a mutable slice.
fn black_box_mut<T>(x: &mut [T]) -> &mut [T] {
    black_box(x)
}

fn conversions(c: &mut Criterion) {
    format::<f16, half::f16>(c, f16::MAX.to_f32(), "f16");
    format::<bf16, half::bf16>(c, bf16::MAX.to_f32(), "bf16");
    format::<f8e4m3fn, half::bf16>(c, f8e4m3fn::MAX.to_f32(), "bf16");
    format::<f4e2m1fn, half::bf16>(c, f4e2m1fn::MAX.to_f32(), "bf16");
}

criterion_group! {
    name = benches;
    // 16 groups of three: about a minute in all.
    config = Criterion::default()
        .warm_up_time(Duration::from_millis(300))
        .measurement_time(Duration::from_millis(700))
        .sample_size(20);
    targets = conversions
}
criterion_main!(benches);
