//! The conversions' fast paths against the rounding engine itself.
//!
//! `from_f32`/`from_f64` (and their `_const` and `_saturating` forms) go through
//! `round::nearest_even_from_bits`, which rounds most inputs with integer tricks specialised by
//! the format; the reference here is `round::encode` of `round::decode_f32`/`decode_f64`, the
//! general engine, which shares none of that code. Results are compared bit for bit, NaNs
//! included: the fast paths hand NaNs to the engine, so their sign and payload must come out
//! exactly as the engine makes them.

use crate::format::{Format, formats};
use crate::round::{self, Rounding};
use crate::{bf16, f16};

/// The engine's nearest-even (or saturating) bits of an f32, without the fast path.
fn engine_f32(fmt: &Format, x: f32, saturate: bool) -> u32 {
    round::encode(fmt, round::decode_f32(x), Rounding::NearestEven, saturate)
}

/// The engine's nearest-even (or saturating) bits of an f64, without the fast path.
fn engine_f64(fmt: &Format, x: f64, saturate: bool) -> u32 {
    round::encode(fmt, round::decode_f64(x), Rounding::NearestEven, saturate)
}

/// bf16 is the top half of an f32, so its fast path is one rounding shift of the whole pattern:
/// every f32 bit pattern, rounding and saturating, on all cores.
#[test]
fn bf16_from_f32_matches_the_engine_every_f32() {
    let threads = std::thread::available_parallelism().map_or(2, |n| n.get()) as u64;
    let per_thread = (1u64 << 32).div_ceil(threads);
    std::thread::scope(|s| {
        for t in 0..threads {
            s.spawn(move || {
                let end = ((t + 1) * per_thread).min(1 << 32);
                for b in t * per_thread..end {
                    let x = f32::from_bits(b as u32);
                    let want = engine_f32(&formats::BF16, x, false);
                    let want_sat = engine_f32(&formats::BF16, x, true);
                    let got = bf16::from_f32(x).to_bits() as u32;
                    let got_sat = bf16::from_f32_saturating(x).to_bits() as u32;
                    if got != want || got_sat != want_sat {
                        panic!(
                            "{b:#010x}: from_f32 {got:#06x} (engine {want:#06x}), \
                             saturating {got_sat:#06x} (engine {want_sat:#06x})"
                        );
                    }
                }
            });
        }
    });
}

/// Every input where rounding into `fmt` can change its mind, as f64: each value of the format,
/// each midpoint between neighbours (the one above MAX, the overflow threshold, included), the
/// f64 neighbours of both, all with both signs; then ±0, ±infinity, NaNs with payloads (quiet
/// and signalling, both signs), f64 subnormals and the f64 extremes.
fn boundaries(fmt: &Format) -> Vec<f64> {
    let mut values: Vec<f64> = (0..1u32 << fmt.total_bits())
        .map(|b| round::to_f64_exact(round::decode(fmt, b)))
        .filter(|v| v.is_finite() && v.is_sign_positive())
        .collect();
    values.sort_by(f64::total_cmp);
    values.dedup();
    let max = *values.last().expect("every format has a value");
    let ulp_of_max = 2f64.powi(fmt.max_exponent() - fmt.mantissa_bits as i32);
    values.push(max + ulp_of_max);
    let mut points: Vec<f64> = values.clone();
    // Every format here has at most 11 significant bits, so each midpoint is an exact f64.
    points.extend(values.windows(2).map(|w| (w[0] + w[1]) / 2.0));
    points.push(values[0] / 2.0); // half the smallest value: the underflow tie
    let mut out = Vec::new();
    for p in points {
        for q in [p, p.next_up(), p.next_down()] {
            out.extend([q, -q]);
        }
    }
    out.extend([0.0, -0.0, f64::INFINITY, f64::NEG_INFINITY]);
    out.extend([f64::MAX, f64::MIN, f64::MIN_POSITIVE, -f64::MIN_POSITIVE]);
    for bits in [
        1u64,                  // the smallest f64 subnormal
        0x000f_ffff_ffff_ffff, // the largest
        0x0008_0000_0000_0000,
        0x0000_0000_dead_beef,
    ] {
        out.extend([f64::from_bits(bits), f64::from_bits(bits | 1 << 63)]);
    }
    for payload in [
        0x8_0000_0000_0000u64, // quiet, no payload
        0x8_0000_0000_0001,    // quiet, lowest payload bit only (dropped by every format)
        0xf_ffff_ffff_ffff,    // quiet, every payload bit
        0xa_aaaa_aaaa_aaaa,    // quiet, alternating payload
        0x0_0000_0000_0001,    // signalling, lowest bit
        0x4_0000_0000_0000,    // signalling, top payload bit
        0x5_5555_5555_5555,    // signalling, alternating payload
    ] {
        let nan = 0x7ff0_0000_0000_0000 | payload;
        out.extend([f64::from_bits(nan), f64::from_bits(nan | 1 << 63)]);
    }
    out
}

/// A xorshift stream of f64 bit patterns: every exponent, sign and payload equally likely.
fn random_bits(seed: u64, count: usize) -> impl Iterator<Item = f64> {
    let mut state = seed;
    (0..count).map(move |_| {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        f64::from_bits(state)
    })
}

/// f16 from f64: the engine's fast path (`from_f64_const`, `from_f64_saturating`, and
/// `from_f64` where the process does not use F16C) on every f16 boundary and its f64
/// neighbours, then random bit patterns, and random values in f16's range (the bit patterns
/// above are mostly far outside it).
#[test]
fn f16_from_f64_matches_the_engine_on_boundaries_and_random_inputs() {
    let fmt = formats::F16;
    let in_range = random_bits(0x2545_f491_4f6c_dd1d, 4_000_000).map(|r| {
        // Keep the sign and mantissa; exponents 2^-30 .. 2^17 cover underflow to overflow.
        let exponent = 1023 - 30 + (r.to_bits() >> 52) % 48;
        f64::from_bits(r.to_bits() & 0x800f_ffff_ffff_ffff | exponent << 52)
    });
    let inputs = boundaries(&fmt)
        .into_iter()
        .chain(random_bits(0x9e37_79b9_7f4a_7c15, 4_000_000))
        .chain(in_range);
    let mut checked = 0usize;
    for x in inputs {
        let want = engine_f64(&fmt, x, false);
        let want_sat = engine_f64(&fmt, x, true);
        let b = x.to_bits();
        assert_eq!(f16::from_f64(x).to_bits() as u32, want, "{x:e} ({b:#018x})");
        assert_eq!(
            f16::from_f64_const(x).to_bits() as u32,
            want,
            "{x:e} ({b:#018x})"
        );
        let sat = f16::from_f64_saturating(x).to_bits() as u32;
        assert_eq!(sat, want_sat, "saturating {x:e} ({b:#018x})");
        checked += 1;
    }
    assert!(checked > 8_000_000);
}

/// The fast path's subnormal and normal cases are written once for every format: the same
/// check from f64 and from f32 (the f32 sweep over every pattern is in tests/exhaustive_f32.rs)
/// for each format's boundaries and a million random f64 patterns each.
#[test]
fn every_format_from_f64_and_f32_matches_the_engine() {
    for fmt in &formats::ALL {
        let inputs = boundaries(fmt)
            .into_iter()
            .chain(random_bits(0x853c_49e6_748f_ea9b, 1_000_000));
        for x in inputs {
            for saturate in [false, true] {
                let b = x.to_bits();
                let got = round::from_f64_nearest(fmt, x, saturate);
                let want = engine_f64(fmt, x, saturate);
                assert_eq!(got, want, "{} {x:e} ({b:#018x}) sat {saturate}", fmt.name);
                let y = x as f32;
                let got = round::from_f32_nearest(fmt, y, saturate);
                let want = engine_f32(fmt, y, saturate);
                assert_eq!(got, want, "{} {y:e} from f32 sat {saturate}", fmt.name);
            }
        }
    }
}
