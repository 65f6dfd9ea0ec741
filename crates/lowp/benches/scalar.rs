//! Scalar conversion throughput against the `half` crate, measured in the same run.
//!
//! Each benchmark converts the same 4096 inputs one call at a time (`black_box` on every input
//! and output keeps the compiler from vectorising or hoisting the loop), so the figure is the
//! cost of one scalar conversion. Each group runs lowp, half, half, lowp; compare the two lowp
//! rows with the two half rows of the same group: the ratio is what matters on a shared, noisy
//! machine. Run with `cargo bench -p lowp --bench scalar`.

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use std::hint::black_box;

const N: usize = 4096;

/// Values spread over f16's normal range and both signs, with some subnormals and
/// out-of-range values, from a fixed linear congruential sequence.
fn inputs() -> Vec<f32> {
    let mut state = 0x2545_f491_4f6c_dd1du64;
    (0..N)
        .map(|i| {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let unit = (state >> 40) as f32 / (1u64 << 24) as f32;
            let exponent = (i % 40) as i32 - 24;
            let sign = if i % 3 == 0 { -1.0 } else { 1.0 };
            sign * (1.0 + unit) * 2f32.powi(exponent)
        })
        .collect()
}

/// Benchmarks lowp and half on the same inputs in the order lowp, half, half, lowp (ABBA): the
/// position of a benchmark in a group changes its figure by up to 20% on these machines (code
/// alignment, frequency), and the mirrored order cancels that. Compare the sums of each pair.
macro_rules! bench_pair {
    ($c:ident, $group:literal, $xs:ident, $ours:expr, $theirs:expr) => {{
        let mut g = $c.benchmark_group($group);
        g.throughput(Throughput::Elements(N as u64));
        for name in ["lowp", "half", "half again", "lowp again"] {
            let ours = name.starts_with("lowp");
            g.bench_function(name, |b| {
                b.iter(|| {
                    if ours {
                        for &x in &$xs {
                            black_box($ours(black_box(x)));
                        }
                    } else {
                        for &x in &$xs {
                            black_box($theirs(black_box(x)));
                        }
                    }
                })
            });
        }
        g.finish();
    }};
}

fn conversions(c: &mut Criterion) {
    let f32s = inputs();
    let f64s: Vec<f64> = f32s.iter().map(|&x| x as f64).collect();
    let f16s: Vec<u16> = f32s
        .iter()
        .map(|&x| lowp::f16::from_f32(x).to_bits())
        .collect();
    let bf16s: Vec<u16> = f32s
        .iter()
        .map(|&x| lowp::bf16::from_f32(x).to_bits())
        .collect();

    bench_pair!(
        c,
        "f16_from_f32",
        f32s,
        lowp::f16::from_f32,
        half::f16::from_f32
    );
    bench_pair!(
        c,
        "f16_to_f32",
        f16s,
        |b| lowp::f16::from_bits(b).to_f32(),
        |b| half::f16::from_bits(b).to_f32()
    );
    bench_pair!(
        c,
        "bf16_from_f32",
        f32s,
        lowp::bf16::from_f32,
        half::bf16::from_f32
    );
    bench_pair!(
        c,
        "bf16_to_f32",
        bf16s,
        |b| lowp::bf16::from_bits(b).to_f32(),
        |b| half::bf16::from_bits(b).to_f32()
    );
    bench_pair!(
        c,
        "f16_from_f64",
        f64s,
        lowp::f16::from_f64,
        half::f16::from_f64
    );
    bench_pair!(
        c,
        "bf16_from_f64",
        f64s,
        lowp::bf16::from_f64,
        half::bf16::from_f64
    );
    bench_pair!(
        c,
        "f16_to_f64",
        f16s,
        |b| lowp::f16::from_bits(b).to_f64(),
        |b| half::f16::from_bits(b).to_f64()
    );

    // The 8-bit formats: the engine's fast path one way, a table lookup the other.
    let mut g = c.benchmark_group("f8e4m3fn");
    g.throughput(Throughput::Elements(N as u64));
    g.bench_function("from_f32", |b| {
        b.iter(|| {
            for &x in &f32s {
                black_box(lowp::f8e4m3fn::from_f32(black_box(x)));
            }
        })
    });
    let e4m3: Vec<u8> = f32s
        .iter()
        .map(|&x| lowp::f8e4m3fn::from_f32(x).to_bits())
        .collect();
    g.bench_function("to_f32", |b| {
        b.iter(|| {
            for &x in &e4m3 {
                black_box(lowp::f8e4m3fn::from_bits(black_box(x)).to_f32());
            }
        })
    });
    g.finish();

    // The software engine alone, which `from_f32`/`to_f32` replace with F16C where it exists.
    let mut g = c.benchmark_group("f16_software");
    g.throughput(Throughput::Elements(N as u64));
    g.bench_function("from_f32_const", |b| {
        b.iter(|| {
            for &x in &f32s {
                black_box(lowp::f16::from_f32_const(black_box(x)));
            }
        })
    });
    g.bench_function("to_f32_const", |b| {
        b.iter(|| {
            for &x in &f16s {
                black_box(lowp::f16::from_bits(black_box(x)).to_f32_const());
            }
        })
    });
    g.finish();
}

criterion_group!(benches, conversions);
criterion_main!(benches);
