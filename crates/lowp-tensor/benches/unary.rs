//! Element-wise ops of the lowp formats: the correctly rounded table lookup the kernels use,
//! against the two other ways: the kernels' way before (each block widened to f32, the f32
//! function of std, rounded back: not correctly rounded) and lowp's scalar function on each
//! element (f64 evaluation rounded once: correctly rounded, the table's contents), measured in
//! the same run on the same data.
//!
//! Each group runs table, f32, f64, f64, f32, table (a benchmark's place in a group moves its
//! figure on these shared machines, and the mirrored order cancels that); compare the sums of
//! each pair. One thread and 1 Mi elements (2 MiB in, 2 MiB out), so the tensor layer's
//! threading is out of the picture. Run with `cargo bench -p lowp-tensor --bench unary`.

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use lowp::prelude::*;
use lowp::{LowpFloat, bf16, f16};
use lowp_tensor::Tensor;
use std::hint::black_box;

const N: usize = 1 << 20;
const BLOCK: usize = 1024;

/// Values of `T` spread over [-8, 8] from a fixed sequence.
fn inputs<T: LowpFloat>() -> Vec<T> {
    let mut state = 0x2545_f491_4f6c_dd1du64;
    (0..N)
        .map(|_| {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            T::from_f64(((state >> 11) as f64 / (1u64 << 53) as f64) * 16.0 - 8.0)
        })
        .collect()
}

/// A function of f32, as the kernels evaluated it before.
type F32Fn = fn(f32) -> f32;

/// The kernel as it was: blocks widened to f32, `f` applied, rounded back once.
fn through_f32<T: LowpFloat + Default>(src: &[T], f: F32Fn) -> Vec<T>
where
    [T]: LowpSliceExt,
{
    let mut out = vec![T::default(); src.len()];
    let mut buf = [0f32; BLOCK];
    for (s, d) in src.chunks(BLOCK).zip(out.chunks_mut(BLOCK)) {
        let buf = &mut buf[..s.len()];
        s.convert_to_f32_slice(buf);
        for v in buf.iter_mut() {
            *v = f(*v);
        }
        d.convert_from_f32_slice(buf);
    }
    out
}

fn exp(x: f32) -> f32 {
    x.exp()
}
fn sin(x: f32) -> f32 {
    x.sin()
}
fn tanh(x: f32) -> f32 {
    x.tanh()
}
fn gelu(x: f32) -> f32 {
    0.5 * x * libm::erfcf(-x * std::f32::consts::FRAC_1_SQRT_2)
}
fn sigmoid(x: f32) -> f32 {
    1.0 / (1.0 + (-x).exp())
}

fn bench_format<T>(c: &mut Criterion)
where
    T: LowpFloat + lowp_tensor::FloatElement + Default,
    [T]: LowpSliceExt,
{
    let xs = inputs::<T>();
    let tensor = Tensor::from_slice(&xs, &[N]).unwrap();
    let ops: [(&str, F32Fn); 5] = [
        ("exp", exp),
        ("sin", sin),
        ("tanh", tanh),
        ("gelu", gelu),
        ("sigmoid", sigmoid),
    ];
    for (op, f) in ops {
        // Build the table outside the measurement: it is made once per process.
        tensor.unary(op).unwrap();
        let mut g = c.benchmark_group(format!("{} {op}", T::FORMAT.name));
        g.throughput(Throughput::Elements(N as u64));
        let function = lowp_tensor::ops::unary::function(op).unwrap();
        for name in [
            "table",
            "f32",
            "f64 each",
            "f64 each again",
            "f32 again",
            "table again",
        ] {
            g.bench_function(name, |b| {
                if name.starts_with("table") {
                    b.iter(|| black_box(tensor.unary(black_box(op)).unwrap()))
                } else if name.starts_with("f32") {
                    b.iter(|| black_box(through_f32(black_box(&xs), f)))
                } else {
                    b.iter(|| {
                        let out: Vec<T> =
                            black_box(&xs).iter().map(|&x| function.apply(x)).collect();
                        black_box(out)
                    })
                }
            });
        }
        g.finish();
    }
}

fn unary(c: &mut Criterion) {
    // One thread: the comparison is of the per-element work.
    rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build_global()
        .unwrap();
    bench_format::<f16>(c);
    bench_format::<bf16>(c);
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(20);
    targets = unary
}
criterion_main!(benches);
