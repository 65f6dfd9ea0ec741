//! Reductions: sum, mean, max, min and argmax over the whole tensor or one axis, and add_n.
//!
//! Every reduction accumulates in the dtype's accumulation type ([`FloatElement::Acc`]: f32
//! for the lowp formats and f32, f64 for f64) and rounds once at the end, so a 16-bit sum
//! does not stall at the "truncation ceiling" of a sum kept in the format.
//!
//! # The error bound of `sum`
//!
//! A whole-tensor sum (and each row of an axis sum over the last axis) is computed in blocks
//! of `BLOCK` = 1024 elements, each summed by [`LANES`] = 32 independent running sums of 32
//! elements that are then added pairwise (5 levels); block sums are added pairwise, the
//! split points depending only on the length, so the result is the same on any number of
//! threads. Each element thus passes through at most `k = 31 + 5 + ceil(log2(ceil(n /
//! 1024)))` roundings of the accumulation type, and with unit roundoff `u` (2^-24 for f32)
//! the standard bound for a summation tree of depth `k` (Higham, *Accuracy and Stability of
//! Numerical Algorithms*, 2nd ed., eq. 4.4) gives
//!
//! ```text
//! |computed - exact| <= gamma_k * sum |x_i|,   gamma_k = k u / (1 - k u),
//! ```
//!
//! before the one final rounding to the output dtype (half an ulp of the result more). For a
//! million f16 values `k = 46`: at most 2.7e-6 of `sum |x_i|`. A sum over another axis adds
//! rows pairwise down to runs of 8 added in order: `k = 7 + ceil(log2(ceil(len / 8)))`.
//! `mean` divides the sum by the count in the accumulation type (one more rounding); `max`,
//! `min` and `argmax` are exact. `add_n` adds its `m` operands in order in the accumulation
//! type: `k = m - 1`.

use crate::blocks::{BLOCK, PARALLEL_MIN, for_each_row};
use crate::element::{FloatElement, Real};
use crate::error::{Error, Result};
use crate::registry::{Registry, register};
use crate::shape::split_axis;
use crate::simd::Path;
use crate::simd::reduce::{MAX_BLOCKS, block_sums_elements, lane_sum};
use crate::tensor::Tensor;

pub use crate::simd::reduce::LANES;

/// Rows added in order at the bottom of an axis sum's pairwise tree.
const ROW_RUN: usize = 8;

/// Blocks summed by one leaf of the pairwise recursion, by one call of the block kernel (or
/// with one widening buffer).
const LEAF_BLOCKS: usize = MAX_BLOCKS;

/// The block sums of `s` (at most [`LEAF_BLOCKS`] blocks), added pairwise: the same tree as
/// the recursion above it would make.
fn leaf_sum<T: FloatElement>(path: Path, s: &[T]) -> T::Acc {
    let mut sums = [T::Acc::ZERO; LEAF_BLOCKS];
    let count = s.len().div_ceil(BLOCK).max(1);
    if T::WIDENS_IN_REGISTERS {
        // Widening is exact either way, so both give the same sums; in registers the data is
        // read once, with no buffer written and read back.
        block_sums_elements(path, s, &mut sums[..count]);
    } else {
        let mut buf = [T::Acc::ZERO; BLOCK];
        for (sum, block) in sums.iter_mut().zip(s.chunks(BLOCK)) {
            let wide = &mut buf[..block.len()];
            T::Acc::widen(block, wide);
            *sum = lane_sum(path, wide);
        }
    }
    pairwise_blocks(&sums[..count])
}

/// Block sums added pairwise, the left half taking the odd one, as the recursion splits.
fn pairwise_blocks<C: Real>(sums: &[C]) -> C {
    match sums {
        [one] => *one,
        _ => {
            let (l, r) = sums.split_at(sums.len().div_ceil(2));
            pairwise_blocks(l) + pairwise_blocks(r)
        }
    }
}

/// The pairwise sum of `s` in `T::Acc` (see the module docs), on several threads when long.
pub(crate) fn pairwise_sum<T: FloatElement>(s: &[T]) -> T::Acc {
    pairwise_sum_on(Path::best(), s)
}

/// [`pairwise_sum`] on a chosen path: halves of whole blocks down to [`LEAF_BLOCKS`] blocks,
/// the split points depending on the length alone.
pub(crate) fn pairwise_sum_on<T: FloatElement>(path: Path, s: &[T]) -> T::Acc {
    let blocks = s.len().div_ceil(BLOCK);
    if blocks <= LEAF_BLOCKS {
        return leaf_sum(path, s);
    }
    let (left, right) = s.split_at(blocks.div_ceil(2) * BLOCK);
    if s.len() >= PARALLEL_MIN {
        let (a, b) = rayon::join(
            || pairwise_sum_on(path, left),
            || pairwise_sum_on(path, right),
        );
        a + b
    } else {
        pairwise_sum_on(path, left) + pairwise_sum_on(path, right)
    }
}

/// Adds rows `rows` (each `inner` long, of `src`) element-wise into a new vector, pairwise.
fn sum_rows<T: FloatElement>(src: &[T], inner: usize, rows: std::ops::Range<usize>) -> Vec<T::Acc> {
    if rows.len() <= ROW_RUN {
        let mut acc = vec![T::Acc::ZERO; inner];
        let mut buf = [T::Acc::ZERO; BLOCK];
        for r in rows {
            let row = &src[r * inner..(r + 1) * inner];
            for (a, s) in acc.chunks_mut(BLOCK).zip(row.chunks(BLOCK)) {
                let b = &mut buf[..s.len()];
                T::Acc::widen(s, b);
                for (x, &y) in a.iter_mut().zip(b.iter()) {
                    *x = *x + y;
                }
            }
        }
        return acc;
    }
    let mid = rows.start + rows.len().div_ceil(2);
    let mut left = sum_rows(src, inner, rows.start..mid);
    let right = sum_rows(src, inner, mid..rows.end);
    for (x, y) in left.iter_mut().zip(right) {
        *x = *x + y;
    }
    left
}

/// Checks `axis` against the tensor's rank.
fn check_axis(op: &'static str, x: &Tensor, axis: usize) -> Result<()> {
    if axis < x.rank() {
        Ok(())
    } else {
        Err(Error::Axis {
            op,
            axis,
            rank: x.rank(),
        })
    }
}

/// The shape without `axis`.
fn without(shape: &[usize], axis: usize) -> Vec<usize> {
    let mut s = shape.to_vec();
    s.remove(axis);
    s
}

/// Sums in `T::Acc`, then `finish(sum, count)` rounded once to `T`: the whole tensor (a
/// scalar) or along `axis`.
fn sum_with<T: FloatElement>(
    op: &'static str,
    x: &Tensor,
    axis: Option<usize>,
    finish: impl Fn(T::Acc, usize) -> Result<T::Acc> + Sync,
) -> Result<Tensor> {
    let src = x.as_slice::<T>()?;
    let round = |v: T::Acc| {
        let mut out = [T::default()];
        T::Acc::narrow(&[v], &mut out, false);
        out[0]
    };
    let Some(axis) = axis else {
        let v = finish(pairwise_sum(src), src.len())?;
        return Ok(Tensor::scalar(round(v)));
    };
    check_axis(op, x, axis)?;
    let (outer, len, inner) = split_axis(x.shape(), axis);
    let shape = without(x.shape(), axis);
    if len == 0 {
        finish(T::Acc::ZERO, 0)?;
    }
    let mut out = vec![T::default(); outer * inner];
    if inner == 1 {
        let results: Result<Vec<T::Acc>> = (0..outer)
            .map(|o| finish(pairwise_sum(&src[o * len..(o + 1) * len]), len))
            .collect();
        let results = results?;
        for (o, r) in out.iter_mut().zip(results) {
            *o = round(r);
        }
    } else {
        let first_error = std::sync::Mutex::new(None);
        for_each_row(&mut out, inner.max(1), |o, row| {
            let block = &src[o * len * inner..(o + 1) * len * inner];
            let sums = sum_rows(block, inner, 0..len);
            let mut finished = vec![T::Acc::ZERO; inner];
            for (f, s) in finished.iter_mut().zip(sums) {
                match finish(s, len) {
                    Ok(v) => *f = v,
                    Err(e) => {
                        first_error
                            .lock()
                            .expect("no panics hold it")
                            .get_or_insert(e);
                        return;
                    }
                }
            }
            T::Acc::narrow(&finished, row, false);
        });
        if let Some(e) = first_error.into_inner().expect("no panics hold it") {
            return Err(e);
        }
    }
    Tensor::from_vec(out, &shape)
}

/// `sum`: the whole tensor or one axis, accumulated in `T::Acc`.
fn sum<T: FloatElement>(x: &Tensor, axis: Option<usize>) -> Result<Tensor> {
    sum_with::<T>("sum", x, axis, |s, _| Ok(s))
}

/// `mean`: the sum divided by the count in `T::Acc`; an error for no elements.
fn mean<T: FloatElement>(x: &Tensor, axis: Option<usize>) -> Result<Tensor> {
    sum_with::<T>("mean", x, axis, |s, n| {
        if n == 0 {
            Err(Error::Empty { op: "mean" })
        } else {
            Ok(s / T::Acc::of(n as f64))
        }
    })
}

/// An exact selection over a run of elements: max, min, argmax.
trait Select: Sync {
    /// The op's name.
    const NAME: &'static str;
    /// Whether `x` (at a later index) replaces the current pick `best`.
    fn replaces(best: f64, x: f64) -> bool;
}

/// The larger value; NaN wins (and stays).
struct Larger;
impl Select for Larger {
    const NAME: &'static str = "max";
    #[inline]
    fn replaces(best: f64, x: f64) -> bool {
        !best.is_nan() && (x.is_nan() || x > best)
    }
}

/// The smaller value; NaN wins.
struct Smaller;
impl Select for Smaller {
    const NAME: &'static str = "min";
    #[inline]
    fn replaces(best: f64, x: f64) -> bool {
        !best.is_nan() && (x.is_nan() || x < best)
    }
}

/// The index of the pick of `S` among `n` elements `src[start + k * stride]`, compared as
/// their exact f64 values.
fn pick<T: FloatElement, S: Select>(src: &[T], start: usize, n: usize, stride: usize) -> usize {
    let mut best_index = 0;
    let mut best = src[start].to_f64();
    for k in 1..n {
        let x = src[start + k * stride].to_f64();
        if S::replaces(best, x) {
            best = x;
            best_index = k;
        }
    }
    best_index
}

/// For each output position, the index along the reduced axis (or in the whole tensor) of
/// the element `S` picks; errors for no elements.
fn picks<T: FloatElement, S: Select>(
    name: &'static str,
    x: &Tensor,
    axis: Option<usize>,
) -> Result<(Vec<usize>, Vec<usize>, usize)> {
    let src = x.as_slice::<T>()?;
    let (outer, len, inner, shape) = match axis {
        None => (1, src.len(), 1, Vec::new()),
        Some(a) => {
            check_axis(name, x, a)?;
            let (o, l, i) = split_axis(x.shape(), a);
            (o, l, i, without(x.shape(), a))
        }
    };
    if len == 0 {
        return Err(Error::Empty { op: name });
    }
    let mut out = vec![0usize; outer * inner];
    for_each_row(&mut out, inner.max(1), |o, row| {
        for (i, r) in row.iter_mut().enumerate() {
            *r = pick::<T, S>(src, o * len * inner + i, len, inner);
        }
    });
    Ok((out, shape, len))
}

/// `max` or `min`: the picked element itself (exact).
fn select<T: FloatElement, S: Select>(x: &Tensor, axis: Option<usize>) -> Result<Tensor> {
    let src = x.as_slice::<T>()?;
    let (indices, shape, len) = picks::<T, S>(S::NAME, x, axis)?;
    let inner = match axis {
        None => 1,
        Some(a) => split_axis(x.shape(), a).2,
    };
    let values: Vec<T> = indices
        .iter()
        .enumerate()
        .map(|(p, &k)| {
            let (o, i) = (p / inner, p % inner);
            src[o * len * inner + k * inner + i]
        })
        .collect();
    Tensor::from_vec(values, &shape)
}

/// `max`: the largest element; NaN if any is NaN.
fn max<T: FloatElement>(x: &Tensor, axis: Option<usize>) -> Result<Tensor> {
    select::<T, Larger>(x, axis)
}

/// `min`: the smallest element; NaN if any is NaN.
fn min<T: FloatElement>(x: &Tensor, axis: Option<usize>) -> Result<Tensor> {
    select::<T, Smaller>(x, axis)
}

/// `argmax`: the index (i64) of the first largest element, or of the first NaN (as NumPy);
/// over the flattened tensor, or along `axis`.
fn argmax<T: FloatElement>(x: &Tensor, axis: Option<usize>) -> Result<Tensor> {
    let (indices, shape, _) = picks::<T, Larger>("argmax", x, axis)?;
    Tensor::from_vec(indices.into_iter().map(|i| i as i64).collect(), &shape)
}

/// `add_n`: the element-wise sum of tensors of one dtype and shape, accumulated in order in
/// `T::Acc` and rounded once (the classic example of an FP16 kernel that must reduce in FP32).
fn add_n<T: FloatElement>(xs: &[&Tensor]) -> Result<Tensor> {
    let Some(first) = xs.first() else {
        return Err(Error::Argument {
            op: "add_n",
            message: "needs at least one tensor".to_string(),
        });
    };
    let mut slices = Vec::with_capacity(xs.len());
    for x in xs {
        if x.shape() != first.shape() {
            return Err(Error::Shape {
                op: "add_n",
                message: format!(
                    "every operand must have the shape of the first, {:?}; found {:?}",
                    first.shape(),
                    x.shape()
                ),
            });
        }
        slices.push(x.as_slice::<T>()?);
    }
    let mut out = vec![T::default(); first.numel()];
    crate::blocks::fill_blocks(&mut out, |start, d| {
        let len = d.len();
        let mut acc = [T::Acc::ZERO; BLOCK];
        let mut buf = [T::Acc::ZERO; BLOCK];
        for s in &slices {
            T::Acc::widen(&s[start..start + len], &mut buf[..len]);
            for (a, &b) in acc[..len].iter_mut().zip(&buf[..len]) {
                *a = *a + b;
            }
        }
        T::Acc::narrow(&acc[..len], d, false);
    });
    first.with_data(out)
}

/// The reductions, for every float dtype.
pub(crate) fn register(r: &mut Registry) {
    register!(r, "sum", ReduceKernel, sum, floats);
    register!(r, "mean", ReduceKernel, mean, floats);
    register!(r, "max", ReduceKernel, max, floats);
    register!(r, "min", ReduceKernel, min, floats);
    register!(r, "argmax", ReduceKernel, argmax, floats);
    register!(r, "add_n", NaryKernel, add_n, floats);
}

/// The `k` of the sum's error bound `gamma_k * sum |x_i|` for `n` elements (module docs).
pub fn sum_rounding_depth(n: usize) -> u32 {
    let blocks = n.div_ceil(BLOCK).max(1);
    31 + 5 + blocks.next_power_of_two().trailing_zeros()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The documented sum written out plainly, as the reference: each block widened into a
    /// buffer on the bulk paths, element `i` added into running sum `i % 32` in order, the 32
    /// sums added pairwise (upper half onto lower), and the block sums in the tree of
    /// [`pairwise_sum_on`]. It shares no summing code with the kernels.
    fn buffered<T: FloatElement>(s: &[T]) -> T::Acc {
        let blocks = s.len().div_ceil(BLOCK);
        if blocks > LEAF_BLOCKS {
            let (left, right) = s.split_at(blocks.div_ceil(2) * BLOCK);
            return buffered(left) + buffered(right);
        }
        let block_sum = |block: &[T]| {
            let mut wide = vec![T::Acc::ZERO; block.len()];
            T::Acc::widen(block, &mut wide);
            let mut lanes = vec![T::Acc::ZERO; 32];
            for (i, &x) in wide.iter().enumerate() {
                lanes[i % 32] = lanes[i % 32] + x;
            }
            while lanes.len() > 1 {
                let half = lanes.len() / 2;
                let upper = lanes.split_off(half);
                for (l, u) in lanes.iter_mut().zip(upper) {
                    *l = *l + u;
                }
            }
            lanes[0]
        };
        let mut sums: Vec<T::Acc> = s.chunks(BLOCK).map(block_sum).collect();
        if sums.is_empty() {
            sums.push(T::Acc::ZERO);
        }
        pairwise_blocks(&sums)
    }

    /// Every f16 or bf16 pattern (NaN and infinities left out), or every f16 value as an f32,
    /// shuffled, as one long tensor and in short and odd-length pieces.
    fn check<T: FloatElement>(from_bits: impl Fn(u16) -> T) {
        let mut values: Vec<T> = (0..=u16::MAX)
            .map(from_bits)
            .filter(|x| x.is_finite())
            .collect();
        let mut state = 3u64;
        for i in (1..values.len()).rev() {
            state = state.wrapping_mul(6364136223846793005).wrapping_add(1);
            values.swap(i, (state >> 33) as usize % (i + 1));
        }
        for path in Path::ALL.into_iter().filter(|p| p.is_supported()) {
            for len in [
                0,
                1,
                31,
                33,
                1000,
                1024,
                1025,
                32 * 1024 + 5,
                40_000,
                values.len(),
            ] {
                let s = &values[..len];
                let (got, want) = (pairwise_sum_on(path, s), buffered(s));
                assert_eq!(got.f64().to_bits(), want.f64().to_bits(), "{path:?} {len}");
            }
        }
    }

    /// An f16 from its fields, by arithmetic on them alone (no conversion code of lowp or
    /// of this crate): the reference for the widening instruction. A NaN is the quiet NaN
    /// with the payload in the top of f32's mantissa and the sign kept.
    fn f16_by_fields(bits: u16) -> f32 {
        let negative = bits & 0x8000 != 0;
        let (exponent, mantissa) = ((bits >> 10) & 0x1f, u32::from(bits & 0x3ff));
        let magnitude = match exponent {
            0 => f64::from(mantissa) * 2f64.powi(-24),
            31 if mantissa == 0 => f64::INFINITY,
            31 => {
                let sign = u32::from(negative) << 31;
                return f32::from_bits(sign | 0x7fc0_0000 | (mantissa << 13));
            }
            _ => f64::from(1024 + mantissa) * 2f64.powi(i32::from(exponent) - 25),
        };
        (if negative { -magnitude } else { magnitude }) as f32
    }

    /// Every f16 pattern through each path's widening in the summing loop (`vcvtph2ps` on
    /// the x86 vector paths): 69 copies of one value (two whole chunks of 32 and five in the
    /// tail) sum to 69 times it, exactly, for every finite f16; zeros of either sign give +0
    /// (the running sums start at +0), infinities stay, and a NaN comes out with its sign
    /// and payload, made quiet.
    #[test]
    fn every_f16_pattern_widens_exactly_on_every_path() {
        let mut checked = 0;
        for path in Path::ALL.into_iter().filter(|p| p.is_supported()) {
            for bits in 0..=u16::MAX {
                let block = [lowp::f16::from_bits(bits); 69];
                let got = pairwise_sum_on(path, &block);
                let x = f16_by_fields(bits);
                let want = if x.is_nan() {
                    x
                } else {
                    (0.0 + 69.0 * f64::from(x)) as f32
                };
                assert_eq!(
                    got.to_bits(),
                    want.to_bits(),
                    "{path:?}: f16 {bits:#06x} ({x:e}) x 69 gave {got:e}"
                );
                checked += 1;
            }
        }
        assert!(checked >= 65536);
    }

    #[test]
    fn sums_widened_in_registers_equal_sums_widened_into_a_buffer() {
        check(lowp::f16::from_bits);
        check(lowp::bf16::from_bits);
        check(|bits| lowp::f16::from_bits(bits).to_f32());
    }
}
