//! Times lowp's scalar `f16` and `bf16` operations beside the `half` crate's, in one process:
//! `to_f32`, `from_f32` and `a * b + c`, each over an array of 4096 values, repeated for about
//! 20 ms, the best of 9 rounds that alternate between the two crates. Prints nanoseconds per
//! value and lowp's time as a fraction of half's. `run.sh` beside this file builds it the ways
//! crates are tested (overflow checks on; optimized or not; with and without `std`).

use std::hint::black_box;
use std::time::{Duration, Instant};

const N: usize = 4096;

/// Nanoseconds per value of `f`, which processes `N` values per call: the best of `rounds`.
fn ns_per_value(f: &mut dyn FnMut() -> u32) -> f64 {
    let mut calls = 1u64;
    // Calls per timing: enough for about 20 ms.
    loop {
        let start = Instant::now();
        for _ in 0..calls {
            black_box(f());
        }
        if start.elapsed() > Duration::from_millis(20) {
            break;
        }
        calls *= 2;
    }
    let start = Instant::now();
    for _ in 0..calls {
        black_box(f());
    }
    start.elapsed().as_nanos() as f64 / (calls as f64 * N as f64)
}

/// The inputs: f32 values spread over [-8, 8] (normal in both formats), as bits of each
/// format and as f32.
struct Inputs {
    f32s: Vec<f32>,
    f16_bits: Vec<u16>,
    bf16_bits: Vec<u16>,
}

fn inputs() -> Inputs {
    let mut state = 0x9e37_79b9_7f4a_7c15u64;
    let f32s: Vec<f32> = (0..N)
        .map(|_| {
            state = state
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            ((state >> 40) as f32 / (1u64 << 24) as f32) * 16.0 - 8.0
        })
        .collect();
    Inputs {
        f16_bits: f32s.iter().map(|&x| half::f16::from_f32(x).to_bits()).collect(),
        bf16_bits: f32s.iter().map(|&x| half::bf16::from_f32(x).to_bits()).collect(),
        f32s,
    }
}

/// The three operations on one type of one crate, as closures over the inputs.
macro_rules! ops {
    ($krate:ident, $t:ident, $bits:expr, $f32s:expr) => {{
        let bits: &[u16] = $bits;
        let f32s: &[f32] = $f32s;
        let values: Vec<$krate::$t> = bits.iter().map(|&b| $krate::$t::from_bits(b)).collect();
        let to_f32 = move || {
            let mut acc = 0u32;
            for &b in bits {
                acc ^= $krate::$t::from_bits(b).to_f32().to_bits();
            }
            acc
        };
        let from_f32 = move || {
            let mut acc = 0u16;
            for &x in f32s {
                acc ^= $krate::$t::from_f32(x).to_bits();
            }
            acc as u32
        };
        let fma = move || {
            let mut acc = 0u16;
            let mut i = 0;
            while i + 2 < N {
                let r = values[i] * values[i + 1] + values[i + 2];
                acc ^= r.to_bits();
                i += 1;
            }
            acc as u32
        };
        (to_f32, from_f32, fma)
    }};
}

fn main() {
    let input = inputs();
    println!(
        "profile {} (overflow checks on), std {}",
        option_env!("HALF_SPEED_PROFILE").unwrap_or("?"),
        if cfg!(feature = "std") { "on" } else { "off" }
    );
    println!(
        "{:<16} {:>10} {:>10} {:>12}",
        "op", "lowp ns", "half ns", "lowp / half"
    );
    let (l16, l16f, l16m) = ops!(lowp, f16, &input.f16_bits, &input.f32s);
    let (h16, h16f, h16m) = ops!(half, f16, &input.f16_bits, &input.f32s);
    let (lb, lbf, lbm) = ops!(lowp, bf16, &input.bf16_bits, &input.f32s);
    let (hb, hbf, hbm) = ops!(half, bf16, &input.bf16_bits, &input.f32s);
    let mut rows: Vec<(&str, Box<dyn FnMut() -> u32>, Box<dyn FnMut() -> u32>)> = vec![
        ("f16 to_f32", Box::new(l16), Box::new(h16)),
        ("f16 from_f32", Box::new(l16f), Box::new(h16f)),
        ("f16 a * b + c", Box::new(l16m), Box::new(h16m)),
        ("bf16 to_f32", Box::new(lb), Box::new(hb)),
        ("bf16 from_f32", Box::new(lbf), Box::new(hbf)),
        ("bf16 a * b + c", Box::new(lbm), Box::new(hbm)),
    ];
    for (name, lowp_op, half_op) in &mut rows {
        // Both crates give the same bits: the timing compares equal work.
        assert_eq!(lowp_op(), half_op(), "{name}: the crates disagree");
        let (mut best_lowp, mut best_half) = (f64::MAX, f64::MAX);
        for _ in 0..9 {
            best_lowp = best_lowp.min(ns_per_value(lowp_op.as_mut()));
            best_half = best_half.min(ns_per_value(half_op.as_mut()));
        }
        println!(
            "{name:<16} {best_lowp:>10.2} {best_half:>10.2} {:>12.2}",
            best_lowp / best_half
        );
    }
}
