//! The block-scaled codecs against an independent reference.
//!
//! The reference below shares nothing with lowp's rounding engine or with the codec: it builds
//! the E4M3 and E2M1 values from their bit definitions, rounds by searching those tables with
//! exact comparisons only (every product it compares is exact in f64, so there is no
//! rounding to argue about), computes the scales from the schemes' formulas the same way, and
//! decodes with the reference decoders' f32 arithmetic written out. Every generator is
//! deterministic.

use lowp::Rounding;
use lowp::bulk::random_bits;
use lowp::{f4e2m1fn, f8e4m3fn};
use lowp_io::quant::{
    ElementRounding, QuantOptions, QuantSource, QuantStats, ScaleCheck, ScaleSearch, ScaleType,
    Scheme, amax, check_scales, dequantize, dequantize_f64, nvfp4_tensor_scale, quantize,
};

// ---------------------------------------------------------------------------------------------
// A deterministic generator.

mod common;
use common::Rng;

// ---------------------------------------------------------------------------------------------
// The element formats, from their bit definitions.

/// `2^k`, by doubling or halving 1 (exact down to f64's smallest subnormal).
fn pow2(k: i32) -> f64 {
    let mut p = 1.0f64;
    if k >= 0 {
        for _ in 0..k {
            p *= 2.0;
        }
    } else {
        for _ in 0..-k {
            p *= 0.5;
        }
    }
    p
}

/// `floor(log2(a))` for a positive finite `a`, by comparisons with powers of two.
fn floor_log2(a: f64) -> i32 {
    let (mut k, mut p) = (0, 1.0f64);
    while p > a {
        p *= 0.5;
        k -= 1;
    }
    while k < 1023 && p * 2.0 <= a {
        p *= 2.0;
        k += 1;
    }
    k
}

/// A sign-exponent-mantissa value with subnormals at exponent field 0 (no NaN handling).
fn decode_bits(bits: u32, e_bits: u32, m_bits: u32, bias: i32) -> f64 {
    let negative = (bits >> (e_bits + m_bits)) & 1 == 1;
    let e = ((bits >> m_bits) & ((1 << e_bits) - 1)) as i32;
    let m = (bits & ((1 << m_bits) - 1)) as f64 / (1u32 << m_bits) as f64;
    let mag = if e == 0 {
        m * pow2(1 - bias)
    } else {
        (1.0 + m) * pow2(e - bias)
    };
    if negative { -mag } else { mag }
}

/// E4M3FN: 1-4-3, bias 7, S.1111.111 is NaN, no infinity.
fn e4m3(bits: u8) -> f64 {
    if bits & 0x7f == 0x7f {
        f64::NAN
    } else {
        decode_bits(bits as u32, 4, 3, 7)
    }
}

/// E2M1: 1-2-1, bias 1, every pattern finite.
fn e2m1(nibble: u8) -> f64 {
    decode_bits((nibble & 0xf) as u32, 2, 1, 1)
}

/// The non-negative finite values of an element format, ascending, with their patterns.
struct Table {
    mags: Vec<(u8, f64)>,
    sign_bit: u8,
    /// The NaN pattern (its sign bit follows the input's), or `None`: NaN gives the zero of
    /// the opposite sign, as lowp and ml_dtypes convert it.
    nan: Option<u8>,
    /// A scaled magnitude beyond this (E4M3) or from it up (E2M1) overflows nearest rounding.
    overflow: f64,
    overflow_inclusive: bool,
}

fn e4m3_table() -> Table {
    let mags: Vec<(u8, f64)> = (0u8..0x7f).map(|b| (b, e4m3(b))).collect();
    assert!(mags.windows(2).all(|w| w[0].1 < w[1].1));
    assert_eq!(mags.last().unwrap().1, 448.0);
    Table {
        mags,
        sign_bit: 0x80,
        nan: Some(0x7f),
        // Half way to the next binade step above 448 (which would be 480).
        overflow: 464.0,
        overflow_inclusive: false,
    }
}

fn e2m1_table() -> Table {
    let mags: Vec<(u8, f64)> = (0u8..8).map(|b| (b, e2m1(b))).collect();
    assert_eq!(
        mags.iter().map(|m| m.1).collect::<Vec<_>>(),
        [0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0]
    );
    Table {
        mags,
        sign_bit: 0x8,
        nan: None,
        // Half way to 8, a tie that goes to the even 8 and so overflows.
        overflow: 7.0,
        overflow_inclusive: true,
    }
}

impl Table {
    /// The pattern nearest to `x / d`, ties to the even pattern, saturating at the largest
    /// value; `d == 0` gives ±0. Only exact comparisons: `v * d` and `(lo + hi) * d` have at
    /// most 6 + 28 bits, `2 * |x|` is exact.
    fn nearest(&self, x: f64, d: f64) -> u8 {
        let sign = if x.is_sign_negative() {
            self.sign_bit
        } else {
            0
        };
        if x.is_nan() {
            return self.nan.map_or(sign ^ self.sign_bit, |n| n | sign);
        }
        let ax = x.abs();
        if d == 0.0 {
            return sign;
        }
        let &(max_bits, max) = self.mags.last().unwrap();
        if ax >= max * d {
            return max_bits | sign;
        }
        let i = self.mags.iter().rposition(|&(_, v)| v * d <= ax).unwrap();
        let ((lb, lv), (hb, hv)) = (self.mags[i], self.mags[i + 1]);
        let (twice, mid) = (2.0 * ax, (lv + hv) * d);
        let bits = if twice < mid || (twice == mid && lb.is_multiple_of(2)) {
            lb
        } else {
            hb
        };
        bits | sign
    }

    /// Whether `ax / d` overflows nearest rounding (never under a zero scale, which zeroes).
    fn overflows(&self, ax: f64, d: f64) -> bool {
        if d == 0.0 {
            false
        } else if self.overflow_inclusive {
            ax >= self.overflow * d
        } else {
            ax > self.overflow * d
        }
    }
}

/// `num / den` rounded to the nearest f32, ties to even (`num >= 0` finite, `den > 0` of at
/// most 26 bits), found by exact comparisons; beyond f32's range, +infinity.
fn ratio_to_f32(num: f64, den: f64) -> f32 {
    let up = |g: f32| f32::from_bits(g.to_bits() + 1);
    let down = |g: f32| f32::from_bits(g.to_bits() - 1);
    let mut g = (num / den) as f32;
    if g.is_infinite() {
        g = f32::MAX;
    }
    while g > 0.0 && g as f64 * den > num {
        g = down(g);
    }
    while g < f32::MAX && up(g) as f64 * den <= num {
        g = up(g);
    }
    if g as f64 * den == num {
        return g;
    }
    // The next value up, or where f32's next binade would start.
    let hi = if g == f32::MAX {
        pow2(128)
    } else {
        up(g) as f64
    };
    let (twice, mid) = (2.0 * num, (g as f64 + hi) * den);
    if twice < mid || (twice == mid && g.to_bits().is_multiple_of(2)) {
        g
    } else if g == f32::MAX {
        f32::INFINITY
    } else {
        up(g)
    }
}

// ---------------------------------------------------------------------------------------------
// The reference quantizer.

/// The largest finite magnitude, non-finite count and NaN presence of some values.
fn scan(values: impl Iterator<Item = f64>) -> (f64, usize, bool) {
    let mut r = (0.0f64, 0, false);
    for x in values {
        if x.is_finite() {
            r.0 = r.0.max(x.abs());
        } else {
            r.1 += 1;
            r.2 |= x.is_nan();
        }
    }
    r
}

/// fp8-block's scale_inv for a finite amax.
fn ref_scale_inv(amax: f64) -> f32 {
    if amax == 0.0 {
        return 0.0;
    }
    let s = ratio_to_f32(amax, 448.0);
    if s == 0.0 {
        f32::from_bits(1)
    } else if s.is_infinite() {
        f32::MAX
    } else {
        s
    }
}

/// The positive finite values of a binary format with `e_bits` exponent and `m_bits` mantissa
/// bits (IEEE: the all-ones exponent is not finite), ascending.
fn positive_values(e_bits: u32, m_bits: u32) -> Vec<f64> {
    let bias = (1 << (e_bits - 1)) - 1;
    let top = ((1u32 << e_bits) - 1) << m_bits;
    (1..top)
        .map(|b| decode_bits(b, e_bits, m_bits, bias))
        .collect()
}

/// `num / den` rounded to the nearest of the ascending positive `values` (ties to the even
/// pattern, i.e. the even index), clamped to the smallest and largest: exact comparisons
/// only (`v * den` and `(lo + hi) * den` are exact for the 16-bit formats and `den` = 448).
fn ratio_to_values(num: f64, den: f64, values: &[f64]) -> f64 {
    let i = values.partition_point(|&v| v * den <= num);
    if i == 0 {
        return values[0];
    }
    if i == values.len() {
        return values[i - 1];
    }
    let (lo, hi) = (values[i - 1], values[i]);
    if lo * den == num {
        return lo;
    }
    let (twice, mid) = (2.0 * num, (lo + hi) * den);
    // Index i - 1 holds pattern i (pattern 0 is zero): the even pattern is at an odd index.
    if twice < mid || (twice == mid && (i - 1) % 2 == 1) {
        lo
    } else {
        hi
    }
}

/// fp8-block's and fp8-channel's scale for a finite amax, rounded to `scale_type`.
fn ref_fp8_scale(amax: f64, scale_type: ScaleType) -> f32 {
    if amax == 0.0 {
        return 0.0;
    }
    match scale_type {
        ScaleType::F32 => ref_scale_inv(amax),
        ScaleType::Bf16 => ratio_to_values(amax, 448.0, &positive_values(8, 7)) as f32,
        ScaleType::F16 => ratio_to_values(amax, 448.0, &positive_values(5, 10)) as f32,
    }
}

/// nvfp4's scale_2 for a tensor's amax.
fn ref_tensor_scale(amax: f64) -> f32 {
    if amax == 0.0 {
        return 0.0;
    }
    let s = ratio_to_f32(amax, 2688.0);
    if s == 0.0 {
        f32::from_bits(1)
    } else if s.is_infinite() {
        f32::MAX
    } else {
        s
    }
}

/// What the reference computes for one matrix: data, scales, and per block (in the order the
/// codec counts them) whether it clipped; and over the blocks without NaN or infinity, the
/// elements flushed to zero (a non-zero value whose element's value is zero) and those
/// saturated beyond the top binade (`|x| >= 2^(emax + 1) * d`, an exact product).
struct Reference {
    data: Vec<u8>,
    scales: Vec<u8>,
    clipped: usize,
    blocks: usize,
    flushed: usize,
    saturated: usize,
}

/// Adds a finite block's flushed and saturated elements to `r`: the values `xs`, their
/// elements' values `ys` (decoded from the patterns), under divisor `d` with the element
/// format's top binade ending at `top` (512 for E4M3, 8 for E2M1).
fn count_losses(r: &mut (usize, usize), xs: &[f64], ys: &[f64], d: f64, top: f64) {
    for (&x, &y) in xs.iter().zip(ys) {
        r.0 += (x != 0.0 && y == 0.0) as usize;
        r.1 += (d != 0.0 && x.abs() >= top * d) as usize;
    }
}

/// Quantizes a whole matrix (all bands, for fp8-block) by the schemes' formulas.
fn reference(scheme: Scheme, x: &[f64], cols: usize, scale_2: f32) -> Reference {
    reference_typed(scheme, x, cols, scale_2, ScaleType::F32)
}

/// [`reference`] with fp8 scales rounded to `scale_type`.
fn reference_typed(
    scheme: Scheme,
    x: &[f64],
    cols: usize,
    scale_2: f32,
    scale_type: ScaleType,
) -> Reference {
    let rows = x.len() / cols;
    let (e4, e2) = (e4m3_table(), e2m1_table());
    let mut elems = vec![0u8; x.len()];
    let mut scales = Vec::new();
    let (mut clipped, mut blocks) = (0, 0);
    let mut losses = (0, 0);
    match scheme {
        Scheme::Fp8Block | Scheme::Fp8Channel => {
            // A block is 128 x 128, or a whole row.
            let (rb, cb) = if scheme == Scheme::Fp8Block {
                (128, 128)
            } else {
                (1, cols.max(1))
            };
            for r0 in (0..rows).step_by(rb) {
                let r1 = (r0 + rb).min(rows);
                for c0 in (0..cols).step_by(cb) {
                    let c1 = (c0 + cb).min(cols);
                    let at = |r: usize, c: usize| r * cols + c;
                    let cells = || (r0..r1).flat_map(move |r| (c0..c1).map(move |c| at(r, c)));
                    let (amax, nonfinite, nan) = scan(cells().map(|i| x[i]));
                    let s = ref_fp8_scale(amax, scale_type);
                    for i in cells() {
                        elems[i] = e4.nearest(x[i], s as f64);
                    }
                    let stored = match (nonfinite, nan) {
                        (0, _) => s,
                        (_, true) => f32::NAN,
                        (_, false) => f32::INFINITY,
                    };
                    scales.extend(stored.to_le_bytes());
                    blocks += 1;
                    clipped += (nonfinite == 0 && e4.overflows(amax, s as f64)) as usize;
                    if nonfinite == 0 {
                        let xs: Vec<f64> = cells().map(|i| x[i]).collect();
                        let ys: Vec<f64> = cells().map(|i| e4m3(elems[i])).collect();
                        count_losses(&mut losses, &xs, &ys, s as f64, 512.0);
                    }
                }
            }
        }
        Scheme::Mxfp8 | Scheme::Mxfp4 | Scheme::Nvfp4 => {
            let (table, emax) = match scheme {
                Scheme::Mxfp8 => (&e4, 8),
                _ => (&e2, 2),
            };
            let bc = scheme.block_cols();
            for r in 0..rows {
                for c0 in (0..cols).step_by(bc) {
                    let block = r * cols + c0..r * cols + (c0 + bc).min(cols);
                    let (amax, nonfinite, _) = scan(x[block.clone()].iter().copied());
                    let (byte, d) = if scheme == Scheme::Nvfp4 {
                        let s = if amax == 0.0 || scale_2 == 0.0 {
                            0
                        } else {
                            e4.nearest(amax, 6.0 * scale_2 as f64).max(1)
                        };
                        let byte = if nonfinite > 0 { 0x7f } else { s };
                        (byte, e4m3(s) * scale_2 as f64)
                    } else {
                        let s = if amax == 0.0 {
                            0
                        } else {
                            (floor_log2(amax) - emax + 127).clamp(0, 254)
                        };
                        let byte = if nonfinite > 0 { 255 } else { s as u8 };
                        (byte, pow2(s - 127))
                    };
                    for i in block.clone() {
                        elems[i] = table.nearest(x[i], d);
                    }
                    scales.push(byte);
                    blocks += 1;
                    clipped += (nonfinite == 0 && table.overflows(amax, d)) as usize;
                    if nonfinite == 0 {
                        let (value, top): (fn(u8) -> f64, f64) = if scheme == Scheme::Mxfp8 {
                            (e4m3, 512.0)
                        } else {
                            (e2m1, 8.0)
                        };
                        let ys: Vec<f64> = block.clone().map(|i| value(elems[i])).collect();
                        count_losses(&mut losses, &x[block], &ys, d, top);
                    }
                }
            }
        }
    }
    // Lay the elements out: a byte each, or two nibbles to a byte (even element low), every
    // row padded with zero nibbles to whole blocks.
    let data = match scheme {
        Scheme::Fp8Block | Scheme::Fp8Channel | Scheme::Mxfp8 => elems,
        Scheme::Mxfp4 | Scheme::Nvfp4 => {
            let bc = scheme.block_cols();
            let row_bytes = cols.div_ceil(bc) * bc / 2;
            let mut data = vec![0u8; rows * row_bytes];
            for r in 0..rows {
                for c in 0..cols {
                    data[r * row_bytes + c / 2] |= elems[r * cols + c] << (4 * (c % 2));
                }
            }
            data
        }
    };
    Reference {
        data,
        scales,
        clipped,
        blocks,
        flushed: losses.0,
        saturated: losses.1,
    }
}

/// The reference decoders' f32 arithmetic, for element `q` (its pattern) under scale bits.
fn ref_decode_f32(scheme: Scheme, q: u8, scale: u32, scale_2: f32) -> f32 {
    match scheme {
        // DeepSeek's weight_dequant: x.float() * s.
        Scheme::Fp8Block | Scheme::Fp8Channel => e4m3(q) as f32 * f32::from_bits(scale),
        // ldexp: the element times 2^(s - 127), which is an f32 (2^-127 a subnormal one).
        Scheme::Mxfp8 | Scheme::Mxfp4 => {
            let value = if scheme == Scheme::Mxfp8 {
                e4m3(q)
            } else {
                e2m1(q)
            };
            if scale == 255 {
                f32::NAN
            } else {
                value as f32 * pow2(scale as i32 - 127) as f32
            }
        }
        // ModelOpt: per_block_scale = scale.to(f32) * scale_2, then value * per_block_scale.
        Scheme::Nvfp4 => {
            let per_block = e4m3(scale as u8) as f32 * scale_2;
            e2m1(q) as f32 * per_block
        }
    }
}

/// The exact value of element `q` under scale bits.
fn ref_decode_f64(scheme: Scheme, q: u8, scale: u32, scale_2: f32) -> f64 {
    match scheme {
        Scheme::Fp8Block | Scheme::Fp8Channel => e4m3(q) * f32::from_bits(scale) as f64,
        Scheme::Mxfp8 if scale == 255 => f64::NAN,
        Scheme::Mxfp4 if scale == 255 => f64::NAN,
        Scheme::Mxfp8 => e4m3(q) * pow2(scale as i32 - 127),
        Scheme::Mxfp4 => e2m1(q) * pow2(scale as i32 - 127),
        Scheme::Nvfp4 => e2m1(q) * (e4m3(scale as u8) * scale_2 as f64),
    }
}

/// Element `c` of row `r` and its scale bits, from a matrix's data and scales (all bands).
fn element_and_scale(
    scheme: Scheme,
    data: &[u8],
    scales: &[u8],
    cols: usize,
    r: usize,
    c: usize,
) -> (u8, u32) {
    let q = match scheme {
        Scheme::Fp8Block | Scheme::Fp8Channel | Scheme::Mxfp8 => data[r * cols + c],
        Scheme::Mxfp4 | Scheme::Nvfp4 => {
            (data[r * scheme.data_row_bytes(cols) + c / 2] >> (4 * (c % 2))) & 0xf
        }
    };
    let s = match scheme {
        Scheme::Fp8Block => {
            let i = (r / 128) * scheme.scale_row_bytes(cols) + 4 * (c / 128);
            u32::from_le_bytes(scales[i..i + 4].try_into().unwrap())
        }
        Scheme::Fp8Channel => u32::from_le_bytes(scales[4 * r..4 * r + 4].try_into().unwrap()),
        _ => scales[r * scheme.scale_row_bytes(cols) + c / scheme.block_cols()] as u32,
    };
    (q, s)
}

// ---------------------------------------------------------------------------------------------
// Driving the codec over a whole matrix.

/// Quantizes a matrix through the codec: fp8-block band by band, the others in chunks of
/// `chunk_rows` rows. Output buffers start poisoned, so a byte left unwritten shows.
fn codec<S: QuantSource>(
    scheme: Scheme,
    opts: &QuantOptions,
    x: &[S],
    cols: usize,
    scale_2: f32,
    chunk_rows: usize,
) -> (Vec<u8>, Vec<u8>, QuantStats) {
    let rows = x.len() / cols;
    let (drb, srb) = (scheme.data_row_bytes(cols), scheme.scale_row_bytes(cols));
    let mut data = vec![0xa5u8; rows * drb];
    let mut scales = vec![0xa5u8; scheme.scale_bytes(rows, cols)];
    let mut stats = QuantStats::default();
    let step = if scheme == Scheme::Fp8Block {
        128
    } else {
        chunk_rows.max(1)
    };
    for r0 in (0..rows).step_by(step) {
        let r1 = (r0 + step).min(rows);
        let s = if scheme == Scheme::Fp8Block {
            &mut scales[r0 / 128 * srb..][..srb]
        } else {
            &mut scales[r0 * srb..r1 * srb]
        };
        let part = quantize(
            scheme,
            opts,
            &x[r0 * cols..r1 * cols],
            cols,
            (r0 * cols) as u64,
            scale_2,
            &mut data[r0 * drb..r1 * drb],
            s,
        )
        .unwrap();
        stats.merge(&part);
    }
    (data, scales, stats)
}

/// Decodes a whole matrix exactly (band by band for fp8-block).
fn decode_f64(
    scheme: Scheme,
    data: &[u8],
    scales: &[u8],
    cols: usize,
    scale_2: f32,
    rows: usize,
) -> Vec<f64> {
    let mut out = vec![0f64; rows * cols];
    let (drb, srb) = (scheme.data_row_bytes(cols), scheme.scale_row_bytes(cols));
    let step = if scheme == Scheme::Fp8Block {
        128
    } else {
        rows.max(1)
    };
    for r0 in (0..rows).step_by(step) {
        let r1 = (r0 + step).min(rows);
        let s = if scheme == Scheme::Fp8Block {
            &scales[r0 / 128 * srb..][..srb]
        } else {
            &scales[r0 * srb..r1 * srb]
        };
        dequantize_f64(
            scheme,
            &data[r0 * drb..r1 * drb],
            s,
            cols,
            scale_2,
            &mut out[r0 * cols..r1 * cols],
        )
        .unwrap();
    }
    out
}

/// Block `b`'s element indices, for blocks in the codec's counting order.
fn blocks_of(scheme: Scheme, rows: usize, cols: usize) -> Vec<Vec<usize>> {
    let mut blocks = Vec::new();
    if scheme == Scheme::Fp8Block {
        for r0 in (0..rows).step_by(128) {
            for c0 in (0..cols).step_by(128) {
                blocks.push(
                    (r0..(r0 + 128).min(rows))
                        .flat_map(|r| (c0..(c0 + 128).min(cols)).map(move |c| r * cols + c))
                        .collect(),
                );
            }
        }
    } else {
        let bc = scheme.block_cols();
        for r in 0..rows {
            for c0 in (0..cols).step_by(bc) {
                let c1 = c0.saturating_add(bc).min(cols);
                blocks.push((c0..c1).map(|c| r * cols + c).collect());
            }
        }
    }
    blocks
}

// ---------------------------------------------------------------------------------------------
// Test matrices.

/// A matrix of f32s whose blocks (runs of `kind_cols` columns of a row) are of assorted kinds:
/// Gaussian at assorted magnitudes, zeros of both signs, subnormals, values near f32::MAX,
/// exact ties of the block's own MX scale, random bit patterns, outliers, NaN and infinities.
fn assorted(
    rng: &mut Rng,
    rows: usize,
    cols: usize,
    kind_cols: usize,
    nonfinite: bool,
) -> Vec<f32> {
    let mut x = vec![0f32; rows * cols];
    let e4: Vec<f64> = e4m3_table().mags.iter().map(|m| m.1).collect();
    let e2: Vec<f64> = e2m1_table().mags.iter().map(|m| m.1).collect();
    for r in 0..rows {
        for c0 in (0..cols).step_by(kind_cols) {
            let run = &mut x[r * cols + c0..r * cols + (c0 + kind_cols).min(cols)];
            let kinds = if nonfinite { 10 } else { 9 };
            match rng.below(kinds) {
                0 | 1 => {
                    let scale = pow2(rng.below(60) as i32 - 30);
                    run.iter_mut()
                        .for_each(|v| *v = (rng.gauss() * scale) as f32);
                }
                2 => run.iter_mut().for_each(|v| *v = (rng.sign() * 0.0) as f32),
                3 => run.iter_mut().for_each(|v| {
                    *v = f32::from_bits(rng.next() as u32 & 0x807f_ffff);
                }),
                4 => run.iter_mut().for_each(|v| {
                    *v = (rng.sign() * f32::MAX as f64 * (0.5 + 0.5 * rng.unit())) as f32;
                }),
                5 => {
                    // Ties of the MX scale this block will get: the first value pins the
                    // exponent, the others sit half way between neighbouring elements.
                    let e = rng.below(200) as i32 - 100;
                    let (table, top) = if rng.next() & 1 == 0 {
                        (&e4, 496.0)
                    } else {
                        (&e2, 7.0)
                    };
                    let n = run.len();
                    run[0] = (rng.sign() * top * pow2(e)) as f32;
                    for v in &mut run[1..n] {
                        let i = rng.below(table.len() - 1);
                        *v = (rng.sign() * (table[i] + table[i + 1]) / 2.0 * pow2(e)) as f32;
                    }
                }
                6 => run.iter_mut().for_each(|v| {
                    let bits = rng.next() as u32;
                    let f = f32::from_bits(bits);
                    *v = if f.is_finite() {
                        f
                    } else {
                        f32::from_bits(bits & 0xbfff_ffff)
                    };
                }),
                7 => run.iter_mut().for_each(|v| {
                    let outlier = if rng.below(16) == 0 { 1000.0 } else { 1.0 };
                    *v = (rng.gauss() * outlier) as f32;
                }),
                8 => run.iter_mut().for_each(|v| {
                    // Subnormals and zeros mixed with tiny normals.
                    *v = match rng.below(3) {
                        0 => f32::from_bits(rng.next() as u32 & 0x807f_ffff),
                        1 => (rng.gauss() * 1e-38) as f32,
                        _ => -0.0,
                    };
                }),
                _ => run.iter_mut().for_each(|v| {
                    *v = match rng.below(6) {
                        0 => f32::NAN,
                        1 => -f32::NAN,
                        2 => f32::INFINITY,
                        3 => f32::NEG_INFINITY,
                        _ => rng.gauss() as f32,
                    };
                }),
            }
        }
    }
    x
}

/// Compares the codec's bytes with the reference's, naming the first difference.
fn assert_same_bytes(what: &str, got: &[u8], want: &[u8]) {
    assert_eq!(got.len(), want.len(), "{what}: lengths");
    if let Some(i) = got.iter().zip(want).position(|(a, b)| a != b) {
        panic!(
            "{what}: byte {i} is {:#04x}, the reference has {:#04x}",
            got[i], want[i]
        );
    }
}

const COLS: [usize; 9] = [1, 15, 16, 17, 31, 33, 100, 129, 200];

/// Runs the codec and the reference on `x` and compares bytes, clipping and counts.
fn check_against_reference<S: QuantSource + Into<f64>>(
    scheme: Scheme,
    x: &[S],
    cols: usize,
    what: &str,
) {
    let wide: Vec<f64> = x.iter().map(|&v| v.into()).collect();
    let scale_2 = if scheme == Scheme::Nvfp4 {
        let a = scan(wide.iter().copied()).0;
        let s = nvfp4_tensor_scale(amax(x));
        assert_eq!(
            s.to_bits(),
            ref_tensor_scale(a).to_bits(),
            "{what}: scale_2 of amax {a}"
        );
        s
    } else {
        0.0
    };
    let reference = reference(scheme, &wide, cols, scale_2);
    let rows = x.len() / cols;
    for chunk_rows in [rows, 1, 2] {
        let (data, scales, stats) = codec(
            scheme,
            &QuantOptions::default(),
            x,
            cols,
            scale_2,
            chunk_rows,
        );
        let what = format!("{what}, {scheme}, {rows}x{cols}, chunks of {chunk_rows} rows");
        assert_same_bytes(&format!("{what}: data"), &data, &reference.data);
        assert_same_bytes(&format!("{what}: scales"), &scales, &reference.scales);
        assert_eq!(stats.blocks as usize, reference.blocks, "{what}: blocks");
        assert_eq!(
            stats.clipped_blocks as usize, reference.clipped,
            "{what}: clipped blocks"
        );
        assert_eq!(stats.flushed as usize, reference.flushed, "{what}: flushed");
        assert_eq!(
            stats.saturated as usize, reference.saturated,
            "{what}: saturated"
        );
        assert_eq!(stats.elements as usize, x.len(), "{what}: elements");
        let (a, nonfinite, _) = scan(wide.iter().copied());
        assert_eq!(stats.amax, a, "{what}: amax");
        assert_eq!(stats.nonfinite as usize, nonfinite, "{what}: non-finite");
    }
}

// ---------------------------------------------------------------------------------------------
// The tests.

#[test]
fn random_f32_matrices_match_the_reference() {
    let mut rng = Rng(1);
    for scheme in Scheme::ALL {
        let row_counts: &[usize] = if scheme == Scheme::Fp8Block {
            &[1, 3, 128, 130]
        } else {
            &[1, 3, 8]
        };
        for &cols in &COLS {
            for &rows in row_counts {
                for nonfinite in [false, true] {
                    // Kinds per 16 columns: every scheme sees mixed and pure blocks.
                    let x = assorted(&mut rng, rows, cols, 16, nonfinite);
                    check_against_reference(scheme, &x, cols, "f32");
                }
            }
        }
    }
}

#[test]
fn random_f64_matrices_match_the_reference() {
    let mut rng = Rng(2);
    for scheme in Scheme::ALL {
        let row_counts: &[usize] = if scheme == Scheme::Fp8Block {
            &[1, 130]
        } else {
            &[1, 5]
        };
        for &cols in &COLS {
            for &rows in row_counts {
                // f32 values widened, and full-precision f64s over a range far beyond f32's.
                let narrow: Vec<f64> = assorted(&mut rng, rows, cols, 16, true)
                    .iter()
                    .map(|&v| v as f64)
                    .collect();
                check_against_reference(scheme, &narrow, cols, "f32 as f64");
                let wide: Vec<f64> = (0..rows * cols)
                    .map(|i| {
                        let block = i / 16;
                        match block % 5 {
                            0 => rng.gauss() * pow2((block % 41) as i32 * 20 - 400),
                            1 => rng.gauss() * 1e300,
                            2 => rng.gauss() * 1e-310,
                            3 => rng.sign() * f64::MAX * rng.unit(),
                            _ => rng.gauss(),
                        }
                    })
                    .collect();
                check_against_reference(scheme, &wide, cols, "f64");
            }
        }
    }
}

#[test]
fn fp8_scales_rounded_to_bf16_and_f16_match_the_reference() {
    // compressed-tensors keeps FP8 scales in the model's dtype: the scale is chosen in that
    // type (nearest to amax / 448, clamped to its range), the elements divided by it exactly.
    let mut rng = Rng(12);
    for scale_type in [ScaleType::Bf16, ScaleType::F16] {
        for scheme in [Scheme::Fp8Block, Scheme::Fp8Channel] {
            let opts = QuantOptions {
                scale_type,
                ..QuantOptions::default()
            };
            for (rows, cols) in [(1, 1), (3, 200), (130, 129)] {
                for nonfinite in [false, true] {
                    let x = assorted(&mut rng, rows, cols, 16, nonfinite);
                    let wide: Vec<f64> = x.iter().map(|&v| v as f64).collect();
                    let want = reference_typed(scheme, &wide, cols, 0.0, scale_type);
                    let (data, scales, stats) = codec(scheme, &opts, &x, cols, 0.0, 2);
                    let what = format!("{scheme} {scale_type:?} {rows}x{cols}");
                    assert_same_bytes(&format!("{what}: data"), &data, &want.data);
                    assert_same_bytes(&format!("{what}: scales"), &scales, &want.scales);
                    assert_eq!(stats.clipped_blocks as usize, want.clipped, "{what}");
                    assert_eq!(stats.flushed as usize, want.flushed, "{what}: flushed");
                    assert_eq!(
                        stats.saturated as usize, want.saturated,
                        "{what}: saturated"
                    );
                    // Every finite scale is a value of the type, stored as an f32.
                    for s in scales
                        .chunks_exact(4)
                        .map(|c| f32::from_le_bytes(c.try_into().unwrap()))
                    {
                        if s.is_finite() {
                            let back = match scale_type {
                                ScaleType::Bf16 => lowp::bf16::from_f32(s).to_f32(),
                                _ => lowp::f16::from_f32(s).to_f32(),
                            };
                            assert_eq!(back.to_bits(), s.to_bits(), "{what}: scale {s}");
                        }
                    }
                }
            }
        }
    }
    // Beyond the type's range the scale clamps: f16's largest for a huge amax (elements then
    // saturate), its smallest subnormal for a tiny one.
    let opts = QuantOptions {
        scale_type: ScaleType::F16,
        ..QuantOptions::default()
    };
    let (_, scales, stats) = codec(Scheme::Fp8Channel, &opts, &[1e30f32, 1e-30], 1, 0.0, 1);
    let s: Vec<f32> = scales
        .chunks_exact(4)
        .map(|c| f32::from_le_bytes(c.try_into().unwrap()))
        .collect();
    assert_eq!(s, [65504.0, pow2(-24) as f32]);
    assert_eq!(stats.clipped_blocks, 1);
    // 1e30 / 65504 is far beyond E4M3's top binade; 1e-30 / 2^-24 flushes to zero.
    assert_eq!((stats.saturated, stats.flushed), (1, 1));
}

#[test]
fn exact_ties_round_to_even() {
    let mut rng = Rng(3);
    let e4: Vec<f64> = e4m3_table().mags.iter().map(|m| m.1).collect();
    let e2: Vec<f64> = e2m1_table().mags.iter().map(|m| m.1).collect();
    let ties = |t: &[f64], limit: f64| -> Vec<f64> {
        t.windows(2)
            .map(|w| (w[0] + w[1]) / 2.0)
            .filter(|&m| m <= limit)
            .collect()
    };
    let (t4, t2) = (ties(&e4, 448.0), ties(&e2, 6.0));
    for scheme in Scheme::ALL {
        let (cols, rows) = if scheme == Scheme::Fp8Block {
            (256, 128)
        } else {
            (64, 64)
        };
        let mut x = vec![0f32; rows * cols];
        let mut scale_2 = 0.0;
        let table = if matches!(
            scheme,
            Scheme::Fp8Block | Scheme::Fp8Channel | Scheme::Mxfp8
        ) {
            &t4
        } else {
            &t2
        };
        // Each block: one value that pins the scale, the others exact ties of it.
        for (b, block) in blocks_of(scheme, rows, cols).iter().enumerate() {
            let (pin, unit) = match scheme {
                // scale_inv = 3 * 2^k exactly; ties times it are exact f32s.
                Scheme::Fp8Block | Scheme::Fp8Channel => {
                    let unit = 3.0 * pow2(b as i32 % 40 - 20);
                    (448.0 * unit, unit)
                }
                Scheme::Mxfp8 => {
                    let unit = pow2(rng.below(200) as i32 - 100);
                    (496.0 * unit, unit)
                }
                Scheme::Mxfp4 => {
                    let unit = pow2(rng.below(200) as i32 - 100);
                    (7.0 * unit, unit)
                }
                Scheme::Nvfp4 => {
                    // scale_2 = 1.5 * 2^-5; block scale s (an E4M3 value of few bits), so
                    // amax = 6 * s * scale_2 gives exactly s.
                    scale_2 = 1.5 / 32.0;
                    let s = [1.0, 1.5, 3.0, 0.875, 0.0625, 112.0, 448.0][b % 7];
                    (6.0 * s * scale_2 as f64, s * scale_2 as f64)
                }
            };
            x[block[0]] = pin as f32;
            for &i in &block[1..] {
                let tie = rng.sign() * table[rng.below(table.len())] * unit;
                x[i] = tie as f32;
                assert_eq!(x[i] as f64, tie, "{scheme}: a tie that is an f32");
            }
        }
        let wide: Vec<f64> = x.iter().map(|&v| v as f64).collect();
        let reference = reference(scheme, &wide, cols, scale_2);
        let (data, scales, _) = codec(scheme, &QuantOptions::default(), &x, cols, scale_2, rows);
        assert_same_bytes(
            &format!("{scheme} ties: scales"),
            &scales,
            &reference.scales,
        );
        assert_same_bytes(&format!("{scheme} ties: data"), &data, &reference.data);
        // And independently of the reference's tie rule: every tie landed on an even pattern.
        for r in 0..rows {
            for c in 0..cols {
                let (q, _) = element_and_scale(scheme, &data, &scales, cols, r, c);
                let is_pin = blocks_of(scheme, rows, cols)
                    .iter()
                    .any(|b| b[0] == r * cols + c);
                if !is_pin {
                    assert_eq!(
                        q % 2,
                        0,
                        "{scheme}: tie at ({r}, {c}) gave odd pattern {q:#x}"
                    );
                }
            }
        }
    }
}

#[test]
fn near_ties_round_by_the_exact_quotient() {
    // With a scale of many bits, the f32 nearest to tie * scale is not the tie: its exact
    // quotient lies a hair to one side, while the quotient rounded to f32 often lands on the
    // tie itself, where a second rounding would go to even. Only the exact quotient decides.
    let mut rng = Rng(9);
    let e4: Vec<f64> = e4m3_table().mags.iter().map(|m| m.1).collect();
    let e2: Vec<f64> = e2m1_table().mags.iter().map(|m| m.1).collect();
    let mids = |t: &[f64], limit: f64| -> Vec<f64> {
        t.windows(2)
            .map(|w| (w[0] + w[1]) / 2.0)
            .filter(|&m| m < limit)
            .collect()
    };
    for scheme in [Scheme::Fp8Block, Scheme::Nvfp4] {
        let (rows, cols) = if scheme == Scheme::Fp8Block {
            (128, 1024)
        } else {
            (256, 256)
        };
        let mut x = vec![0f32; rows * cols];
        let scale_2 = (1.0 + rng.unit()) as f32 * 1e-3;
        let ties = if scheme == Scheme::Fp8Block {
            mids(&e4, 448.0)
        } else {
            mids(&e2, 6.0)
        };
        let mut off_tie = 0;
        for block in blocks_of(scheme, rows, cols) {
            // A pin of many bits fixes a scale of many bits, computed here as the reference
            // does.
            let pin = (1.0 + rng.unit()) as f32 * 100.0;
            let d = if scheme == Scheme::Fp8Block {
                ref_scale_inv(pin as f64) as f64
            } else {
                e4m3(e4m3_table().nearest(pin as f64, 6.0 * scale_2 as f64)) * scale_2 as f64
            };
            x[block[0]] = pin;
            for &i in &block[1..] {
                let t = ties[rng.below(ties.len())];
                x[i] = (rng.sign() * t * d) as f32;
                off_tie += (x[i].abs() as f64 != t * d) as usize;
            }
        }
        assert!(
            off_tie > 1000,
            "{scheme}: only {off_tie} values off their tie"
        );
        let wide: Vec<f64> = x.iter().map(|&v| v as f64).collect();
        let reference = reference(scheme, &wide, cols, scale_2);
        let (data, scales, _) = codec(scheme, &QuantOptions::default(), &x, cols, scale_2, rows);
        assert_same_bytes(
            &format!("{scheme} near ties: scales"),
            &scales,
            &reference.scales,
        );
        assert_same_bytes(&format!("{scheme} near ties: data"), &data, &reference.data);
    }
}

#[test]
fn every_element_round_trips_exactly() {
    // Rows of blocks whose first value pins a scale that keeps every element exact, the rest
    // of each block enumerating every finite pattern; at two different scales.
    for scheme in Scheme::ALL {
        let (bits, value): (Vec<u8>, fn(u8) -> f64) = match scheme {
            Scheme::Fp8Block | Scheme::Fp8Channel | Scheme::Mxfp8 => {
                ((0u8..=255).filter(|b| b & 0x7f != 0x7f).collect(), e4m3)
            }
            Scheme::Mxfp4 | Scheme::Nvfp4 => ((0u8..16).collect(), e2m1),
        };
        // fp8-channel's block is the whole row: pinning every 128th value pins it all the same.
        let bc = scheme.block_cols().min(128);
        let per_block = bc - 1;
        for unit_exp in [0, -7] {
            let unit = pow2(unit_exp);
            let nblocks = bits.len().div_ceil(per_block);
            let cols = nblocks * bc;
            let (pin_value, pin_bits, scale_2) = match scheme {
                Scheme::Fp8Block | Scheme::Fp8Channel | Scheme::Mxfp8 => (448.0, 0x7e, 0.0),
                Scheme::Mxfp4 => (6.0, 0x7, 0.0),
                // s = 1 when amax = 6 * scale_2; then elements are exact multiples of scale_2.
                Scheme::Nvfp4 => (6.0, 0x7, unit as f32),
            };
            let mut x = vec![0f32; cols];
            let mut want = vec![0u8; cols];
            for b in 0..nblocks {
                x[b * bc] = (pin_value * unit) as f32;
                want[b * bc] = pin_bits;
                for k in 0..per_block {
                    let pattern = bits[(b * per_block + k) % bits.len()];
                    x[b * bc + 1 + k] = (value(pattern) * unit) as f32;
                    want[b * bc + 1 + k] = pattern;
                }
            }
            let (data, scales, stats) =
                codec(scheme, &QuantOptions::default(), &x, cols, scale_2, 1);
            assert_eq!(stats.noise, 0.0, "{scheme}: exact");
            assert_eq!(stats.sqnr_db(), f64::INFINITY);
            for c in 0..cols {
                let (q, _) = element_and_scale(scheme, &data, &scales, cols, 0, c);
                assert_eq!(q, want[c], "{scheme}: column {c} ({})", x[c]);
            }
            let mut back = vec![0f32; cols];
            dequantize(scheme, &data, &scales, cols, scale_2, &mut back).unwrap();
            for c in 0..cols {
                assert_eq!(
                    back[c].to_bits(),
                    x[c].to_bits(),
                    "{scheme}: column {c} decoded"
                );
            }
        }
    }
}

#[test]
fn every_e8m0_scale_decodes_to_its_power_of_two() {
    for scheme in [Scheme::Mxfp8, Scheme::Mxfp4] {
        let one = if scheme == Scheme::Mxfp8 { 0x38 } else { 0x2 };
        assert_eq!(
            if scheme == Scheme::Mxfp8 {
                e4m3(one)
            } else {
                e2m1(one)
            },
            1.0
        );
        let data = vec![one; scheme.data_row_bytes(1)];
        for s in 0..=255u8 {
            let mut back = [0f32];
            let mut exact = [0f64];
            dequantize(scheme, &data, &[s], 1, 0.0, &mut back).unwrap();
            dequantize_f64(scheme, &data, &[s], 1, 0.0, &mut exact).unwrap();
            if s == 255 {
                assert!(
                    back[0].is_nan() && exact[0].is_nan(),
                    "{scheme}: 255 is NaN"
                );
            } else {
                let want = pow2(s as i32 - 127);
                assert_eq!(exact[0], want, "{scheme}: scale {s}");
                assert_eq!(back[0] as f64, want, "{scheme}: scale {s} in f32");
            }
        }
    }
}

#[test]
fn dequantize_matches_the_reference_decoders_bit_for_bit() {
    let mut rng = Rng(4);
    for scheme in Scheme::ALL {
        for &cols in &COLS {
            let rows = if scheme == Scheme::Fp8Block { 128 } else { 4 };
            let data: Vec<u8> = (0..rows * scheme.data_row_bytes(cols))
                .map(|_| rng.next() as u8)
                .collect();
            let scales: Vec<u8> = (0..scheme.scale_bytes(rows, cols))
                .map(|_| {
                    // Mostly plausible scales, sometimes any bits (NaN, infinity, subnormal).
                    if scheme == Scheme::Fp8Block || rng.below(4) == 0 {
                        rng.next() as u8
                    } else {
                        100 + rng.below(50) as u8
                    }
                })
                .collect();
            let mut scales = scales;
            if scheme == Scheme::Fp8Block {
                // Whole f32 scales: mostly of a realistic size, some raw bit patterns.
                for chunk in scales.chunks_mut(4) {
                    let v = if rng.below(4) == 0 {
                        f32::from_bits(rng.next() as u32)
                    } else {
                        (rng.unit() * 0.01) as f32
                    };
                    chunk.copy_from_slice(&v.to_le_bytes());
                }
            }
            for scale_2 in [1.0f32, 3.1e-5, 1e-40, 0.0] {
                let mut got = vec![0f32; rows * cols];
                let mut exact = vec![0f64; rows * cols];
                dequantize(scheme, &data, &scales, cols, scale_2, &mut got).unwrap();
                dequantize_f64(scheme, &data, &scales, cols, scale_2, &mut exact).unwrap();
                for r in 0..rows {
                    for c in 0..cols {
                        let (q, s) = element_and_scale(scheme, &data, &scales, cols, r, c);
                        let want = ref_decode_f32(scheme, q, s, scale_2);
                        let g = got[r * cols + c];
                        assert!(
                            g.to_bits() == want.to_bits() || (g.is_nan() && want.is_nan()),
                            "{scheme} {rows}x{cols} ({r}, {c}): q {q:#x} scale {s:#x}: {g} vs {want}"
                        );
                        let want = ref_decode_f64(scheme, q, s, scale_2);
                        let g = exact[r * cols + c];
                        assert!(
                            g.to_bits() == want.to_bits() || (g.is_nan() && want.is_nan()),
                            "{scheme} f64 ({r}, {c}): {g} vs {want}"
                        );
                    }
                }
            }
        }
    }
}

#[test]
fn statistics_are_those_of_the_decoded_values() {
    let mut rng = Rng(5);
    for (scheme, cols) in Scheme::ALL.into_iter().flat_map(|s| COLS.map(|c| (s, c))) {
        let rows = if scheme == Scheme::Fp8Block { 130 } else { 16 };
        let x = assorted(&mut rng, rows, cols, 16, true);
        let scale_2 = nvfp4_tensor_scale(amax(&x));
        let (data, scales, stats) = codec(scheme, &QuantOptions::default(), &x, cols, scale_2, 3);
        let back = decode_f64(scheme, &data, &scales, cols, scale_2, rows);
        let (mut signal, mut noise) = (0.0, 0.0);
        for block in blocks_of(scheme, rows, cols) {
            if block.iter().all(|&i| x[i].is_finite()) {
                for &i in &block {
                    let v = x[i] as f64;
                    signal += v * v;
                    noise += (v - back[i]) * (v - back[i]);
                }
            }
        }
        let close = |a: f64, b: f64| (a - b).abs() <= 1e-10 * a.abs().max(b.abs());
        assert!(
            close(stats.signal, signal),
            "{scheme}: signal {} vs {signal}",
            stats.signal
        );
        assert!(
            close(stats.noise, noise),
            "{scheme}: noise {} vs {noise}",
            stats.noise
        );
        let nonfinite = x.iter().filter(|v| !v.is_finite()).count() as u64;
        assert_eq!(stats.nonfinite, nonfinite, "{scheme}");
        assert_eq!(stats.sqnr_db().is_nan(), nonfinite > 0, "{scheme}");
        assert_eq!(stats.rel_frobenius().is_nan(), nonfinite > 0, "{scheme}");
    }
    // The derived figures.
    let s = QuantStats {
        elements: 10,
        signal: 100.0,
        noise: 1.0,
        blocks: 4,
        clipped_blocks: 1,
        nonfinite: 0,
        amax: 3.0,
        flushed: 2,
        saturated: 1,
    };
    assert_eq!(s.sqnr_db(), 20.0);
    assert_eq!(s.rel_frobenius(), 0.1);
    assert_eq!(s.clipped_share(), 0.25);
    let mut m = s;
    m.merge(&QuantStats { amax: 5.0, ..s });
    assert_eq!(
        (m.elements, m.blocks, m.clipped_blocks, m.amax, m.noise),
        (20, 8, 2, 5.0, 2.0)
    );
    assert_eq!((m.flushed, m.saturated), (4, 2));
    assert_eq!(QuantStats::default().clipped_share(), 0.0);
    assert_eq!(QuantStats::default().sqnr_db(), f64::INFINITY);
}

#[test]
fn mse_search_is_never_worse_than_the_formula() {
    let mut rng = Rng(6);
    for scheme in Scheme::ALL {
        let (rows, cols) = if scheme == Scheme::Fp8Block {
            (128, 300)
        } else {
            (64, 300)
        };
        let mut x = assorted(&mut rng, rows, cols, 16, false);
        // And plenty of plain Gaussian blocks with outliers, where a search has something to
        // find.
        for v in x.iter_mut().step_by(3) {
            *v = (rng.gauss() * if rng.below(50) == 0 { 8.0 } else { 1.0 }) as f32;
        }
        let scale_2 = nvfp4_tensor_scale(amax(&x));
        let spec = QuantOptions::default();
        let mse = QuantOptions {
            search: ScaleSearch::Mse,
            ..spec
        };
        let (sd, ss, s_stats) = codec(scheme, &spec, &x, cols, scale_2, rows);
        let (md, ms, m_stats) = codec(scheme, &mse, &x, cols, scale_2, 7);
        let spec_back = decode_f64(scheme, &sd, &ss, cols, scale_2, rows);
        let mse_back = decode_f64(scheme, &md, &ms, cols, scale_2, rows);
        let mut better = 0;
        for block in blocks_of(scheme, rows, cols) {
            if !block.iter().all(|&i| x[i].is_finite()) {
                continue;
            }
            let err = |back: &[f64]| -> f64 {
                block.iter().map(|&i| (x[i] as f64 - back[i]).powi(2)).sum()
            };
            let (e_spec, e_mse) = (err(&spec_back), err(&mse_back));
            assert!(
                e_mse <= e_spec * (1.0 + 1e-12),
                "{scheme}: block error {e_mse} > {e_spec}"
            );
            better += (e_mse < e_spec * (1.0 - 1e-9)) as usize;
        }
        assert!(
            better > 0,
            "{scheme}: the search never found a better scale"
        );
        assert!(m_stats.noise <= s_stats.noise * (1.0 + 1e-12), "{scheme}");
        // Stochastic rounding chooses the same scales as nearest rounding.
        let stochastic = QuantOptions {
            rounding: ElementRounding::Stochastic { seed: 9 },
            ..mse
        };
        let (_, sts, _) = codec(scheme, &stochastic, &x, cols, scale_2, rows);
        assert_eq!(sts, ms, "{scheme}: stochastic + mse scales");
    }
}

#[test]
fn stochastic_rounding_is_lowps_and_independent_of_chunking() {
    let mut rng = Rng(7);
    for scheme in Scheme::ALL {
        let (rows, cols) = if scheme == Scheme::Fp8Block {
            (130, 129)
        } else {
            (12, 100)
        };
        let x = assorted(&mut rng, rows, cols, 16, true);
        let scale_2 = nvfp4_tensor_scale(amax(&x));
        let opts = |seed| QuantOptions {
            rounding: ElementRounding::Stochastic { seed },
            search: ScaleSearch::Spec,
            ..QuantOptions::default()
        };
        let (d1, s1, _) = codec(scheme, &opts(42), &x, cols, scale_2, rows);
        for chunk_rows in [1, 5] {
            let (d2, s2, _) = codec(scheme, &opts(42), &x, cols, scale_2, chunk_rows);
            assert_eq!(
                (&d1, &s1),
                (&d2, &s2),
                "{scheme}: chunks of {chunk_rows} rows"
            );
        }
        let (d3, s3, _) = codec(scheme, &opts(43), &x, cols, scale_2, rows);
        assert_eq!(s1, s3, "{scheme}: scales do not depend on the seed");
        assert_ne!(d1, d3, "{scheme}: another seed, other elements");
        // Each element is lowp's stochastic rounding of x / scale with the random bits of its
        // index in the tensor (the scales being the formula's, which the reference checks).
        let wide: Vec<f64> = x.iter().map(|&v| v as f64).collect();
        let reference = reference(scheme, &wide, cols, scale_2);
        assert_eq!(s1, reference.scales);
        for block in blocks_of(scheme, rows, cols) {
            let (_, nonfinite, _) = scan(block.iter().map(|&i| wide[i]));
            if nonfinite > 0 {
                continue;
            }
            for &i in &block {
                let (r, c) = (i / cols, i % cols);
                let (q, s) = element_and_scale(scheme, &d1, &s1, cols, r, c);
                // The divisor the scale stands for, exactly.
                let d = match scheme {
                    Scheme::Fp8Block | Scheme::Fp8Channel => f32::from_bits(s) as f64,
                    Scheme::Mxfp8 | Scheme::Mxfp4 => pow2(s as i32 - 127),
                    Scheme::Nvfp4 => e4m3(s as u8) * scale_2 as f64,
                };
                let bits = Rounding::Stochastic(random_bits(42, i as u64));
                let quotient = if d == 0.0 {
                    0f64.copysign(wide[i])
                } else {
                    wide[i] / d
                };
                let want = match scheme {
                    Scheme::Fp8Block | Scheme::Fp8Channel | Scheme::Mxfp8 => {
                        f8e4m3fn::from_f64_round_saturating(quotient, bits).to_bits()
                    }
                    _ => f4e2m1fn::from_f64_round_saturating(quotient, bits).to_bits(),
                };
                assert_eq!(q, want, "{scheme}: element ({r}, {c}) = {}", wide[i]);
            }
        }
    }
}

#[test]
fn stochastic_rounding_is_unbiased() {
    // One pinned value per block fixes the scale at 1; every other value is v, between two
    // elements: the mean of many stochastic roundings approaches v. With about 10^5 samples
    // the mean's standard deviation is below 2e-3 of a step; the bound is many times that,
    // and the seed is fixed.
    for (scheme, pin, v, step) in [
        (Scheme::Fp8Block, 448.0f32, 1.3f32, 0.125),
        (Scheme::Mxfp8, 448.0, 1.3, 0.125),
        (Scheme::Mxfp4, 6.0, 2.6, 1.0),
        (Scheme::Nvfp4, 6.0, 2.6, 1.0),
    ] {
        let (rows, cols) = if scheme == Scheme::Fp8Block {
            (128, 1024)
        } else {
            (1024, 128)
        };
        let bc = scheme.block_cols();
        let x: Vec<f32> = (0..rows * cols)
            .map(|i| {
                let pinned = if scheme == Scheme::Fp8Block {
                    i == 0 || (i % cols) % bc == 0 && i / cols == 0
                } else {
                    i % bc == 0
                };
                if pinned { pin } else { v }
            })
            .collect();
        let scale_2 = 1.0;
        let opts = QuantOptions {
            rounding: ElementRounding::Stochastic { seed: 2024 },
            search: ScaleSearch::Spec,
            ..QuantOptions::default()
        };
        let (data, scales, _) = codec(scheme, &opts, &x, cols, scale_2, rows);
        let back = decode_f64(scheme, &data, &scales, cols, scale_2, rows);
        let (mut sum, mut n) = (0.0, 0usize);
        for (i, &b) in back.iter().enumerate() {
            if x[i] == v {
                sum += b;
                n += 1;
            }
        }
        let mean = sum / n as f64;
        assert!(
            (mean - v as f64).abs() < 0.02 * step,
            "{scheme}: mean {mean} of {n} roundings of {v}"
        );
        // Not all the same: both neighbours occur.
        assert!(
            back.iter().any(|&b| b > v as f64) && back.iter().any(|&b| b < v as f64 && b > 0.0)
        );
    }
}

#[test]
fn scale_checks_match_the_reference() {
    // Random elements with whole blocks of ±0 (and NaN elements), random scales with every
    // special value, against the reference's judgement of each block: its factor (the
    // decoders' `scale`, `2^(s - 127)`, `e4m3(s) * second`) NaN, infinite or negative, or zero
    // over an element whose value is not zero.
    let mut rng = Rng(14);
    let specials_f32 = [
        f32::NAN,
        -f32::NAN,
        f32::INFINITY,
        f32::NEG_INFINITY,
        0.0,
        -0.0,
        -1.5,
        f32::from_bits(1),
        f32::MAX,
        0.25,
    ];
    let seconds = [
        1.0f64,
        0.0,
        -0.0,
        -2.0,
        f64::NAN,
        f64::INFINITY,
        2f64.powi(-149),
        3.5,
    ];
    for scheme in Scheme::ALL {
        let mut seen = ScaleCheck::default();
        for &cols in &COLS {
            let rows = if scheme == Scheme::Fp8Block { 130 } else { 7 };
            let (drb, srb) = (scheme.data_row_bytes(cols), scheme.scale_row_bytes(cols));
            let mut data: Vec<u8> = (0..rows * drb).map(|_| rng.next() as u8).collect();
            // Zero about half the blocks' elements (signs kept random).
            let blocks = blocks_of(scheme, rows, cols);
            for block in &blocks {
                if rng.below(2) == 0 {
                    for &i in block {
                        let (r, c) = (i / cols, i % cols);
                        if scheme.bits_per_element() == 8 {
                            data[r * drb + c] &= 0x80;
                        } else {
                            data[r * drb + c / 2] &= !(0x7 << (4 * (c % 2)));
                        }
                    }
                }
            }
            let mut scales = vec![0u8; scheme.scale_bytes(rows, cols)];
            if scheme.float_scales() {
                for c in scales.chunks_exact_mut(4) {
                    let v = if rng.below(2) == 0 {
                        specials_f32[rng.below(specials_f32.len())]
                    } else {
                        (rng.gauss() * 1e-3) as f32
                    };
                    c.copy_from_slice(&v.to_le_bytes());
                }
            } else {
                let specials = [0u8, 0x7f, 0xff, 0x80, 0xfe, 1, 127, 254];
                for b in &mut scales {
                    *b = if rng.below(2) == 0 {
                        specials[rng.below(specials.len())]
                    } else {
                        rng.next() as u8
                    };
                }
            }
            for &second in &seconds {
                let mut want = ScaleCheck::default();
                for block in &blocks {
                    let (r, c) = (block[0] / cols, block[0] % cols);
                    let (_, s) = element_and_scale(scheme, &data, &scales, cols, r, c);
                    let factor = match scheme {
                        Scheme::Fp8Block | Scheme::Fp8Channel => f32::from_bits(s) as f64,
                        Scheme::Mxfp8 | Scheme::Mxfp4 if s == 255 => f64::NAN,
                        Scheme::Mxfp8 | Scheme::Mxfp4 => pow2(s as i32 - 127),
                        Scheme::Nvfp4 => e4m3(s as u8) * second,
                    };
                    let nonzero = block.iter().any(|&i| {
                        let (q, _) =
                            element_and_scale(scheme, &data, &scales, cols, i / cols, i % cols);
                        let v = if scheme.bits_per_element() == 8 {
                            e4m3(q)
                        } else {
                            e2m1(q)
                        };
                        v != 0.0
                    });
                    let bad = factor.is_nan()
                        || factor.is_infinite()
                        || factor < 0.0
                        || (factor == 0.0 && nonzero);
                    want.blocks += 1;
                    want.bad += u64::from(bad);
                }
                // The codec takes fp8-block a band of 128 rows at a time, the others any rows.
                let mut got = ScaleCheck::default();
                let step = if scheme == Scheme::Fp8Block { 128 } else { 3 };
                for r0 in (0..rows).step_by(step) {
                    let r1 = (r0 + step).min(rows);
                    let s = if scheme == Scheme::Fp8Block {
                        &scales[r0 / 128 * srb..][..srb]
                    } else {
                        &scales[r0 * srb..r1 * srb]
                    };
                    let part =
                        check_scales(scheme, &data[r0 * drb..r1 * drb], s, r1 - r0, cols, second)
                            .unwrap();
                    got.merge(&part);
                }
                assert_eq!(got, want, "{scheme} {rows}x{cols} second {second}");
                if second == 1.0 {
                    seen.merge(&want);
                }
            }
        }
        // Both kinds of block were there to be told apart.
        assert!(seen.bad > 0 && seen.bad < seen.blocks, "{scheme}: {seen:?}");
    }
    // Lengths that do not fit are errors.
    let scheme = Scheme::Mxfp8;
    assert!(check_scales(scheme, &[0; 32], &[127], 1, 32, 1.0).is_ok());
    assert!(check_scales(scheme, &[0; 31], &[127], 1, 32, 1.0).is_err());
    assert!(check_scales(scheme, &[0; 32], &[], 1, 32, 1.0).is_err());
    assert!(check_scales(scheme, &[0; 32], &[127], usize::MAX, 32, 1.0).is_err());
}

#[test]
fn bad_lengths_are_errors_not_panics() {
    let opts = QuantOptions::default();
    let x = vec![1.0f32; 64];
    for scheme in Scheme::ALL {
        let cols = 32;
        let rows = 2;
        let (drb, sb) = (scheme.data_row_bytes(cols), scheme.scale_bytes(rows, cols));
        let ok = |d: usize, s: usize| (vec![0u8; d], vec![0u8; s]);
        let (mut d, mut s) = ok(rows * drb, sb);
        assert!(quantize(scheme, &opts, &x, cols, 0, 1.0, &mut d, &mut s).is_ok());
        let mut back = vec![0f32; 64];
        assert!(dequantize(scheme, &d, &s, cols, 1.0, &mut back).is_ok());
        let errs = [
            // Not whole rows.
            quantize(scheme, &opts, &x[..63], cols, 0, 1.0, &mut d, &mut s),
            // No columns but values.
            quantize(scheme, &opts, &x, 0, 0, 1.0, &mut d, &mut s),
            // Data a byte short, a byte long.
            quantize(scheme, &opts, &x, cols, 0, 1.0, &mut d[1..], &mut s),
            quantize(
                scheme,
                &opts,
                &x,
                cols,
                0,
                1.0,
                &mut vec![0; rows * drb + 1],
                &mut s,
            ),
            // Scales short.
            quantize(scheme, &opts, &x, cols, 0, 1.0, &mut d, &mut s[1..]),
        ];
        for (k, e) in errs.into_iter().enumerate() {
            let e = e.unwrap_err();
            assert!(e.contains(scheme.name()), "{scheme} case {k}: {e}");
        }
        assert!(dequantize(scheme, &d[1..], &s, cols, 1.0, &mut back).is_err());
        assert!(dequantize(scheme, &d, &s[1..], cols, 1.0, &mut back).is_err());
        assert!(dequantize(scheme, &d, &s, cols, 1.0, &mut back[1..]).is_err());
        assert!(dequantize_f64(scheme, &d, &s, 0, 1.0, &mut [0f64; 4]).is_err());
        // Empty is fine.
        assert_eq!(
            quantize(scheme, &opts, &[] as &[f64], 0, 0, 1.0, &mut [], &mut []).unwrap(),
            QuantStats::default()
        );
        assert!(quantize(scheme, &opts, &[] as &[f32], 7, 0, 1.0, &mut [], &mut []).is_ok());
    }
    // One fp8-block call is one band of at most 128 rows.
    let tall = vec![0f32; 129];
    let e = quantize(
        Scheme::Fp8Block,
        &opts,
        &tall,
        1,
        0,
        0.0,
        &mut [0; 129],
        &mut [0; 4],
    )
    .unwrap_err();
    assert!(e.contains("128"), "{e}");
    // nvfp4's tensor scale must be usable.
    for bad in [f32::NAN, -1.0, f32::INFINITY] {
        let (mut d, mut s) = (vec![0u8; 16], vec![0u8; 2]);
        assert!(quantize(Scheme::Nvfp4, &opts, &x[..32], 32, 0, bad, &mut d, &mut s).is_err());
    }
}

#[test]
fn scheme_names_and_sizes() {
    for s in Scheme::ALL {
        assert_eq!(Scheme::parse(s.name()), Some(s));
        assert_eq!(Scheme::parse(&s.name().to_uppercase()), Some(s));
        assert_eq!(s.to_string(), s.name());
    }
    assert_eq!(Scheme::parse("FP8_Block"), Some(Scheme::Fp8Block));
    assert_eq!(Scheme::parse(" mxfp8"), None);
    // Rows of 33 columns: 33 bytes of E4M3; FP4 padded to whole blocks.
    let sizes: Vec<_> = Scheme::ALL
        .iter()
        .map(|s| {
            (
                s.data_row_bytes(33),
                s.scale_row_bytes(33),
                s.bits_per_element(),
            )
        })
        .collect();
    assert_eq!(
        sizes,
        [(33, 4, 8), (33, 4, 8), (33, 2, 8), (32, 2, 4), (24, 3, 4)]
    );
    assert_eq!(Scheme::parse("fp8_channel"), Some(Scheme::Fp8Channel));
    // fp8-channel: every row one block, one f32 scale per row, whatever its length.
    assert_eq!(Scheme::Fp8Channel.blocks_per_row(1 << 40), 1);
    assert_eq!(Scheme::Fp8Channel.blocks_per_row(0), 0);
    assert_eq!(Scheme::Fp8Channel.scale_bytes(130, 300), 130 * 4);
    assert_eq!(Scheme::Fp8Block.scale_bytes(130, 300), 2 * 12);
    assert_eq!(Scheme::Nvfp4.scale_bytes(3, 17), 6);
}

#[test]
fn zero_blocks_keep_signed_zeros_and_scale_zero() {
    let x = [0.0f32, -0.0, 0.0, -0.0];
    for scheme in Scheme::ALL {
        let (data, scales, stats) = codec(scheme, &QuantOptions::default(), &x, 4, 0.0, 1);
        assert!(scales.iter().all(|&b| b == 0), "{scheme}: scale 0");
        let signs: Vec<u8> = (0..4)
            .map(|c| element_and_scale(scheme, &data, &scales, 4, 0, c).0)
            .collect();
        let neg = if matches!(
            scheme,
            Scheme::Fp8Block | Scheme::Fp8Channel | Scheme::Mxfp8
        ) {
            0x80
        } else {
            0x8
        };
        assert_eq!(signs, [0, neg, 0, neg], "{scheme}");
        assert_eq!((stats.noise, stats.clipped_blocks), (0.0, 0));
        let mut back = [1f32; 4];
        dequantize(scheme, &data, &scales, 4, 0.0, &mut back).unwrap();
        assert_eq!(back.map(f32::to_bits), x.map(f32::to_bits), "{scheme}");
    }
}

#[test]
fn mse_gain_on_gaussian_weights() {
    // Not a pass/fail measurement: prints what the search gains on weights like a linear
    // layer's (rows of different scales, a few outliers). Run with --nocapture to see it.
    let mut rng = Rng(8);
    let (rows, cols) = (256, 2048);
    let mut x = vec![0f32; rows * cols];
    for r in 0..rows {
        let row_scale = 0.02 * (1.0 + rng.unit());
        for v in &mut x[r * cols..(r + 1) * cols] {
            let outlier = if rng.below(1000) == 0 { 10.0 } else { 1.0 };
            *v = (rng.gauss() * row_scale * outlier) as f32;
        }
    }
    let scale_2 = nvfp4_tensor_scale(amax(&x));
    println!("scheme      spec SQNR   mse SQNR   gain   (dB; {rows}x{cols} Gaussian weights)");
    for scheme in Scheme::ALL {
        let run = |search| {
            let opts = QuantOptions {
                search,
                ..QuantOptions::default()
            };
            codec(scheme, &opts, &x, cols, scale_2, rows).2
        };
        let (spec, mse) = (run(ScaleSearch::Spec), run(ScaleSearch::Mse));
        println!(
            "{:<10} {:>10.3} {:>10.3} {:>6.3}   clipped blocks {:.1}% -> {:.1}%",
            scheme.name(),
            spec.sqnr_db(),
            mse.sqnr_db(),
            mse.sqnr_db() - spec.sqnr_db(),
            100.0 * spec.clipped_share(),
            100.0 * mse.clipped_share()
        );
        assert!(mse.sqnr_db() >= spec.sqnr_db());
    }
}
