//! The conversions behind `lowp.cast`, on plain Rust slices (no Python here, so the unit tests
//! run them directly).
//!
//! Arrays arrive as slices of `f32`, `f64` or the bit patterns of a lowp format (`u16` for the
//! 16-bit formats, `u8` for the rest, as NumPy, ml_dtypes and lowp all store them), and leave
//! the same way. Every conversion is element-wise, so a large array is cut into one contiguous
//! range per thread and each range is converted with lowp's single-threaded bulk methods: the
//! result does not depend on the split (stochastic rounding takes the random bits of each
//! element's index in the whole array, as lowp's slice methods do).

use lowp::bulk::{ThreadSplit, random_bits};
use lowp::prelude::*;
use lowp::{Format, LowpFloat, Rounding};
use std::sync::{Arc, Mutex};

// Formats reach here only through `lowp::Format::from_name`, so the dispatch finds each.
pub(crate) use lowp::with_format;

/// A lowp type together with the integer NumPy stores it as.
pub trait Stored: LowpFloat {
    /// `u16` for f16 and bf16, `u8` for the rest.
    type Storage: Copy + Default + Send + Sync + bytemuck::Pod + numpy::Element;
    /// The bits seen as values without copying, where every pattern of the storage integer is a value (the
    /// 16- and 8-bit formats); `None` for FP6 and FP4, whose unused high bits must be masked.
    fn view(bits: &[Self::Storage]) -> Option<&[Self]>;
    /// As [`Stored::view`], writable.
    fn view_mut(bits: &mut [Self::Storage]) -> Option<&mut [Self]>;
    /// The value of `bits` (high bits beyond the format's width ignored).
    fn from_stored(bits: Self::Storage) -> Self;
    /// The bits of a value.
    fn to_stored(self) -> Self::Storage;
}

/// [`Stored`] for a type that is `bytemuck::Pod`: its slices are cast in place.
macro_rules! stored_pod {
    ($($t:ident: $bits:ty),*) => {$(
        impl Stored for lowp::$t {
            type Storage = $bits;
            fn view(bits: &[$bits]) -> Option<&[Self]> {
                Some(bytemuck::cast_slice(bits))
            }
            fn view_mut(bits: &mut [$bits]) -> Option<&mut [Self]> {
                Some(bytemuck::cast_slice_mut(bits))
            }
            fn from_stored(bits: $bits) -> Self {
                lowp::$t::from_bits(bits)
            }
            fn to_stored(self) -> $bits {
                self.to_bits()
            }
        }
    )*};
}

/// [`Stored`] for FP6 and FP4: values are built from bytes with `from_bits`, which masks.
macro_rules! stored_masked {
    ($($t:ident),*) => {$(
        impl Stored for lowp::$t {
            type Storage = u8;
            fn view(_: &[u8]) -> Option<&[Self]> {
                None
            }
            fn view_mut(_: &mut [u8]) -> Option<&mut [Self]> {
                None
            }
            fn from_stored(bits: u8) -> Self {
                lowp::$t::from_bits(bits)
            }
            fn to_stored(self) -> u8 {
                self.to_bits()
            }
        }
    )*};
}

/// [`Stored`] for one row of `lowp::for_each_format!`: cast in place where every bit pattern
/// of the storage is a value, masked where the format uses only the low bits.
macro_rules! stored_row {
    ($t:ident, $v:ident, $storage:ty, $c:ty, $s:ident, $vals:ident, all_bits) => {
        stored_pod!($t: $storage);
    };
    ($t:ident, $v:ident, $storage:ty, $c:ty, $s:ident, $vals:ident, low_bits) => {
        stored_masked!($t);
    };
}

lowp::for_each_format!(stored_row, rows);

/// How to round into a lowp format.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// To nearest, ties to even (lowp's bulk vector paths).
    Nearest,
    /// A directed mode ([`Rounding::TowardZero`], `TowardPositive` or `TowardNegative`).
    Directed(Rounding),
    /// Stochastic rounding with the random bits of this seed (see [`random_bits`]).
    Stochastic(u64),
}

/// How a conversion rounds: the mode, and whether overflow saturates to ±MAX.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct How {
    /// The rounding mode.
    pub mode: Mode,
    /// Whether overflow and infinities become ±MAX instead of ±infinity or NaN.
    pub saturate: bool,
}

/// The elements of a source array.
#[derive(Clone, Copy, Debug)]
pub enum Source<'a> {
    /// float32 values.
    F32(&'a [f32]),
    /// float64 values.
    F64(&'a [f64]),
    /// Bit patterns of a 16-bit format.
    Bits16(&'static Format, &'a [u16]),
    /// Bit patterns of an 8-bit-or-narrower format.
    Bits8(&'static Format, &'a [u8]),
}

impl<'a> Source<'a> {
    /// Number of elements.
    pub fn len(&self) -> usize {
        match self {
            Source::F32(s) => s.len(),
            Source::F64(s) => s.len(),
            Source::Bits16(_, s) => s.len(),
            Source::Bits8(_, s) => s.len(),
        }
    }

    /// Whether there are no elements.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Elements `first..first + len`.
    fn range(&self, first: usize, len: usize) -> Source<'a> {
        let r = first..first + len;
        match *self {
            Source::F32(s) => Source::F32(&s[r]),
            Source::F64(s) => Source::F64(&s[r]),
            Source::Bits16(f, s) => Source::Bits16(f, &s[r]),
            Source::Bits8(f, s) => Source::Bits8(f, &s[r]),
        }
    }

    /// Widens a lowp-format source exactly into `dst` (same length); the caller handles f32 and
    /// f64 sources.
    fn widen_bits_into(&self, dst: &mut [f32]) {
        match *self {
            Source::Bits16(fmt, s) => {
                with_format!(fmt, S => widen_stored::<S, f32>(cast_bits(s), dst))
            }
            Source::Bits8(fmt, s) => {
                with_format!(fmt, S => widen_stored::<S, f32>(cast_bits(s), dst))
            }
            Source::F32(_) | Source::F64(_) => unreachable!("float sources are not widened"),
        }
    }
}

/// `bits` as the storage integer slice of a format. [`Source`]'s constructors pair 16-bit
/// formats with `u16` and the others with `u8`, so the two integer types are always the same;
/// the assertion keeps a mismatch from reinterpreting bytes.
fn cast_bits<A: bytemuck::Pod, B: bytemuck::Pod>(bits: &[A]) -> &[B] {
    assert_eq!(
        size_of::<A>(),
        size_of::<B>(),
        "lowp-py: bits of the wrong width"
    );
    bytemuck::cast_slice(bits)
}

/// Where conversions run.
#[derive(Clone, Debug)]
pub enum Threads {
    /// On the calling thread.
    Serial,
    /// On all threads of rayon's global pool (one per core, or `RAYON_NUM_THREADS`).
    Global,
    /// On a pool of a given size.
    Pool(Arc<rayon::ThreadPool>),
}

/// Below this many elements per thread, starting threads costs more than it saves (lowp's own
/// `par_` methods use the same figure).
const MIN_PER_THREAD: usize = 1 << 15;

impl Threads {
    /// `threads = None` (all cores, for arrays large enough to gain) or a count (1: the
    /// calling thread) from 1 to [`max_threads`]. Pools of other sizes are built when asked
    /// for and the last [`POOLS_KEPT`] are kept, so asking for many sizes never accumulates
    /// threads.
    pub fn new(count: Option<usize>, len: usize) -> Result<Threads, String> {
        match count {
            Some(0) => Err("threads must be at least 1 (or None for all cores)".to_string()),
            Some(1) => Ok(Threads::Serial),
            Some(n) if n > max_threads() => Err(too_many(&n.to_string())),
            Some(n) => pool(n).map(Threads::Pool),
            None if len < 2 * MIN_PER_THREAD || rayon::current_num_threads() < 2 => {
                Ok(Threads::Serial)
            }
            None => Ok(Threads::Global),
        }
    }

    /// Runs `f` on the chosen threads (`f` uses rayon's parallel iterators, which run on the
    /// pool they are called from).
    pub fn install<R: Send>(&self, f: impl FnOnce() -> R + Send) -> R {
        match self {
            Threads::Serial | Threads::Global => f(),
            Threads::Pool(p) => p.install(f),
        }
    }

    /// Calls `f(first, part)` on consecutive parts of `dst` (one per thread, each starting at
    /// element `first`), in parallel unless serial.
    fn split<D: Send>(&self, dst: &mut [D], f: impl Fn(usize, &mut [D]) + Sync) {
        if matches!(self, Threads::Serial) {
            return f(0, dst);
        }
        self.install(|| ThreadSplit::new(MIN_PER_THREAD).run(dst, &f))
    }
}

/// The most threads one conversion may ask for: 4 per core, and at least 16 (so that a
/// thread count that works on one machine works on a small one too). Conversions are
/// element-wise and their results do not depend on the split, so more threads than cores only
/// add overhead; the bound stops a mistyped count from starting threads until the process
/// runs out of them.
pub fn max_threads() -> usize {
    let cores = std::thread::available_parallelism().map_or(1, usize::from);
    cores.saturating_mul(4).max(16)
}

/// The error for a thread count above [`max_threads`] (`count` as the caller wrote it).
pub fn too_many(count: &str) -> String {
    let cores = std::thread::available_parallelism().map_or(1, usize::from);
    format!(
        "threads must be at most {} (4 per core, at least 16; this machine has {cores} cores), \
         not {count}",
        max_threads()
    )
}

/// How many pools of explicit sizes are kept between calls: enough for a program that
/// alternates between two counts, few enough that the threads they hold stay bounded (at most
/// `POOLS_KEPT * max_threads()`, beside rayon's global pool).
pub const POOLS_KEPT: usize = 2;

/// A pool of `n` threads: a kept one, or a new one that replaces the least recently used
/// (whose threads exit once no running conversion holds it).
fn pool(n: usize) -> Result<Arc<rayon::ThreadPool>, String> {
    static POOLS: Mutex<Vec<Arc<rayon::ThreadPool>>> = Mutex::new(Vec::new());
    let mut pools = POOLS.lock().unwrap_or_else(|e| e.into_inner());
    // Most recently used last.
    if let Some(i) = pools.iter().position(|p| p.current_num_threads() == n) {
        let p = pools.remove(i);
        pools.push(p.clone());
        return Ok(p);
    }
    if pools.len() >= POOLS_KEPT {
        pools.remove(0);
    }
    let p = rayon::ThreadPoolBuilder::new()
        .num_threads(n)
        .thread_name(|i| format!("lowp-{i}"))
        .build()
        .map_err(|e| format!("cannot start {n} threads: {e}"))?;
    let p = Arc::new(p);
    pools.push(p.clone());
    Ok(p)
}

/// Elements per block where values pass through a buffer (format sources widened to f32,
/// FP6 and FP4 results before they become bytes): small enough to stay in L1.
const BLOCK: usize = 1024;

/// Rounds `src` into format `T`, writing its bits into `dst` (same length).
pub fn narrow<T: Stored>(src: Source<'_>, dst: &mut [T::Storage], how: How, threads: &Threads) {
    assert_eq!(
        src.len(),
        dst.len(),
        "lowp-py: source and destination lengths differ"
    );
    threads.split(dst, |first, part| {
        let src = src.range(first, part.len());
        match T::view_mut(part) {
            Some(values) => narrow_part(src, values, first, how),
            None => {
                let mut block = [T::default(); BLOCK];
                for (k, bits) in part.chunks_mut(BLOCK).enumerate() {
                    let values = &mut block[..bits.len()];
                    let offset = k * BLOCK;
                    narrow_part(src.range(offset, bits.len()), values, first + offset, how);
                    for (b, v) in bits.iter_mut().zip(values.iter()) {
                        *b = v.to_stored();
                    }
                }
            }
        }
    });
}

/// Rounds `src` (elements `first..` of the whole array) into `dst`, on the calling thread.
fn narrow_part<T: Stored>(src: Source<'_>, dst: &mut [T], first: usize, how: How) {
    match (src, how.mode) {
        // The same format: every mode leaves values as they are, so the bits are copied (NaN
        // payloads too, which a trip through f32 would quieten). Saturation still has to turn
        // infinities into ±MAX, so that takes the general path.
        (Source::Bits16(f, s), _) if *f == T::FORMAT && !how.saturate => {
            copy_bits(cast_bits(s), dst)
        }
        (Source::Bits8(f, s), _) if *f == T::FORMAT && !how.saturate => {
            copy_bits(cast_bits(s), dst)
        }
        (Source::F32(s), Mode::Nearest) if how.saturate => dst.convert_from_f32_slice_saturating(s),
        (Source::F32(s), Mode::Nearest) => dst.convert_from_f32_slice(s),
        (Source::F64(s), Mode::Nearest) if how.saturate => dst.convert_from_f64_slice_saturating(s),
        (Source::F64(s), Mode::Nearest) => dst.convert_from_f64_slice(s),
        (Source::F32(s), mode) => each(s, dst, first, mode, how.saturate, |x, m, sat| {
            if sat {
                T::from_f32_round_saturating(x, m)
            } else {
                T::from_f32_round(x, m)
            }
        }),
        (Source::F64(s), mode) => each(s, dst, first, mode, how.saturate, |x, m, sat| {
            if sat {
                T::from_f64_round_saturating(x, m)
            } else {
                T::from_f64_round(x, m)
            }
        }),
        // Another format: widened exactly to f32 block by block, then rounded once, as lowp's
        // `convert_from_slice` does.
        (bits, _) => {
            let mut wide = [0f32; BLOCK];
            for (k, d) in dst.chunks_mut(BLOCK).enumerate() {
                let offset = k * BLOCK;
                let wide = &mut wide[..d.len()];
                bits.range(offset, d.len()).widen_bits_into(wide);
                narrow_part(Source::F32(wide), d, first + offset, how);
            }
        }
    }
}

/// `dst[i] = src[i]` as values of `T` (masking the unused high bits of FP6 and FP4).
fn copy_bits<T: Stored>(src: &[T::Storage], dst: &mut [T]) {
    for (d, &b) in dst.iter_mut().zip(src) {
        *d = T::from_stored(b);
    }
}

/// Rounds each element with `round` in a directed or stochastic mode: element `i` of the whole
/// array gets `random_bits(seed, i)`, the bits lowp's stochastic slice methods give it.
fn each<S: Copy, T: LowpFloat>(
    src: &[S],
    dst: &mut [T],
    first: usize,
    mode: Mode,
    saturate: bool,
    round: impl Fn(S, Rounding, bool) -> T,
) {
    match mode {
        Mode::Directed(m) => {
            for (d, &x) in dst.iter_mut().zip(src) {
                *d = round(x, m, saturate);
            }
        }
        Mode::Stochastic(seed) => {
            for (i, (d, &x)) in dst.iter_mut().zip(src).enumerate() {
                let bits = random_bits(seed, (first + i) as u64);
                *d = round(x, Rounding::Stochastic(bits), saturate);
            }
        }
        Mode::Nearest => unreachable!("nearest rounding uses the bulk methods"),
    }
}

/// A float type lowp widens into.
pub trait Wide: Copy + Default + Send + Sync + bytemuck::Pod {
    /// Widens `src` exactly into `dst` (same length) on the calling thread.
    fn widen<T: LowpFloat>(src: &[T], dst: &mut [Self]);
}

impl Wide for f32 {
    fn widen<T: LowpFloat>(src: &[T], dst: &mut [f32]) {
        src.convert_to_f32_slice(dst);
    }
}

impl Wide for f64 {
    fn widen<T: LowpFloat>(src: &[T], dst: &mut [f64]) {
        src.convert_to_f64_slice(dst);
    }
}

/// Widens the bits of format `S` exactly into `dst`, on the calling thread.
fn widen_stored<S: Stored, W: Wide>(src: &[S::Storage], dst: &mut [W]) {
    match S::view(src) {
        Some(values) => W::widen(values, dst),
        None => {
            let mut block = [S::default(); BLOCK];
            for (s, d) in src.chunks(BLOCK).zip(dst.chunks_mut(BLOCK)) {
                let values = &mut block[..s.len()];
                for (v, &b) in values.iter_mut().zip(s) {
                    *v = S::from_stored(b);
                }
                W::widen(values, d);
            }
        }
    }
}

/// Converts `src` exactly into float32 or float64 `dst` (same length); an f64 source into f32
/// rounds to nearest even.
pub fn widen<W: Wide + FromFloat>(src: Source<'_>, dst: &mut [W], threads: &Threads) {
    assert_eq!(
        src.len(),
        dst.len(),
        "lowp-py: source and destination lengths differ"
    );
    threads.split(dst, |first, part| match src.range(first, part.len()) {
        Source::F32(s) => part
            .iter_mut()
            .zip(s)
            .for_each(|(d, &x)| *d = W::from_f32(x)),
        Source::F64(s) => part
            .iter_mut()
            .zip(s)
            .for_each(|(d, &x)| *d = W::from_f64(x)),
        Source::Bits16(fmt, s) => with_format!(fmt, S => widen_stored::<S, W>(cast_bits(s), part)),
        Source::Bits8(fmt, s) => with_format!(fmt, S => widen_stored::<S, W>(cast_bits(s), part)),
    });
}

/// Conversion from the two IEEE source types (Rust's `as`: exact, or nearest even f64 to f32).
pub trait FromFloat {
    /// From an f32.
    fn from_f32(x: f32) -> Self;
    /// From an f64.
    fn from_f64(x: f64) -> Self;
}

impl FromFloat for f32 {
    fn from_f32(x: f32) -> f32 {
        x
    }
    fn from_f64(x: f64) -> f32 {
        x as f32
    }
}

impl FromFloat for f64 {
    fn from_f32(x: f32) -> f64 {
        x as f64
    }
    fn from_f64(x: f64) -> f64 {
        x
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use lowp::format::format_by_name;
    use lowp::{bf16, f4e2m1fn, f8e4m3fn, f16};

    fn sample(n: usize) -> Vec<f32> {
        (0..n)
            .map(|i| {
                let x = (i as f32 * 0.618034).fract() - 0.5;
                x * 2f32.powi((i % 40) as i32 - 20)
            })
            .collect()
    }

    fn all_threads() -> Vec<Threads> {
        vec![
            Threads::Serial,
            Threads::Global,
            Threads::new(Some(3), 0).unwrap(),
        ]
    }

    #[test]
    fn nearest_equals_the_slice_methods_on_every_split() {
        let src = sample(300_001);
        let want = Vec::<bf16>::from_f32_slice_saturating(&src);
        for t in all_threads() {
            let mut got = vec![0u16; src.len()];
            let how = How {
                mode: Mode::Nearest,
                saturate: true,
            };
            narrow::<bf16>(Source::F32(&src), &mut got, how, &t);
            assert!(got.iter().zip(&want).all(|(g, w)| *g == w.to_bits()));
        }
    }

    #[test]
    fn stochastic_equals_the_slice_methods_on_every_split() {
        let src = sample(200_000);
        let mut want = vec![f8e4m3fn::ZERO; src.len()];
        want.convert_from_f32_slice_stochastic_saturating(&src, 7);
        for t in all_threads() {
            let mut got = vec![0u8; src.len()];
            let how = How {
                mode: Mode::Stochastic(7),
                saturate: true,
            };
            narrow::<f8e4m3fn>(Source::F32(&src), &mut got, how, &t);
            assert!(got.iter().zip(&want).all(|(g, w)| *g == w.to_bits()));
        }
        let wide: Vec<f64> = src.iter().map(|&x| x as f64 * 1.1).collect();
        let want = Vec::<f16>::from_f64_slice_stochastic(&wide, 9);
        let mut got = vec![0u16; src.len()];
        let how = How {
            mode: Mode::Stochastic(9),
            saturate: false,
        };
        narrow::<f16>(Source::F64(&wide), &mut got, how, &Threads::Global);
        assert!(got.iter().zip(&want).all(|(g, w)| *g == w.to_bits()));
    }

    #[test]
    fn directed_and_fp4_match_the_scalar_conversions() {
        let src = sample(100_000);
        for mode in [
            Rounding::TowardZero,
            Rounding::TowardPositive,
            Rounding::TowardNegative,
        ] {
            let mut got = vec![0u8; src.len()];
            let how = How {
                mode: Mode::Directed(mode),
                saturate: false,
            };
            narrow::<f4e2m1fn>(Source::F32(&src), &mut got, how, &Threads::Global);
            for (g, &x) in got.iter().zip(&src) {
                assert_eq!(*g, f4e2m1fn::from_f32_round(x, mode).to_bits());
            }
        }
    }

    #[test]
    fn between_formats_rounds_once() {
        let src: Vec<u16> = (0..=u16::MAX).collect();
        let bf: Vec<bf16> = src.iter().map(|&b| bf16::from_bits(b)).collect();
        let want = Vec::<f8e4m3fn>::from_slice_of(&bf);
        let mut got = vec![0u8; src.len()];
        let how = How {
            mode: Mode::Nearest,
            saturate: false,
        };
        let fmt = format_by_name("bf16").unwrap();
        narrow::<f8e4m3fn>(Source::Bits16(fmt, &src), &mut got, how, &Threads::Serial);
        assert!(got.iter().zip(&want).all(|(g, w)| *g == w.to_bits()));
        // Back to f32 exactly, FP4 included (high bits ignored, as `from_bits` does).
        let fp4: Vec<u8> = (0..=255).collect();
        let mut wide = vec![0f32; 256];
        let fmt = format_by_name("f4e2m1fn").unwrap();
        widen(Source::Bits8(fmt, &fp4), &mut wide, &Threads::Serial);
        for (&b, &w) in fp4.iter().zip(&wide) {
            assert_eq!(w.to_bits(), f4e2m1fn::from_bits(b).to_f32().to_bits());
        }
    }

    #[test]
    fn thread_counts() {
        assert!(matches!(Threads::new(None, 10), Ok(Threads::Serial)));
        assert!(matches!(
            Threads::new(Some(1), 1 << 30),
            Ok(Threads::Serial)
        ));
        assert!(Threads::new(Some(0), 10).is_err());
        assert!(Threads::new(Some(max_threads()), 10).is_ok());
        let err = Threads::new(Some(max_threads() + 1), 10).unwrap_err();
        assert!(err.starts_with("threads must be at most"), "{err}");
        assert!(Threads::new(Some(1 << 40), 10).is_err());
        let a = pool(2).unwrap();
        assert!(Arc::ptr_eq(&a, &pool(2).unwrap()));
        // Only the last POOLS_KEPT sizes are kept (one test, since the other tests build
        // pools of 3 threads at the same time).
        let a = pool(5).unwrap();
        for n in 6..6 + POOLS_KEPT {
            pool(n).unwrap();
        }
        // 5 was evicted: asking again builds another pool.
        assert!(!Arc::ptr_eq(&a, &pool(5).unwrap()));
    }
}
