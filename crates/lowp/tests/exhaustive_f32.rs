//! Every f32 bit pattern, converted to every format, checked four ways:
//!
//! 1. against an independent reference: the sorted list of the format's values as f64 and a
//!    search for the nearest one, ties to even (round to nearest even and saturating);
//! 2. against ml_dtypes 0.6.0, through digests of its results over all 2^32 inputs stored in
//!    `tests/data/ml_dtypes_f32.digest` (made by `tools/ml_dtypes_digest.py`);
//! 3. the run-time path (`from_f32`: F16C where the CPU has it) against the software engine
//!    (`from_f32_const`), bit for bit, NaN payloads included;
//! 4. `from_f64` of the same (exactly widened) value against `from_f32`;
//! 5. every vector path of the bulk conversions the CPU has (`lowp::bulk::Path`), from f32 and
//!    from the same values as f64, rounding and saturating, against the scalar results, bit
//!    for bit. (The portable path is the software engine of points 1 to 4 in a loop; its loop
//!    is tested in `bulk.rs`, so it is not run here a second time over all 2^32 inputs.)
//!
//! 2^32 inputs times 12 formats is a lot of work: the inputs are split into blocks of 2^24 that
//! all cores take in turn, and the reference is worked out once per run of inputs that share a
//! result (their magnitudes rise with their bits within each sign, so a run ends at the next
//! midpoint or value) instead of for each input.

use lowp::bulk::Path;
use lowp::{
    LowpFloat, bf16, f4e2m1fn, f6e2m3fn, f6e3m2fn, f8e3m4, f8e4m3, f8e4m3fn, f8e4m3fnuz, f8e5m2,
    f8e5m2fnuz, f8e8m0fnu, f16,
};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

const BLOCK: u64 = 1 << 24;
const BLOCKS: usize = 256;
const BLOCKS_PER_LINE: usize = 16;
/// Inputs per batch handed to the bulk paths.
const BATCH: usize = 4096;
/// The 64-bit FNV prime, the multiplier of the digest's Horner hash.
const P: u64 = 0x100_0000_01b3;

/// The finite non-negative values of a format in increasing order, with one virtual value past
/// the largest (the next value an unbounded exponent would give): rounding to it is overflow.
struct Reference {
    values: Vec<f64>,
    bits: Vec<u32>,
    odd: Vec<bool>,
}

fn reference<T: LowpFloat>() -> Reference {
    let fmt = T::FORMAT;
    let mut entries: Vec<(f64, u32)> = (0..1u32 << fmt.total_bits())
        .map(|b| (T::from_bits_u32(b).to_f64(), b))
        .filter(|(v, _)| v.is_finite() && *v >= 0.0 && v.is_sign_positive())
        .collect();
    entries.sort_by(|a, b| a.0.total_cmp(&b.0));
    entries.dedup_by(|a, b| a.0 == b.0);
    let max = entries.last().unwrap().1;
    let ulp_of_max = 2f64.powi(fmt.max_exponent() - fmt.mantissa_bits as i32);
    entries.push((entries.last().unwrap().0 + ulp_of_max, max + 1));
    // Ties go to the even significand; with no mantissa bits (E8M0) every significand is the
    // single odd digit 1, and the tie goes up, as ml_dtypes has it.
    let odd = entries
        .iter()
        .map(|&(_, b)| fmt.mantissa_bits == 0 || b & 1 == 1)
        .collect();
    Reference {
        values: entries.iter().map(|e| e.0).collect(),
        bits: entries.iter().map(|e| e.1).collect(),
        odd,
    }
}

/// What the conversion of `x` must give: `Some(bits)`, or `None` for "a NaN".
/// `i` is the index of the largest reference value at or below `|x|`, if any.
fn expected<T: LowpFloat>(r: &Reference, x: f32, i: Option<usize>, saturate: bool) -> Option<u32> {
    let fmt = T::FORMAT;
    let neg = x.is_sign_negative();
    let sign = if neg { fmt.sign_mask() } else { 0 };
    if x.is_nan() {
        // As ml_dtypes converts NaNs (tests/nan_inputs.rs has its measured table): the sign,
        // and in f16 the top 9 payload bits, on the canonical NaN; the FNUZ and E8M0 formats'
        // one NaN; in FP6/FP4, which have no NaN, the zero of the opposite sign.
        return Some(match fmt.nan_bits() {
            None => sign ^ fmt.sign_mask(),
            Some(nan) if fmt.name == "f16" => sign | nan | (x.to_bits() >> 13 & 0x1ff),
            Some(nan) => sign | nan,
        });
    }
    if (neg && !fmt.signed) || (x == 0.0 && !fmt.has_zero()) {
        return None;
    }
    let overflow = || {
        if saturate || (!fmt.has_infinity() && !fmt.has_nan()) {
            Some(sign | fmt.max_finite_bits())
        } else {
            fmt.infinity_bits().map(|inf| sign | inf)
        }
    };
    if x.is_infinite() {
        return overflow();
    }
    let a = (x as f64).abs();
    let Some(i) = i else {
        // Below the smallest value of a format without zero: clamp to it.
        return Some(r.bits[0]);
    };
    let last = r.values.len() - 1;
    let j = if a == r.values[i] || i == last {
        i
    } else {
        let (twice, sum) = (2.0 * a, r.values[i] + r.values[i + 1]);
        // Past the midpoint, or on it with an odd lower neighbour (ties go to the even one, or
        // up when both are odd, with no mantissa bits): the upper neighbour.
        if twice > sum || (twice == sum && r.odd[i]) {
            i + 1
        } else {
            i
        }
    };
    if j == last {
        return overflow();
    }
    let mag = r.bits[j];
    if mag == 0 && !fmt.has_negative_zero() {
        return Some(0);
    }
    Some(sign | mag)
}

/// The first input bit pattern after `b` (same sign) whose reference result may differ from
/// that of `x`, the input with bits `b`: the result is constant from a value up to the midpoint
/// above it, and from there up to the next value (both exactly f32s), with the midpoint itself
/// a tie. Special inputs stand alone.
fn same_result_until(r: &Reference, x: f32, below: Option<usize>, b: u64) -> u64 {
    let a = (x as f64).abs();
    if !x.is_finite() || a == 0.0 {
        return b + 1;
    }
    let sign = b & 0x8000_0000;
    let bits_of = |v: f64| sign | (v as f32).to_bits() as u64; // 2^128 becomes infinity's bits
    let last = r.values.len() - 1;
    match below {
        None => bits_of(r.values[0]),
        Some(i) if i == last => bits_of(f64::INFINITY),
        Some(i) => {
            let mid = (r.values[i] + r.values[i + 1]) / 2.0;
            if a < mid {
                bits_of(mid)
            } else if a == mid {
                b + 1
            } else {
                bits_of(r.values[i + 1])
            }
        }
    }
}

/// `bits + 1` with NaN made canonical, as the digest hashes it.
fn digest_value<T: LowpFloat>(x: f32, out: T) -> u64 {
    let fmt = T::FORMAT;
    let bits = out.to_bits_u32();
    let v = if x.is_nan() && !fmt.has_nan() {
        0
    } else if fmt.is_nan_bits(bits) {
        fmt.nan_bits().unwrap()
    } else {
        bits
    };
    v as u64 + 1
}

/// The one known disagreement with ml_dtypes 0.6.0: it rounds the f32 subnormals in
/// (2^-127, 1.5 * 2^-127) up to 2^-126 in E8M0, although 2^-127 is nearer; lowp rounds to
/// nearest. Returns what ml_dtypes gives there.
fn ml_dtypes_e8m0_quirk(x: f32) -> Option<u32> {
    (0x0040_0001..=0x005f_ffff)
        .contains(&x.to_bits())
        .then_some(1)
}

/// A run of consecutive inputs with their scalar results, for the bulk paths to reproduce.
struct Batch<T> {
    inputs: Vec<f32>,
    wide: Vec<f64>,
    nearest: Vec<T>,
    saturated: Vec<T>,
    out: Vec<T>,
}

impl<T: LowpFloat> Default for Batch<T> {
    fn default() -> Self {
        Batch {
            inputs: Vec::with_capacity(BATCH),
            wide: Vec::with_capacity(BATCH),
            nearest: Vec::with_capacity(BATCH),
            saturated: Vec::with_capacity(BATCH),
            out: vec![T::default(); BATCH],
        }
    }
}

impl<T: LowpFloat> Batch<T> {
    fn push(&mut self, x: f32, nearest: T, saturated: T) {
        self.inputs.push(x);
        self.wide.push(x as f64);
        self.nearest.push(nearest);
        self.saturated.push(saturated);
    }

    /// Runs every supported path over the batch, records mismatches, and empties it.
    fn check_paths(&mut self, failures: &Mutex<Vec<String>>) {
        let n = self.inputs.len();
        let out = &mut self.out[..n];
        for path in Path::supported().filter(|&p| p != Path::Portable) {
            let runs: [(&str, &[T]); 4] = [
                ("f32", &self.nearest),
                ("f32 saturating", &self.saturated),
                ("f64", &self.nearest),
                ("f64 saturating", &self.saturated),
            ];
            for (what, want) in runs {
                match what {
                    "f32" => path.convert_from_f32_slice(out, &self.inputs),
                    "f32 saturating" => path.convert_from_f32_slice_saturating(out, &self.inputs),
                    "f64" => path.convert_from_f64_slice(out, &self.wide),
                    _ => path.convert_from_f64_slice_saturating(out, &self.wide),
                }
                .unwrap();
                if let Some(i) = (0..n).find(|&i| out[i].to_bits() != want[i].to_bits()) {
                    failures.lock().unwrap().push(format!(
                        "{} path {path} from {what}: {:e} ({:#010x}) gave {:#x}, scalar {:#x}",
                        T::FORMAT.name,
                        self.inputs[i],
                        self.inputs[i].to_bits(),
                        out[i].to_bits_u32(),
                        want[i].to_bits_u32()
                    ));
                }
            }
        }
        self.inputs.clear();
        self.wide.clear();
        self.nearest.clear();
        self.saturated.clear();
    }
}

/// Checks all 2^32 inputs for `T`; returns the digest lines.
fn sweep<T: LowpFloat>() -> Vec<u64> {
    let fmt = T::FORMAT;
    let r = reference::<T>();
    let next = AtomicUsize::new(0);
    let hashes = Mutex::new(vec![0u64; BLOCKS]);
    let failures = Mutex::new(Vec::<String>::new());
    let threads = std::thread::available_parallelism().map_or(2, |n| n.get());
    // The types whose `from_f32` may take a CPU instruction instead of the software engine.
    let hardware = fmt.name == "f16";
    let e8m0 = fmt.name == "f8e8m0fnu";
    std::thread::scope(|scope| {
        for _ in 0..threads {
            scope.spawn(|| {
                loop {
                    let block = next.fetch_add(1, Ordering::Relaxed);
                    if block >= BLOCKS {
                        break;
                    }
                    let start = block as u64 * BLOCK;
                    let mut hash = 0u64;
                    // The reference results of the current run of inputs, valid below `run_end`.
                    let (mut want, mut want_sat, mut run_end) = (None, None, start);
                    let mut batch = Batch::<T>::default();
                    for b in start..start + BLOCK {
                        let x = f32::from_bits(b as u32);
                        if b >= run_end {
                            let a = (x as f64).abs();
                            let i = r.values.partition_point(|&v| v <= a);
                            let below = if i == 0 { None } else { Some(i - 1) };
                            want = expected::<T>(&r, x, below, false);
                            want_sat = expected::<T>(&r, x, below, true);
                            run_end = same_result_until(&r, x, below, b);
                        }
                        let got = T::from_f32(x);
                        let sat = T::from_f32_saturating(x);
                        batch.push(x, got, sat);
                        if batch.inputs.len() == BATCH {
                            batch.check_paths(&failures);
                        }
                        for (bits, want, what) in
                            [(got.to_bits_u32(), want, "nearest"), (sat.to_bits_u32(), want_sat, "saturating")]
                        {
                            let ok = match want {
                                None => fmt.is_nan_bits(bits),
                                Some(w) => w == bits,
                            };
                            if !ok {
                                failures.lock().unwrap().push(format!(
                                    "{} {what}: {x:e} ({b:#010x}) gave {bits:#x}, reference {want:x?}",
                                    fmt.name
                                ));
                            }
                        }
                        let soft = if hardware {
                            T::from_f32_const(x).to_bits_u32()
                        } else {
                            got.to_bits_u32()
                        };
                        let wide = T::from_f64(x as f64).to_bits_u32();
                        if soft != got.to_bits_u32() || wide != got.to_bits_u32() {
                            failures.lock().unwrap().push(format!(
                                "{}: {b:#010x} run-time path {:#x}, software {soft:#x}, from_f64 {wide:#x}",
                                fmt.name,
                                got.to_bits_u32()
                            ));
                        }
                        let quirk = if e8m0 { ml_dtypes_e8m0_quirk(x) } else { None };
                        let value = quirk.map_or_else(|| digest_value(x, got), |q| q as u64 + 1);
                        hash = hash.wrapping_mul(P).wrapping_add(value);
                    }
                    hashes.lock().unwrap()[block] = hash;
                    if failures.lock().unwrap().len() > 20 {
                        break;
                    }
                }
            });
        }
    });
    let failures = failures.into_inner().unwrap();
    assert!(
        failures.is_empty(),
        "{} failures, first:\n{}",
        failures.len(),
        failures[..failures.len().min(20)].join("\n")
    );
    let hashes = hashes.into_inner().unwrap();
    hashes
        .chunks(BLOCKS_PER_LINE)
        .map(|c| {
            c.iter()
                .fold(0u64, |h, &v| h.wrapping_mul(P).wrapping_add(v))
        })
        .collect()
}

/// The ml_dtypes digest lines for one format.
fn ml_dtypes_digest(name: &str) -> Vec<u64> {
    let text = include_str!("data/ml_dtypes_f32.digest");
    text.lines()
        .filter(|l| !l.starts_with('#'))
        .filter_map(|l| {
            let parts: Vec<&str> = l.split_whitespace().collect();
            (parts.len() == 3 && parts[0] == name)
                .then(|| u64::from_str_radix(parts[2], 16).unwrap())
        })
        .collect()
}

/// Says once per run, on the terminal, which hardware paths this machine lets the run check and
/// which it cannot: a note about a run can then say "AVX-512 FP16 path: exercised" or "not on
/// this machine". Written to stderr directly, which the test harness does not capture.
fn announce_paths() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let names = |supported: bool| -> Vec<&str> {
            Path::ALL
                .into_iter()
                .filter(|p| *p != Path::Portable && p.is_supported() == supported)
                .map(|p| p.name())
                .collect()
        };
        let line = format!(
            "exhaustive_f32: vector paths exercised: {:?}; not on this machine: {:?}; \
             f16::from_f64 on {}\n",
            names(true),
            names(false),
            if lowp::cpu::scalar_f16c() {
                "F16C"
            } else {
                "the software engine"
            }
        );
        use std::io::Write;
        let _ = std::io::stderr().write_all(line.as_bytes());
    });
}

fn check<T: LowpFloat>() {
    announce_paths();
    let name = T::FORMAT.name;
    let ours = sweep::<T>();
    let theirs = ml_dtypes_digest(name);
    assert_eq!(theirs.len(), ours.len(), "{name}: digest file incomplete");
    for (line, (a, b)) in ours.iter().zip(&theirs).enumerate() {
        let lo = line as u64 * BLOCK * BLOCKS_PER_LINE as u64;
        let hi = lo + BLOCK * BLOCKS_PER_LINE as u64 - 1;
        assert_eq!(
            a, b,
            "{name}: f32 inputs {lo:#010x}..={hi:#010x} differ from ml_dtypes 0.6.0"
        );
    }
    let vector_paths: Vec<_> = Path::supported()
        .filter(|&p| p != Path::Portable)
        .map(|p| p.name())
        .collect();
    let scalar = if name == "f16" || name == "bf16" {
        "the code written for the format"
    } else {
        "the software engine"
    };
    println!(
        "{name}: all 2^32 f32 inputs agree with the reference and ml_dtypes; scalar conversions \
         on {scalar}, and the same bits on the vector paths {vector_paths:?}"
    );
}

#[test]
fn f16_every_f32() {
    check::<f16>();
}

#[test]
fn bf16_every_f32() {
    check::<bf16>();
}

#[test]
fn f8e4m3fn_every_f32() {
    check::<f8e4m3fn>();
}

#[test]
fn f8e5m2_every_f32() {
    check::<f8e5m2>();
}

#[test]
fn f8e4m3fnuz_every_f32() {
    check::<f8e4m3fnuz>();
}

#[test]
fn f8e5m2fnuz_every_f32() {
    check::<f8e5m2fnuz>();
}

#[test]
fn f8e4m3_every_f32() {
    check::<f8e4m3>();
}

#[test]
fn f8e3m4_every_f32() {
    check::<f8e3m4>();
}

#[test]
fn f8e8m0fnu_every_f32() {
    check::<f8e8m0fnu>();
    // Where ml_dtypes rounds up, the nearest value is 2^-127 (bits 0).
    for b in [0x0040_0001u32, 0x0050_0000, 0x005f_ffff] {
        assert_eq!(f8e8m0fnu::from_f32(f32::from_bits(b)).to_bits(), 0);
    }
    assert_eq!(
        f8e8m0fnu::from_f32(f32::from_bits(0x0060_0000)).to_bits(),
        1,
        "tie goes up"
    );
}

#[test]
fn f6e2m3fn_every_f32() {
    check::<f6e2m3fn>();
}

#[test]
fn f6e3m2fn_every_f32() {
    check::<f6e3m2fn>();
}

#[test]
fn f4e2m1fn_every_f32() {
    check::<f4e2m1fn>();
}
