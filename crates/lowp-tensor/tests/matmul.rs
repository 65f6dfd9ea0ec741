//! Matrix products against f64 references within the dot-product bound, the AVX2 path
//! against the portable one bit for bit, batching, and bad shapes.

mod common;

use lowp::{LowpFloat, Rounding};
use lowp_tensor::{DType, FloatElement, SimdPath, Tensor, matmul_on};

/// `gamma_k = k u / (1 - k u)` for f32's unit roundoff.
fn gamma(k: usize, u: f64) -> f64 {
    let ku = k as f64 * u;
    ku / (1.0 - ku)
}

/// The distance between the values of `T` below and above `x` (see `reductions.rs`).
fn spacing<T: LowpFloat>(x: f64) -> f64 {
    let up = T::from_f64_round(x.next_up(), Rounding::TowardPositive);
    let down = T::from_f64_round(x.next_down(), Rounding::TowardNegative);
    LowpFloat::to_f64(up) - LowpFloat::to_f64(down)
}

/// Each element of `a x b` (f64 values of shapes `m x k`, `k x n`) with `sum |a||b|`.
fn reference(a: &[f64], b: &[f64], m: usize, k: usize, n: usize) -> Vec<(f64, f64)> {
    let mut out = Vec::with_capacity(m * n);
    for i in 0..m {
        for j in 0..n {
            let (mut s, mut abs) = (0.0, 0.0);
            for p in 0..k {
                s += a[i * k + p] * b[p * n + j];
                abs += (a[i * k + p] * b[p * n + j]).abs();
            }
            out.push((s, abs));
        }
    }
    out
}

/// `a x b` in `T` is within `gamma_k sum |a||b|` (plus the f64 reference's own error and the
/// final rounding) of the exact product, for shapes that cross every block edge.
fn within_bound<T: LowpFloat + FloatElement>(u: f64) {
    for (idx, &(m, k, n)) in [
        (1, 1, 1),
        (7, 3, 5),
        (6, 16, 16),
        (13, 257, 33),
        (100, 300, 270),
    ]
    .iter()
    .enumerate()
    {
        let a = Tensor::rand_normal(&[m, k], 0.0, 1.0, T::DTYPE, idx as u64).unwrap();
        let b = Tensor::rand_normal(&[k, n], 0.0, 1.0, T::DTYPE, 100 + idx as u64).unwrap();
        let c = a.matmul(&b).unwrap();
        assert_eq!(c.shape(), &[m, n]);
        assert_eq!(c.dtype(), T::DTYPE);
        let got = c.to_f64_vec();
        let want = reference(&a.to_f64_vec(), &b.to_f64_vec(), m, k, n);
        for (g, &(exact, abs)) in got.iter().zip(&want) {
            let acc = gamma(k, u) * abs + gamma(k, 2f64.powi(-53)) * abs;
            let bound = acc + spacing::<T>(exact.abs() + acc) / 2.0;
            assert!(
                (g - exact).abs() <= bound,
                "{} {m}x{k}x{n}: {g} vs {exact} (bound {bound})",
                T::FORMAT.name
            );
        }
    }
}

#[test]
fn products_are_within_the_dot_product_bound() {
    within_bound::<lowp::f16>(2f64.powi(-24));
    within_bound::<lowp::bf16>(2f64.powi(-24));
    within_bound::<lowp::f8e4m3fn>(2f64.powi(-24));
    within_bound::<lowp::f8e5m2>(2f64.powi(-24));
}

#[test]
fn f32_and_f64_products_are_within_the_bound() {
    let (m, k, n) = (37, 290, 41);
    for (dtype, u) in [(DType::F32, 2f64.powi(-24)), (DType::F64, 2f64.powi(-53))] {
        let a = Tensor::rand_normal(&[m, k], 0.0, 1.0, dtype, 1).unwrap();
        let b = Tensor::rand_normal(&[k, n], 0.0, 1.0, dtype, 2).unwrap();
        let got = a.matmul(&b).unwrap().to_f64_vec();
        let want = reference(&a.to_f64_vec(), &b.to_f64_vec(), m, k, n);
        for (g, &(exact, abs)) in got.iter().zip(&want) {
            // f32: the bound and the final rounding of f32 itself is none (it is the Acc);
            // f64: the reference is no better than the result, so twice the bound.
            let bound = 2.0 * gamma(k, u) * abs + gamma(k, 2f64.powi(-53)) * abs;
            assert!((g - exact).abs() <= bound, "{dtype}: {g} vs {exact}");
        }
    }
}

/// Every vector path is the portable source compiled with FMA for its own tile: the same bits
/// on every input, on every path this CPU runs, whatever the shape (edges of tiles and blocks
/// included); a path it lacks runs the portable code.
#[test]
fn every_path_equals_the_portable_path_bit_for_bit() {
    // The paths this CPU lacks are asked for too: they run the portable code.
    let fast: Vec<_> = SimdPath::ALL
        .into_iter()
        .filter(|&p| p != SimdPath::Portable)
        .collect();
    let runs: Vec<_> = fast.iter().filter(|p| p.is_supported()).collect();
    eprintln!("vector paths this CPU runs: {runs:?}");
    for dtype in [
        DType::F32,
        DType::BF16,
        DType::F16,
        DType::F64,
        DType::F8E5M2,
    ] {
        for &(m, k, n) in &[
            (1, 1, 1),
            (5, 7, 17),
            (13, 3, 33),
            (20, 300, 40),
            (97, 33, 300),
            (100, 520, 530),
            // Past the widest panel of B (1024 columns, f32 on AVX-512).
            (14, 40, 1100),
            // Deep enough for panels of 512 columns (past 4 MiB at 1024: f32 accumulators on
            // the FMA kernel from k = 1025), so 600 columns take two.
            (2, 4200, 600),
        ] {
            let a = Tensor::rand_normal(&[m, k], 0.0, 3.0, dtype, 5).unwrap();
            let b = Tensor::rand_normal(&[k, n], 0.0, 3.0, dtype, 6).unwrap();
            let slow = matmul_on(SimdPath::Portable, &a, &b).unwrap();
            for &path in &fast {
                let got = matmul_on(path, &a, &b).unwrap();
                assert_eq!(got, slow, "{path:?} {dtype} {m}x{k}x{n}");
            }
        }
    }
}

/// bf16 products at the edges of the range, where AVX512-BF16's `vdpbf16ps` (which reads
/// subnormals as zero and flushes subnormal results) would differ from the FMA chain: tiny
/// values whose products underflow, subnormals, huge values, infinities and NaN, alone and in
/// some blocks of otherwise ordinary matrices. Every path gives the portable bits. The
/// shapes take the blocks the gate refuses each way to the FMA kernel: a block of `B` outside
/// the gate's half limits is widened once, where it is packed; one within them is widened by
/// each job that needs it, again for each row block (several per job at 200 rows) and depth
/// block (two refused per row block in "tiny blocks"); and a second panel of `B` (1100
/// columns) may be refused where the first is not, or the other way round.
#[test]
fn bf16_products_at_the_edges_of_the_range_are_the_same_on_every_path() {
    let paths: Vec<_> = SimdPath::ALL
        .into_iter()
        .filter(|&p| p != SimdPath::Portable && p.is_supported())
        .collect();
    let mut state = 5u64;
    let mut next = move || {
        state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (state >> 33) as u32
    };
    let shapes = [(200, 700, 70), (13, 300, 1100)];
    let normal = |next: &mut dyn FnMut() -> u32| (next() % 2000) as f32 / 500.0 - 2.0;
    /// A way to change an ordinary value `x`, given a random `r`.
    type Shape = fn(u32, f32) -> f32;
    let cases: [(&str, Shape); 7] = [
        ("ordinary", |_, x| x),
        ("tiny", |_, x| x * 1e-19),
        ("subnormal", |r, x| if r % 97 == 0 { 1e-39 } else { x }),
        ("huge", |_, x| x * 1e18),
        ("nonfinite", |r, x| match r % 501 {
            0 => f32::INFINITY,
            1 => f32::NAN,
            _ => x,
        }),
        ("tiny blocks", |_, x| x),
        ("tiny panel", |_, x| x),
    ];
    for ((name, shape), (m, k, n)) in cases
        .into_iter()
        .flat_map(|case| shapes.map(|shape| (case, shape)))
    {
        let mut values = |count: usize| -> Vec<f32> {
            (0..count)
                .map(|i| shape(i as u32 * 13 + next() % 3, normal(&mut next)))
                .collect()
        };
        let (mut av, mut bv) = (values(m * k), values(k * n));
        if name == "tiny blocks" {
            // Steps from 256 on (the second and third blocks of depth) of A tiny, past what
            // the gate lets pair with ordinary values, and the block before them zero (which
            // pairs), so that the tiny products make the sums.
            for (i, x) in av.iter_mut().enumerate() {
                *x *= if i % k >= 256 { 1e-30 } else { 0.0 };
            }
        }
        if name == "tiny panel" {
            // The columns of B from 1024 on (the second panel, where there is one) tiny.
            for (i, x) in bv.iter_mut().enumerate() {
                if i % n >= 1024 {
                    *x *= 1e-30;
                }
            }
        }
        let a = Tensor::from_vec(av, &[m, k])
            .unwrap()
            .cast(DType::BF16)
            .unwrap();
        let b = Tensor::from_vec(bv, &[k, n])
            .unwrap()
            .cast(DType::BF16)
            .unwrap();
        let want = matmul_on(SimdPath::Portable, &a, &b).unwrap();
        for &path in &paths {
            let got = matmul_on(path, &a, &b).unwrap();
            let bits = |t: &Tensor| -> Vec<u16> {
                t.to_vec::<lowp::bf16>()
                    .unwrap()
                    .iter()
                    .map(|x| x.to_bits())
                    .collect()
            };
            let (g, w) = (bits(&got), bits(&want));
            if let Some(i) = (0..g.len()).find(|&i| g[i] != w[i]) {
                panic!(
                    "{path:?} {name} {m}x{k}x{n}: element {i} is {:#06x}, portable {:#06x}",
                    g[i], w[i]
                );
            }
        }
    }
}

/// Every element is one ordered chain of fused multiply-adds from 0 in the accumulation type,
/// rounded once to the dtype: exactly what a scalar loop of `mul_add` gives, whatever the
/// blocking. The shapes cross the engine's tile, block and panel edges (rows in blocks of 96,
/// depth in blocks of 256, columns in panels of 512) and the dtypes take each way of packing
/// (f32 and f64 as they are; bf16, f16 and f8e4m3fn widened on the bulk conversion paths;
/// bf16 in pairs where the pair kernel runs).
#[test]
fn each_element_is_an_ordered_fma_chain() {
    for dtype in [
        DType::F32,
        DType::F64,
        DType::BF16,
        DType::F16,
        DType::F8E4M3FN,
    ] {
        // 1060 columns cross the widest panel of B (1024, f32 on AVX-512), and 600 the panel
        // of 512 columns that a depth of 4200 takes (f32 accumulators, not pairs; see also
        // `deep_products_in_row_blocks_of_192_are_ordered_fma_chains`). The rows leave 1
        // to 11 rows in a block's last sliver of 12 (or 6), which the kernels for 4, 8 or 9
        // rows take, and 100 rows split in jobs of 50 where the product runs on two threads.
        let shapes = [
            (9, 600, 35),
            (13, 257, 17),
            (7, 300, 40),
            (23, 260, 33),
            (100, 300, 530),
            (14, 70, 1060),
            (2, 4200, 600),
        ];
        for &(m, k, n) in &shapes {
            assert_ordered_fma_chains(dtype, m, k, n);
        }
    }
}

/// Products deep enough for panels of 512 columns on AVX-512 (a panel of 1024 columns past
/// 4 MiB: f32 accumulators on the FMA kernel from a depth of 1025) take row blocks of 192
/// rows. On one thread, so that no job splits the rows: 200 rows are a block of 192 and one
/// of 8, and 600 columns two panels. Each element is still the ordered FMA chain, for f32 and
/// for f16 (widened as its blocks are packed).
#[test]
fn deep_products_in_row_blocks_of_192_are_ordered_fma_chains() {
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .unwrap();
    pool.install(|| {
        assert_ordered_fma_chains(DType::F32, 200, 1030, 600);
        assert_ordered_fma_chains(DType::F16, 200, 1030, 600);
    });
}

/// Checks that each element of the product of random normal `m x k` and `k x n` matrices of
/// `dtype` is the chain `c = fma(a, b, c)` over `p = 0, 1, ..., k - 1` in the accumulation
/// type (f64 for f64, f32 for the others), rounded to `dtype`.
fn assert_ordered_fma_chains(dtype: DType, m: usize, k: usize, n: usize) {
    let a = Tensor::rand_normal(&[m, k], 0.0, 1.0, dtype, 8).unwrap();
    let b = Tensor::rand_normal(&[k, n], 0.0, 1.0, dtype, 9).unwrap();
    let (av, bv) = (a.to_f64_vec(), b.to_f64_vec());
    let got = a.matmul(&b).unwrap().to_f64_vec();
    let chains: Vec<f64> = (0..m * n)
        .map(|at| {
            let (i, j) = (at / n, at % n);
            let terms = (0..k).map(|p| (av[i * k + p], bv[p * n + j]));
            if dtype == DType::F64 {
                terms.fold(0f64, |c, (x, y)| x.mul_add(y, c))
            } else {
                // Every other dtype accumulates in f32, which holds its values exactly.
                let f32s = terms.map(|(x, y)| (x as f32, y as f32));
                f64::from(f32s.fold(0f32, |c, (x, y)| x.mul_add(y, c)))
            }
        })
        .collect();
    let want = Tensor::from_vec(chains, &[m, n])
        .unwrap()
        .cast(dtype)
        .unwrap()
        .to_f64_vec();
    for (at, (g, w)) in got.iter().zip(&want).enumerate() {
        assert_eq!(
            g.to_bits(),
            w.to_bits(),
            "{dtype} {m}x{k}x{n}: ({}, {})",
            at / n,
            at % n
        );
    }
}

#[test]
fn batched_products_broadcast_the_batch_axes() {
    let a = Tensor::rand_normal(&[2, 1, 3, 4], 0.0, 1.0, DType::BF16, 1).unwrap();
    let b = Tensor::rand_normal(&[5, 4, 2], 0.0, 1.0, DType::BF16, 2).unwrap();
    let c = a.matmul(&b).unwrap();
    assert_eq!(c.shape(), &[2, 5, 3, 2]);
    let (av, bv, cv) = (a.to_f64_vec(), b.to_f64_vec(), c.to_f64_vec());
    for i in 0..2 {
        for j in 0..5 {
            let lhs = Tensor::from_vec(av[i * 12..(i + 1) * 12].to_vec(), &[3, 4]).unwrap();
            let rhs = Tensor::from_vec(bv[j * 8..(j + 1) * 8].to_vec(), &[4, 2]).unwrap();
            let one = lhs
                .cast(DType::BF16)
                .unwrap()
                .matmul(&rhs.cast(DType::BF16).unwrap())
                .unwrap()
                .to_f64_vec();
            let at = (i * 5 + j) * 6;
            assert_eq!(&cv[at..at + 6], &one[..], "batch ({i}, {j})");
        }
    }
    // Many small products run in parallel over the batch; the results are the same.
    let a = Tensor::rand_normal(&[300, 4, 5], 0.0, 1.0, DType::F16, 3).unwrap();
    let b = Tensor::rand_normal(&[5, 6], 0.0, 1.0, DType::F16, 4).unwrap();
    let c = a.matmul(&b).unwrap();
    let first = a.to_f64_vec()[..20].to_vec();
    let one = Tensor::from_vec(first, &[4, 5])
        .unwrap()
        .cast(DType::F16)
        .unwrap()
        .matmul(&b)
        .unwrap();
    assert_eq!(&c.to_f64_vec()[..24], &one.to_f64_vec()[..]);
}

#[test]
fn special_values_follow_ieee() {
    let a = Tensor::from_vec(vec![f32::INFINITY, 1.0, 0.0, 1.0], &[2, 2]).unwrap();
    let b = Tensor::from_vec(vec![1.0f32, 0.0, 2.0, 3.0], &[2, 2]).unwrap();
    let c = a
        .cast(DType::F16)
        .unwrap()
        .matmul(&b.cast(DType::F16).unwrap())
        .unwrap();
    let v = c.to_f64_vec();
    assert_eq!(v[0], f64::INFINITY); // inf*1 + 1*2
    assert!(v[1].is_nan()); // inf*0 + 1*3
    assert_eq!(&v[2..], [2.0, 3.0]);
    // The f32 accumulator does not overflow where f16 steps would; the result does.
    let big = Tensor::full(&[1, 4], 200.0, DType::F16).unwrap();
    let col = Tensor::full(&[4, 1], 100.0, DType::F16).unwrap();
    // 4 * 200 * 100 = 80000 is beyond f16's 65504.
    assert_eq!(big.matmul(&col).unwrap().item().unwrap(), f64::INFINITY);
    let col = Tensor::full(&[4, 1], 50.0, DType::F16).unwrap();
    assert_eq!(big.matmul(&col).unwrap().item().unwrap(), 40000.0);
}

#[test]
fn bad_operands_are_errors_naming_the_shapes() {
    let a = Tensor::zeros(&[2, 3], DType::F16).unwrap();
    let b = Tensor::zeros(&[4, 2], DType::F16).unwrap();
    let err = a.matmul(&b).unwrap_err().to_string();
    assert!(
        err.contains("[2, 3]") && err.contains("[4, 2]") && err.contains("inner"),
        "{err}"
    );
    let v = Tensor::zeros(&[3], DType::F16).unwrap();
    let err = a.matmul(&v).unwrap_err().to_string();
    assert!(err.contains("two axes"), "{err}");
    let c = Tensor::zeros(&[3, 2], DType::BF16).unwrap();
    let err = a.matmul(&c).unwrap_err().to_string();
    assert!(err.contains("f16, bf16"), "{err}");
    let x = Tensor::zeros(&[2, 2, 3], DType::F32).unwrap();
    let y = Tensor::zeros(&[3, 3, 1], DType::F32).unwrap();
    let err = x.matmul(&y).unwrap_err().to_string();
    assert!(
        err.contains("[2, 2, 3]") && err.contains("[3, 3, 1]"),
        "{err}"
    );
    // Empty sizes are fine.
    let e = Tensor::zeros(&[0, 3], DType::F32).unwrap();
    let f = Tensor::zeros(&[3, 4], DType::F32).unwrap();
    assert_eq!(e.matmul(&f).unwrap().shape(), &[0, 4]);
    // An empty sum is 0, also right after a product of the same shape has left its
    // accumulators on this thread.
    let ones = |shape: &[usize]| Tensor::ones(shape, DType::F32).unwrap();
    assert_eq!(
        ones(&[2, 3]).matmul(&ones(&[3, 5])).unwrap().to_f64_vec(),
        [3.0; 10]
    );
    let g = Tensor::zeros(&[2, 0], DType::F32).unwrap();
    let h = Tensor::zeros(&[0, 5], DType::F32).unwrap();
    assert_eq!(g.matmul(&h).unwrap().to_f64_vec(), [0.0; 10]);
}

#[test]
fn transpose_swaps_the_last_two_axes() {
    let x = Tensor::arange(0.0, 12.0, 1.0, DType::I32)
        .unwrap()
        .reshape(&[2, 2, 3])
        .unwrap();
    let t = x.transpose().unwrap();
    assert_eq!(t.shape(), &[2, 3, 2]);
    assert_eq!(
        t.to_vec::<i32>().unwrap(),
        [0, 3, 1, 4, 2, 5, 6, 9, 7, 10, 8, 11]
    );
    assert!(
        Tensor::zeros(&[3], DType::F16)
            .unwrap()
            .transpose()
            .is_err()
    );
}
