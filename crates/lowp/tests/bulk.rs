//! The bulk conversions against the scalar ones, on every path the CPU has: every bit pattern
//! of every format widened, f64 inputs that are not f32s (where the vector paths' round-to-odd
//! step matters), every length up to a few vectors at every start offset (the tails), between
//! formats, stochastic rounding, and the length checks. All 2^32 f32 inputs are narrowed by
//! every path in `exhaustive_f32.rs`.

use lowp::bulk::{Path, random_bits};
use lowp::prelude::*;
use lowp::{Rounding, bf16, f4e2m1fn, f8e4m3fn, f8e5m2, f16};

#[macro_use]
mod common;

fn every_value<T: LowpFloat>() -> Vec<T> {
    (0..1u32 << T::FORMAT.total_bits())
        .map(T::from_bits_u32)
        .collect()
}

fn bits<T: LowpFloat>(v: &[T]) -> Vec<u32> {
    v.iter().map(|x| x.to_bits_u32()).collect()
}

/// Asserts two results are the same bits, naming the first difference (not printing both).
#[track_caller]
fn assert_same(got: &[u32], want: &[u32], what: &str) {
    assert_eq!(got.len(), want.len(), "{what}: lengths");
    if let Some(i) = (0..got.len()).find(|&i| got[i] != want[i]) {
        panic!(
            "{what}: element {i} is {:#x}, expected {:#x}",
            got[i], want[i]
        );
    }
}

#[test]
fn paths_are_listed_and_portable_always_runs() {
    assert!(Path::Portable.is_supported());
    assert!(Path::best().is_supported());
    assert!(Path::supported().any(|p| p == Path::best()));
    for p in Path::ALL {
        assert_eq!(Path::from_name(p.name()), Some(p));
        assert_eq!(p.name().parse::<Path>(), Ok(p));
        assert_eq!(p.to_string(), p.name());
    }
    assert_eq!(Path::from_name(" AVX512 "), Some(Path::Avx512));
    assert!(Path::from_name("sse9").is_none());
    let err = "sse9".parse::<Path>().unwrap_err().to_string();
    assert!(
        err.contains("portable, f16c, avx512, avx512bf16, avx512fp16"),
        "{err}"
    );
    println!(
        "paths this CPU runs: {:?}",
        Path::supported().collect::<Vec<_>>()
    );
}

#[test]
fn unsupported_paths_refuse_and_touch_nothing() {
    for p in Path::ALL.into_iter().filter(|p| !p.is_supported()) {
        let mut dst = [f16::ONE; 4];
        let err = p.convert_from_f32_slice(&mut dst, &[0.0; 4]).unwrap_err();
        assert_eq!(err.0, p);
        assert!(err.to_string().contains(p.name()), "{err}");
        assert_eq!(dst, [f16::ONE; 4]);
    }
}

#[test]
fn every_bit_pattern_widens_like_the_scalar_conversion() {
    for_all_formats!(T => {
        let all = every_value::<T>();
        let want32: Vec<u32> = all.iter().map(|x| x.to_f32_const().to_bits()).collect();
        let want64: Vec<u64> = all.iter().map(|x| x.to_f64().to_bits()).collect();
        for path in Path::supported() {
            let mut f = vec![0f32; all.len()];
            path.convert_to_f32_slice(&all, &mut f).unwrap();
            let mut d = vec![0f64; all.len()];
            path.convert_to_f64_slice(&all, &mut d).unwrap();
            for i in 0..all.len() {
                assert_eq!(f[i].to_bits(), want32[i], "{} {path}: bits {i:#x} to f32", T::FORMAT.name);
                assert_eq!(d[i].to_bits(), want64[i], "{} {path}: bits {i:#x} to f64", T::FORMAT.name);
            }
        }
    });
}

/// f64 inputs probing every rounding decision: each f32 (in steps) with low bits that put it
/// just below, on, and just above the f32 value and the halfway points of coarser formats,
/// plus magnitudes outside f32's range and random bit patterns.
fn f64_probes() -> Vec<f64> {
    let mut v = Vec::new();
    let mut state = 0x1234_5678_9abc_def0u64;
    let mut next = || {
        state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        state
    };
    for hi in (0..1u64 << 32).step_by(4099) {
        let base = f64::from(f32::from_bits(hi as u32)).to_bits();
        for low in [
            0,
            1,
            1 << 28,
            (1 << 28) - 1,
            (1 << 28) + 1,
            (1 << 29) - 1,
            next() & ((1 << 29) - 1),
        ] {
            v.push(f64::from_bits(base | low));
        }
    }
    for _ in 0..400_000 {
        v.push(f64::from_bits(next()));
        // Exponents around f32's and the formats' ranges, random mantissas.
        let e = next() % 400 + 1023 - 200;
        v.push(f64::from_bits(
            (next() & (1 << 63 | ((1 << 52) - 1))) | e << 52,
        ));
    }
    v.extend([
        0.0,
        -0.0,
        f64::INFINITY,
        f64::NEG_INFINITY,
        f64::NAN,
        -f64::NAN,
        f64::MAX,
        f64::MIN_POSITIVE,
        5e-324,
    ]);
    v.push(f64::from_bits(0x7ff0_0000_0000_0001)); // signalling NaN
    v.push(f64::from_bits(0xfff4_0000_dead_beef));
    v
}

#[test]
fn f64_inputs_round_like_the_scalar_conversion() {
    let probes = f64_probes();
    for_all_formats!(T => {
        let want: Vec<u32> = probes.iter().map(|&x| T::from_f64_const(x).to_bits_u32()).collect();
        let want_sat: Vec<u32> = probes.iter().map(|&x| T::from_f64_saturating(x).to_bits_u32()).collect();
        for path in Path::supported() {
            let mut out = vec![T::default(); probes.len()];
            path.convert_from_f64_slice(&mut out, &probes).unwrap();
            let got = bits(&out);
            path.convert_from_f64_slice_saturating(&mut out, &probes).unwrap();
            let got_sat = bits(&out);
            for i in 0..probes.len() {
                assert_eq!(got[i], want[i], "{} {path}: {:e} ({:#018x})", T::FORMAT.name, probes[i], probes[i].to_bits());
                assert_eq!(got_sat[i], want_sat[i], "{} {path} saturating: {:e}", T::FORMAT.name, probes[i]);
            }
        }
    });
}

#[test]
fn every_length_and_offset_covers_the_tails() {
    let values: Vec<f32> = (0..80)
        .map(|i| (i as f32 - 40.0) * 0.37 + 1.0 / (i as f32 + 0.5))
        .collect();
    for_all_formats!(T => {
        for path in Path::supported() {
            for start in 0..4 {
                for len in 0..(values.len() - start) {
                    let src = &values[start..start + len];
                    // A destination that starts at an odd address inside a larger buffer, with
                    // guards on both sides that must survive.
                    let guard = T::from_bits_u32(0x5);
                    let mut buf = vec![guard; len + 2 * start + 2];
                    let dst = &mut buf[start + 1..start + 1 + len];
                    path.convert_from_f32_slice(dst, src).unwrap();
                    for (i, (d, s)) in dst.iter().zip(src).enumerate() {
                        assert_eq!(d.to_bits(), T::from_f32_const(*s).to_bits(), "{} {path} len {len} start {start} elem {i}", T::FORMAT.name);
                    }
                    assert!(buf[..start + 1].iter().chain(&buf[start + 1 + len..]).all(|g| g.to_bits() == guard.to_bits()));
                    let narrow = T::from_f32_const_slice(src);
                    let mut back = vec![-1.0f32; len + 2];
                    path.convert_to_f32_slice(&narrow, &mut back[1..len + 1]).unwrap();
                    assert_eq!(back[0], -1.0);
                    assert_eq!(back[len + 1], -1.0);
                    for (b, n) in back[1..len + 1].iter().zip(&narrow) {
                        assert_eq!(b.to_bits(), n.to_f32_const().to_bits());
                    }
                    let mut back64 = vec![0f64; len];
                    path.convert_to_f64_slice(&narrow, &mut back64).unwrap();
                    let wide: Vec<f64> = src.iter().map(|&x| x as f64 + 1e-12).collect();
                    let mut out = vec![T::default(); len];
                    path.convert_from_f64_slice(&mut out, &wide).unwrap();
                    for (o, w) in out.iter().zip(&wide) {
                        assert_eq!(o.to_bits(), T::from_f64_const(*w).to_bits());
                    }
                }
            }
        }
    });
}

/// Scalar conversion of a slice, the obvious way, for comparisons.
trait FromConstSlice: Sized {
    fn from_f32_const_slice(src: &[f32]) -> Vec<Self>;
}
impl<T: LowpFloat> FromConstSlice for T {
    fn from_f32_const_slice(src: &[f32]) -> Vec<T> {
        src.iter().map(|&x| T::from_f32_const(x)).collect()
    }
}

#[test]
fn slice_methods_match_scalar_conversions() {
    let src: Vec<f32> = (0..1000)
        .map(|i| ((i * 7919) % 2000) as f32 * 0.173 - 170.0)
        .collect();
    let src64: Vec<f64> = src.iter().map(|&x| x as f64 * (1.0 + 1e-9)).collect();
    for_all_formats!(T => {
        let mut dst = vec![T::default(); src.len()];
        dst.convert_from_f32_slice(&src);
        assert_same(&bits(&dst), &bits(&src.iter().map(|&x| T::from_f32(x)).collect::<Vec<_>>()), T::FORMAT.name);
        dst.convert_from_f32_slice_saturating(&src);
        assert_same(&bits(&dst), &bits(&src.iter().map(|&x| T::from_f32_saturating(x)).collect::<Vec<_>>()), T::FORMAT.name);
        dst.convert_from_f64_slice(&src64);
        assert_same(&bits(&dst), &bits(&src64.iter().map(|&x| T::from_f64(x)).collect::<Vec<_>>()), T::FORMAT.name);
        dst.convert_from_f64_slice_saturating(&src64);
        assert_same(&bits(&dst), &bits(&src64.iter().map(|&x| T::from_f64_saturating(x)).collect::<Vec<_>>()), T::FORMAT.name);
        assert_same(&bits(&Vec::<T>::from_f32_slice(&src)), &bits(&src.iter().map(|&x| T::from_f32(x)).collect::<Vec<_>>()), T::FORMAT.name);
        assert_same(&bits(&Vec::<T>::from_f64_slice_saturating(&src64)), &bits(&src64.iter().map(|&x| T::from_f64_saturating(x)).collect::<Vec<_>>()), T::FORMAT.name);
        let wide = dst.to_f32_vec();
        assert!(wide.iter().zip(&dst).all(|(w, d)| w.to_bits() == d.to_f32().to_bits()));
        let wide = dst.to_f64_vec();
        assert!(wide.iter().zip(&dst).all(|(w, d)| w.to_bits() == d.to_f64().to_bits()));
    });
}

#[test]
fn between_formats_rounds_once() {
    let all = every_value::<f16>();
    for_all_formats!(T => {
        let mut dst = vec![T::default(); all.len()];
        dst.convert_from_slice(&all);
        let want: Vec<T> = all.iter().map(|x| x.convert::<T>()).collect();
        assert_same(&bits(&dst), &bits(&want), &format!("f16 to {}", T::FORMAT.name));
        dst.convert_from_slice_saturating(&all);
        let want: Vec<T> = all.iter().map(|x| x.convert_saturating::<T>()).collect();
        assert_same(&bits(&dst), &bits(&want), &format!("f16 to {} saturating", T::FORMAT.name));
        // And back: every value of T into bf16.
        let values = every_value::<T>();
        let b: Vec<bf16> = values.to_vec_of();
        assert_same(&bits(&b), &bits(&values.iter().map(|x| x.convert::<bf16>()).collect::<Vec<_>>()), T::FORMAT.name);
        assert_same(&bits(&Vec::<bf16>::from_slice_of(&values)), &bits(&b), T::FORMAT.name);
    });
}

#[test]
fn stochastic_rounding_uses_the_documented_bits() {
    let src: Vec<f32> = (0..5000).map(|i| 1.0 + i as f32 * 1.0e-4).collect();
    let src64: Vec<f64> = src.iter().map(|&x| x as f64 + 1e-10).collect();
    for_all_formats!(T => {
        let mut a = vec![T::default(); src.len()];
        a.convert_from_f32_slice_stochastic(&src, 42);
        let want: Vec<T> = src.iter().enumerate().map(|(i, &x)| T::from_f32_round(x, Rounding::Stochastic(random_bits(42, i as u64)))).collect();
        assert_same(&bits(&a), &bits(&want), T::FORMAT.name);
        a.convert_from_f32_slice_stochastic_saturating(&src, 42);
        let want: Vec<T> = src.iter().enumerate().map(|(i, &x)| T::from_f32_round_saturating(x, Rounding::Stochastic(random_bits(42, i as u64)))).collect();
        assert_same(&bits(&a), &bits(&want), T::FORMAT.name);
        a.convert_from_f64_slice_stochastic(&src64, 7);
        let want: Vec<T> = src64.iter().enumerate().map(|(i, &x)| T::from_f64_round(x, Rounding::Stochastic(random_bits(7, i as u64)))).collect();
        assert_same(&bits(&a), &bits(&want), T::FORMAT.name);
        a.convert_from_f64_slice_stochastic_saturating(&src64, 7);
        let want: Vec<T> = src64.iter().enumerate().map(|(i, &x)| T::from_f64_round_saturating(x, Rounding::Stochastic(random_bits(7, i as u64)))).collect();
        assert_same(&bits(&a), &bits(&want), T::FORMAT.name);
        assert_same(&bits(&Vec::<T>::from_f32_slice_stochastic(&src, 3)), &bits(&Vec::<T>::from_f32_slice_stochastic(&src, 3)), T::FORMAT.name);
        assert_eq!(Vec::<T>::from_f64_slice_stochastic(&src64, 3).len(), src.len());
    });
}

#[test]
fn stochastic_rounding_is_unbiased_over_a_slice() {
    // 1 + 1/4 of bf16's ulp at 1: a quarter of the elements should round up.
    let x = 1.0 + 0.25 * 2f32.powi(-7);
    let src = vec![x; 100_000];
    let v = Vec::<bf16>::from_f32_slice_stochastic(&src, 9);
    let up = v.iter().filter(|b| b.to_f32() > 1.0).count();
    assert!((24_000..26_000).contains(&up), "{up} of 100000 rounded up");
    let other = Vec::<bf16>::from_f32_slice_stochastic(&src, 10);
    assert_ne!(
        bits(&v),
        bits(&other),
        "a different seed draws different bits"
    );
}

#[test]
fn random_bits_are_spread() {
    // Every bit position is set about half the time over consecutive indices.
    let n = 100_000u64;
    for bit in 0..32 {
        let ones = (0..n)
            .filter(|&i| random_bits(1, i) >> bit & 1 == 1)
            .count() as f64;
        assert!((ones / n as f64 - 0.5).abs() < 0.01, "bit {bit}: {ones}");
    }
    assert_ne!(random_bits(1, 0), random_bits(2, 0));
}

#[test]
#[should_panic(
    expected = "lowp: destination and source slices have different lengths (destination 3, source 4)"
)]
fn length_mismatch_panics_with_both_lengths() {
    let mut dst = [f16::ZERO; 3];
    dst.convert_from_f32_slice(&[0.0; 4]);
}

#[test]
#[should_panic(expected = "destination 5, source 4")]
fn length_mismatch_panics_when_widening() {
    let src = [bf16::ZERO; 4];
    src.convert_to_f64_slice(&mut [0.0; 5]);
}

#[test]
#[should_panic(expected = "destination 2, source 1")]
fn length_mismatch_panics_between_formats() {
    let mut dst = [f8e5m2::ZERO; 2];
    dst.convert_from_slice(&[bf16::ZERO]);
}

#[test]
fn empty_slices_convert() {
    let mut dst: [f16; 0] = [];
    dst.convert_from_f32_slice(&[]);
    assert!(Vec::<f8e4m3fn>::from_f64_slice(&[]).is_empty());
    assert!(dst.to_f32_vec().is_empty());
}

#[cfg(feature = "rayon")]
#[test]
fn parallel_conversions_equal_the_serial_ones() {
    use lowp::bulk::LowpParSliceExt;
    // Long enough to be split across threads, with a ragged end.
    let n = 1_000_003;
    let src: Vec<f32> = (0..n).map(|i| (i as f32 * 0.7).sin() * 600.0).collect();
    let src64: Vec<f64> = src.iter().map(|&x| x as f64 * (1.0 + 1e-10)).collect();
    for_all_formats!(T => {
        let mut par = vec![T::default(); n];
        par.par_convert_from_f32_slice(&src);
        assert_same(&bits(&par), &bits(&Vec::<T>::from_f32_slice(&src)), T::FORMAT.name);
        par.par_convert_from_f32_slice_saturating(&src);
        assert_same(&bits(&par), &bits(&Vec::<T>::from_f32_slice_saturating(&src)), T::FORMAT.name);
        par.par_convert_from_f64_slice(&src64);
        assert_same(&bits(&par), &bits(&Vec::<T>::from_f64_slice(&src64)), T::FORMAT.name);
        par.par_convert_from_f64_slice_saturating(&src64);
        assert_same(&bits(&par), &bits(&Vec::<T>::from_f64_slice_saturating(&src64)), T::FORMAT.name);
        par.par_convert_from_f32_slice_stochastic(&src, 5);
        assert_same(&bits(&par), &bits(&Vec::<T>::from_f32_slice_stochastic(&src, 5)), T::FORMAT.name);
        par.par_convert_from_f64_slice_stochastic(&src64, 5);
        assert_same(&bits(&par), &bits(&Vec::<T>::from_f64_slice_stochastic(&src64, 5)), T::FORMAT.name);
        let mut wide = vec![0f32; n];
        par.par_convert_to_f32_slice(&mut wide);
        assert!(wide.iter().zip(par.to_f32_vec()).all(|(a, b)| a.to_bits() == b.to_bits()));
        let mut wide = vec![0f64; n];
        par.par_convert_to_f64_slice(&mut wide);
        assert!(wide.iter().zip(par.to_f64_vec()).all(|(a, b)| a.to_bits() == b.to_bits()));
    });
}

#[cfg(feature = "rayon")]
#[test]
#[should_panic(expected = "destination 9, source 10")]
fn parallel_length_mismatch_panics() {
    use lowp::bulk::LowpParSliceExt;
    let mut dst = [f16::ZERO; 9];
    dst.par_convert_from_f32_slice(&[0.0; 10]);
}

#[test]
fn outputs_past_the_streaming_threshold_match_too() {
    // Outputs from 8 MiB on are written with non-temporal stores after a head that brings the
    // destination to a 64-byte boundary; start one element in to make the head non-empty. A
    // narrowing converts two halves side by side: lengths one block (32 or 64 values) apart
    // leave a different number of whole blocks after the halves. Every output starts with
    // each element one bit away from its result, so that any element left unwritten shows.
    let n = (9 << 20) + 37 + 64;
    let src: Vec<f32> = (0..n as u32 + 1)
        .map(|i| f32::from_bits(i.wrapping_mul(2_654_435_761)))
        .collect();
    for_all_formats!(T => {
        for extra in [37, 37 + 32, 37 + 64] {
            let len = (9 << 20) / size_of::<T>() + extra;
            let src = &src[1..len + 1];
            let want: Vec<u32> = src.iter().map(|&x| T::from_f32_const(x).to_bits_u32()).collect();
            for path in Path::supported() {
                let mut out: Vec<T> = [0].iter().chain(&want).map(|&b| T::from_bits_u32(b ^ 1)).collect();
                path.convert_from_f32_slice(&mut out[1..], src).unwrap();
                let what = format!("{} {path} streaming, {len} values", T::FORMAT.name);
                assert_same(&bits(&out[1..]), &want, &what);
                // Widening into an f32 buffer over the threshold.
                let wide_len = ((9 << 20) / 4).min(len);
                let narrow = &out[1..wide_len + 1];
                let want: Vec<u32> = narrow.iter().map(|x| x.to_f32_const().to_bits()).collect();
                let mut wide: Vec<f32> = [0].iter().chain(&want).map(|&b| f32::from_bits(b ^ 1)).collect();
                path.convert_to_f32_slice(narrow, &mut wide[1..]).unwrap();
                let got: Vec<u32> = wide[1..].iter().map(|x| x.to_bits()).collect();
                assert_same(&got, &want, &format!("{what}, widened"));
            }
        }
    });
}

#[test]
fn fp4_packs_low_nibble_first() {
    use lowp::bulk::{pack_f4, unpack_f4};
    // Every byte unpacks to its two nibbles, low first, and packs back.
    let bytes: Vec<u8> = (0..=255).collect();
    let mut values = vec![f4e2m1fn::ZERO; 512];
    unpack_f4(&bytes, &mut values);
    for (i, pair) in values.chunks(2).enumerate() {
        assert_eq!(pair[0].to_bits(), i as u8 & 0xF);
        assert_eq!(pair[1].to_bits(), i as u8 >> 4);
    }
    let mut again = vec![0u8; 256];
    pack_f4(&values, &mut again);
    assert_eq!(again, bytes);
    // An odd count leaves the last high nibble zero, and ignores it when unpacking.
    let mut odd = [0u8; 2];
    pack_f4(&values[2..5], &mut odd); // 1, 0, 2
    assert_eq!(odd, [0x01, 0x02]);
    // A whole group of 32 and an odd tail after it.
    let mut tail = [0u8; 19];
    pack_f4(&values[..37], &mut tail);
    assert_eq!(tail[..18], bytes[..18]);
    assert_eq!(tail[18], bytes[18] & 0xF);
    let mut back = [f4e2m1fn::ONE; 37];
    unpack_f4(&tail, &mut back);
    // By bits: -0 would equal +0 as values.
    let bits = |v: &[f4e2m1fn]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
    assert_eq!(bits(&back), bits(&values[..37]));
    let mut three = [f4e2m1fn::ONE; 3];
    unpack_f4(&[0x21, 0xF3], &mut three);
    assert_eq!(three.map(f4e2m1fn::to_bits), [0x1, 0x2, 0x3]);
}

#[test]
fn fp4_packing_from_f32_rounds_like_the_scalar_conversion() {
    use lowp::bulk::{pack_f4_from_f32, pack_f4_vec, unpack_f4_to_f32, unpack_f4_vec};
    for len in [0usize, 1, 2, 3, 1023, 1024, 1025, 2047, 5001] {
        let src: Vec<f32> = (0..len)
            .map(|i| {
                f32::from_bits((i as u32).wrapping_mul(2_654_435_761) >> 1 | (i as u32 & 1) << 31)
            })
            .collect();
        let mut packed = vec![0u8; len.div_ceil(2)];
        pack_f4_from_f32(&src, &mut packed);
        for (i, x) in src.iter().enumerate() {
            let nibble = packed[i / 2] >> (4 * (i % 2)) & 0xF;
            assert_eq!(
                nibble,
                f4e2m1fn::from_f32(*x).to_bits(),
                "len {len} element {i}: {x:e}"
            );
        }
        if len % 2 == 1 {
            assert_eq!(
                packed[len / 2] >> 4,
                0,
                "len {len}: the spare nibble is zero"
            );
        }
        assert_eq!(pack_f4_vec(&src), packed);
        let mut back = vec![0f32; len];
        unpack_f4_to_f32(&packed, &mut back);
        for (i, (b, x)) in back.iter().zip(&src).enumerate() {
            assert_eq!(
                b.to_bits(),
                f4e2m1fn::from_f32(*x).to_f32().to_bits(),
                "len {len} element {i}"
            );
        }
        assert_eq!(unpack_f4_vec(&packed, len), back);
    }
}

#[test]
#[should_panic(expected = "lowp: 5 FP4 values pack into 3 bytes, but the byte slice has 2")]
fn fp4_packing_checks_the_byte_count() {
    lowp::bulk::pack_f4_from_f32(&[0.0; 5], &mut [0u8; 2]);
}

#[test]
#[should_panic(expected = "lowp: 4 FP4 values pack into 2 bytes, but the byte slice has 3")]
fn fp4_unpacking_checks_the_byte_count() {
    lowp::bulk::unpack_f4_to_f32(&[0u8; 3], &mut [0.0; 4]);
}

#[test]
fn the_environment_variable_pins_the_active_path() {
    match std::env::var(lowp::bulk::FORCE_PATH_VAR)
        .ok()
        .filter(|v| !v.trim().is_empty())
    {
        Some(name) => {
            let asked = Path::from_name(&name).expect("CI sets a valid path name");
            if asked.is_supported() {
                assert_eq!(lowp::bulk::active_path(), asked);
                assert_eq!(lowp::bulk::forced_path_error(), None);
            } else {
                assert_eq!(lowp::bulk::active_path(), Path::best());
                let err = lowp::bulk::forced_path_error().unwrap().to_string();
                assert!(err.contains(asked.name()), "{err}");
            }
        }
        None => assert_eq!(lowp::bulk::active_path(), Path::best()),
    }
}
