//! `lowp bench convert`: bulk conversion throughput beside memcpy and the `half` crate.
//!
//! Each measurement converts one buffer of `size` bytes of f32 or f64 (the wide side) to or
//! from a format, and counts the bytes read plus the bytes written per call. Beside each, in
//! the same run, are two baselines: `memcpy` (`copy_from_slice` moving the same total bytes)
//! and `half`'s slice conversion of the same number of values (f16 against `half::f16`, every
//! other format against `half::bf16`, the closest thing `half` has).

use crate::data::{Sample, fill};
use crate::error::{Error, Result};
use crate::progress::Progress;
use crate::report::Report;
use crate::timing::{MIN_SAMPLES, Threads, aligned, bb, best_seconds, memcpy, size_label};
use half::slice::HalfFloatSliceExt;
use lowp::LowpFloat;
use lowp::bulk::{Path, ThreadSplit, active_path, forced_path_error};
use lowp::prelude::{LowpParSliceExt, LowpSliceExt};
use lowp_analysis::output::{Cell, Column, Table};
use serde_json::{Value, json};

/// What `convert` measures.
#[derive(Clone, Debug)]
pub struct Config {
    /// The formats, in order.
    pub formats: Vec<&'static lowp::Format>,
    /// The directions, in order.
    pub directions: Vec<Direction>,
    /// Bytes of the f32 or f64 buffer, each size in turn.
    pub sizes: Vec<u64>,
    /// The threadings; the single-threaded rows run the slice methods, the multi-threaded
    /// ones the par_ methods.
    pub threads: Vec<Threads>,
    /// Sample each measurement for at least this many seconds.
    pub min_time: f64,
    /// The path the single-threaded rows run (`None`: the active path); the multi-threaded
    /// rows run the active path.
    pub path: Option<Path>,
}

/// A conversion direction.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
pub enum Direction {
    /// f32 to the format.
    FromF32,
    /// The format to f32.
    ToF32,
    /// f64 to the format.
    FromF64,
    /// The format to f64.
    ToF64,
}

impl Direction {
    /// Every direction.
    pub const ALL: [Direction; 4] = [
        Direction::FromF32,
        Direction::ToF32,
        Direction::FromF64,
        Direction::ToF64,
    ];

    /// The direction's name on the command line (`from-f32`).
    pub fn name(self) -> &'static str {
        match self {
            Direction::FromF32 => "from-f32",
            Direction::ToF32 => "to-f32",
            Direction::FromF64 => "from-f64",
            Direction::ToF64 => "to-f64",
        }
    }

    /// Whether the direction widens the format (to f32 or f64).
    fn widens(self) -> bool {
        matches!(self, Direction::ToF32 | Direction::ToF64)
    }
}

/// Sizes measured by default.
pub const DEFAULT_SIZES: [u64; 3] = [16 << 10, 1 << 20, 256 << 20];

/// The size of a quick smoke run.
pub const QUICK_SIZE: u64 = 4 << 10;

/// Sampling time per measurement by default, in seconds.
pub const DEFAULT_MIN_TIME: f64 = 0.2;

/// Sampling time per measurement of a quick smoke run, in seconds.
pub const QUICK_MIN_TIME: f64 = 0.001;

/// How half's multi-threaded baseline splits its values: as lowp's par_ methods split
/// (at least 32Ki elements per thread).
const HALF_SPLIT: ThreadSplit = ThreadSplit::new(1 << 15);

/// The path named `text` (`portable`, `avx512`, ...), if this CPU can run it.
pub fn parse_path(text: &str) -> Result<Path> {
    let path = Path::from_name(text).ok_or_else(|| {
        Error::Invalid(format!(
            "unknown conversion path '{text}'; this CPU can run {}",
            supported_names()
        ))
    })?;
    if path.is_supported() {
        Ok(path)
    } else {
        Err(Error::Invalid(
            lowp::bulk::UnsupportedPath(path).to_string(),
        ))
    }
}

/// The paths this CPU can run, comma separated.
fn supported_names() -> String {
    Path::supported()
        .map(Path::name)
        .collect::<Vec<_>>()
        .join(", ")
}

/// One measurement: a lowp conversion or a baseline.
struct Record {
    /// Unique name: `bf16 from-f32 256MiB single`, `half bf16 …`, `memcpy 192MiB single`.
    name: String,
    /// `lowp`, `half` or `memcpy`.
    library: &'static str,
    /// The format converted (`None` for memcpy).
    format: Option<&'static str>,
    /// The direction (`None` for memcpy).
    direction: Option<Direction>,
    /// Bytes of the wide buffer (memcpy: of the buffer copied).
    size: u64,
    /// The threading.
    threads: Threads,
    /// lowp's conversion path (`None` for the baselines).
    path: Option<Path>,
    /// Bytes read plus bytes written per call.
    bytes: u64,
    /// Best seconds per call.
    seconds: f64,
    /// Index of the memcpy record moving the same bytes (lowp records only).
    memcpy: Option<usize>,
    /// Index of the half record converting as many values the same way (lowp records only).
    half: Option<usize>,
}

impl Record {
    /// A baseline record, compared with nothing.
    fn baseline(name: String, library: &'static str, size: u64, threads: Threads) -> Self {
        Record {
            name,
            library,
            format: None,
            direction: None,
            size,
            threads,
            path: None,
            bytes: 0,
            seconds: 0.0,
            memcpy: None,
            half: None,
        }
    }

    /// Throughput in 10^9 bytes per second.
    fn gbps(&self) -> f64 {
        self.bytes as f64 / self.seconds / 1e9
    }

    /// The record as a JSON object; `all` holds the records its baselines index.
    fn to_json(&self, all: &[Record]) -> Value {
        let memcpy = self.memcpy.map(|i| &all[i]);
        let half = self.half.map(|i| &all[i]);
        json!({
            "name": self.name,
            "bytes": self.bytes,
            "seconds": self.seconds,
            "gbps": self.gbps(),
            "baseline": memcpy.map(|m| m.name.clone()),
            "ratio": memcpy.map(|m| self.gbps() / m.gbps()),
            "library": self.library,
            "format": self.format,
            "direction": self.direction.map(Direction::name),
            "size": size_label(self.size),
            "size_bytes": self.size,
            "threads": self.threads.to_string(),
            "thread_count": self.threads.count(),
            "path": self.path.map(Path::name),
            "half_baseline": half.map(|h| h.name.clone()),
            "half_gbps": half.map(Record::gbps),
            "ratio_half": half.map(|h| h.seconds / self.seconds),
        })
    }
}

/// The settings of a run and the records measured so far.
struct Bench<'a> {
    /// Sampling time per measurement, in seconds.
    min_time: f64,
    /// The threadings measured.
    threads: Vec<Threads>,
    /// The path given with `--path`, for the single-threaded rows.
    path: Option<Path>,
    /// Where each measurement is reported as it starts.
    progress: &'a dyn Progress,
    /// Every measurement, in the order taken.
    records: Vec<Record>,
}

impl Bench<'_> {
    /// Index of the record named `name`, if measured already.
    fn find(&self, name: &str) -> Option<usize> {
        self.records.iter().position(|r| r.name == name)
    }

    /// Times `f` (after a warm-up call), stores the record and gives its index.
    fn measure(&mut self, mut record: Record, f: impl FnMut()) -> usize {
        self.progress.step(&format!("measuring {}", record.name));
        record.seconds = best_seconds(self.min_time, f);
        self.records.push(record);
        self.records.len() - 1
    }

    /// The memcpy records (one per threading) moving `bytes` in total, measured on first use.
    fn memcpy(&mut self, bytes: u64) -> Vec<usize> {
        let len = (bytes / 2) as usize;
        let name = |t: Threads| format!("memcpy {} {t}", size_label(len as u64));
        if let Some(found) = self.threads.iter().map(|&t| self.find(&name(t))).collect() {
            return found;
        }
        let (mut src_buf, mut dst_buf) = (Vec::new(), Vec::new());
        let src = aligned(&mut src_buf, len, 0x5au8);
        let dst = aligned(&mut dst_buf, len, 0xa5u8);
        let mut found = Vec::new();
        for t in self.threads.clone() {
            let mut record = Record::baseline(name(t), "memcpy", len as u64, t);
            record.bytes = 2 * len as u64;
            found.push(self.measure(record, || memcpy(t, src, dst)));
        }
        found
    }

    /// The half records (one per threading) converting `n` values of `H` in direction `dir`,
    /// measured on first use.
    fn half<H, W: Wide>(&mut self, label: &str, dir: Direction, size: u64) -> Vec<usize>
    where
        H: Copy + Default + Send + Sync,
        [H]: HalfFloatSliceExt,
    {
        let name = |t: Threads| format!("half {label} {} {} {t}", dir.name(), size_label(size));
        if let Some(found) = self.threads.iter().map(|&t| self.find(&name(t))).collect() {
            return found;
        }
        let n = size as usize / size_of::<W>();
        let (mut wide_buf, mut narrow_buf) = (Vec::new(), Vec::new());
        let wide = aligned(&mut wide_buf, n, W::default());
        let max = if label == "f16" {
            lowp::f16::MAX.to_f64()
        } else {
            lowp::bf16::MAX.to_f64()
        };
        fill(wide, max, true);
        let narrow = aligned(&mut narrow_buf, n, H::default());
        W::half_narrow(wide, narrow);
        let mut found = Vec::new();
        for t in self.threads.clone() {
            let mut record = Record::baseline(name(t), "half", size, t);
            record.format = Some(if label == "f16" { "f16" } else { "bf16" });
            record.direction = Some(dir);
            record.bytes = (n * (size_of::<W>() + size_of::<H>())) as u64;
            let (w, h) = (&mut *wide, &mut *narrow);
            found.push(match (dir.widens(), t) {
                (false, Threads::Single) => self.measure(record, || W::half_narrow(bb(w), bb(h))),
                (true, Threads::Single) => self.measure(record, || W::half_widen(bb(h), bb(w))),
                (false, Threads::Multi) => self.measure(record, || {
                    HALF_SPLIT.run_pair(bb(w), bb(h), |_, w, h| W::half_narrow(w, h))
                }),
                (true, Threads::Multi) => self.measure(record, || {
                    HALF_SPLIT.run_pair(bb(h), bb(w), |_, h, w| W::half_widen(h, w))
                }),
            });
        }
        found
    }
}

/// The wide side of a conversion, f32 or f64, with the conversions of each library to and
/// from it.
trait Wide: Sample {
    /// lowp's single-threaded narrowing, on `path` or (`None`) through the slice method.
    fn narrow<T: LowpFloat>(path: Option<Path>, src: &[Self], dst: &mut [T]);
    /// lowp's single-threaded widening, on `path` or through the slice method.
    fn widen<T: LowpFloat>(path: Option<Path>, src: &[T], dst: &mut [Self]);
    /// lowp's multi-threaded narrowing.
    fn par_narrow<T: LowpFloat>(src: &[Self], dst: &mut [T]);
    /// lowp's multi-threaded widening.
    fn par_widen<T: LowpFloat>(src: &[T], dst: &mut [Self]);
    /// half's narrowing.
    fn half_narrow<H>(src: &[Self], dst: &mut [H])
    where
        [H]: HalfFloatSliceExt;
    /// half's widening.
    fn half_widen<H>(src: &[H], dst: &mut [Self])
    where
        [H]: HalfFloatSliceExt;
}

/// The message of a path that was checked before the run and then refused.
const CHECKED: &str = "the path was checked before the run";

impl Wide for f32 {
    fn narrow<T: LowpFloat>(path: Option<Path>, src: &[f32], dst: &mut [T]) {
        match path {
            Some(p) => p.convert_from_f32_slice(dst, src).expect(CHECKED),
            None => LowpSliceExt::convert_from_f32_slice(dst, src),
        }
    }
    fn widen<T: LowpFloat>(path: Option<Path>, src: &[T], dst: &mut [f32]) {
        match path {
            Some(p) => p.convert_to_f32_slice(src, dst).expect(CHECKED),
            None => LowpSliceExt::convert_to_f32_slice(src, dst),
        }
    }
    fn par_narrow<T: LowpFloat>(src: &[f32], dst: &mut [T]) {
        dst.par_convert_from_f32_slice(src);
    }
    fn par_widen<T: LowpFloat>(src: &[T], dst: &mut [f32]) {
        src.par_convert_to_f32_slice(dst);
    }
    fn half_narrow<H>(src: &[f32], dst: &mut [H])
    where
        [H]: HalfFloatSliceExt,
    {
        HalfFloatSliceExt::convert_from_f32_slice(dst, src);
    }
    fn half_widen<H>(src: &[H], dst: &mut [f32])
    where
        [H]: HalfFloatSliceExt,
    {
        HalfFloatSliceExt::convert_to_f32_slice(src, dst);
    }
}

impl Wide for f64 {
    fn narrow<T: LowpFloat>(path: Option<Path>, src: &[f64], dst: &mut [T]) {
        match path {
            Some(p) => p.convert_from_f64_slice(dst, src).expect(CHECKED),
            None => LowpSliceExt::convert_from_f64_slice(dst, src),
        }
    }
    fn widen<T: LowpFloat>(path: Option<Path>, src: &[T], dst: &mut [f64]) {
        match path {
            Some(p) => p.convert_to_f64_slice(src, dst).expect(CHECKED),
            None => LowpSliceExt::convert_to_f64_slice(src, dst),
        }
    }
    fn par_narrow<T: LowpFloat>(src: &[f64], dst: &mut [T]) {
        dst.par_convert_from_f64_slice(src);
    }
    fn par_widen<T: LowpFloat>(src: &[T], dst: &mut [f64]) {
        src.par_convert_to_f64_slice(dst);
    }
    fn half_narrow<H>(src: &[f64], dst: &mut [H])
    where
        [H]: HalfFloatSliceExt,
    {
        HalfFloatSliceExt::convert_from_f64_slice(dst, src);
    }
    fn half_widen<H>(src: &[H], dst: &mut [f64])
    where
        [H]: HalfFloatSliceExt,
    {
        HalfFloatSliceExt::convert_to_f64_slice(src, dst);
    }
}

/// Measures format `T` in direction `dir` on a wide buffer of `size` bytes, for each
/// threading, after its memcpy and half baselines.
fn measure_format<T: LowpFloat>(b: &mut Bench, dir: Direction, size: u64) {
    match dir {
        Direction::FromF32 | Direction::ToF32 => measure_wide::<T, f32>(b, dir, size),
        Direction::FromF64 | Direction::ToF64 => measure_wide::<T, f64>(b, dir, size),
    }
}

/// [`measure_format`] with the wide type `W` known.
fn measure_wide<T: LowpFloat, W: Wide>(b: &mut Bench, dir: Direction, size: u64) {
    let n = size as usize / size_of::<W>();
    let bytes = (n * (size_of::<W>() + size_of::<T>())) as u64;
    let name = T::FORMAT.name;
    let memcpy = b.memcpy(bytes);
    let half = if name == "f16" {
        b.half::<half::f16, W>("f16", dir, size)
    } else {
        b.half::<half::bf16, W>("bf16", dir, size)
    };
    let (mut wide_buf, mut narrow_buf) = (Vec::new(), Vec::new());
    let wide = aligned(&mut wide_buf, n, W::default());
    let max = T::from_bits_u32(T::FORMAT.max_finite_bits()).to_f64();
    fill(wide, max, T::FORMAT.signed);
    let narrow = aligned(&mut narrow_buf, n, T::default());
    W::narrow(None, wide, narrow);
    let single_path = b.path;
    for (i, t) in b.threads.clone().into_iter().enumerate() {
        let record = Record {
            name: format!("{name} {} {} {t}", dir.name(), size_label(size)),
            library: "lowp",
            format: Some(name),
            direction: Some(dir),
            size,
            threads: t,
            path: Some(match t {
                Threads::Single => single_path.unwrap_or_else(active_path),
                Threads::Multi => active_path(),
            }),
            bytes,
            seconds: 0.0,
            memcpy: Some(memcpy[i]),
            half: Some(half[i]),
        };
        let (w, h) = (&mut *wide, &mut *narrow);
        match (dir.widens(), t) {
            (false, Threads::Single) => b.measure(record, || W::narrow(single_path, bb(w), bb(h))),
            (true, Threads::Single) => b.measure(record, || W::widen(single_path, bb(h), bb(w))),
            (false, Threads::Multi) => b.measure(record, || W::par_narrow(bb(w), bb(h))),
            (true, Threads::Multi) => b.measure(record, || W::par_widen(bb(h), bb(w))),
        };
    }
}

/// The measurement of one format, in a direction, at a size.
type FormatBench = fn(&mut Bench, Direction, u64);

/// [`measure_format`] of every format, from lowp's list of formats.
macro_rules! format_benches {
    ($(($t:ident, $($rest:tt)*))*) => {
        [$((<lowp::$t as LowpFloat>::FORMAT.name, measure_format::<lowp::$t> as FormatBench)),*]
    };
}

/// [`measure_format`] of every format, by name.
static FORMATS: [(&str, FormatBench); lowp::Format::ALL.len()] =
    lowp::for_each_format!(format_benches, list);

/// The measurement of the format named `name` (a name of [`lowp::Format::ALL`]).
fn format_bench(name: &str) -> Result<FormatBench> {
    FORMATS
        .iter()
        .find(|(n, _)| *n == name)
        .map(|&(_, f)| f)
        .ok_or_else(|| Error::Failure(format!("no benchmark for {name}")))
}

/// Measures every format, direction and size of `config`, in that nesting (sizes outermost),
/// each after its memcpy and half baselines. A `LOWP_FORCE_PATH` naming no path this CPU runs
/// is an [`Error::Invalid`].
pub fn run(config: &Config, progress: &dyn Progress) -> Result<Report> {
    if let Some(err) = forced_path_error() {
        return Err(Error::Invalid(err.to_string()));
    }
    let mut bench = Bench {
        min_time: config.min_time,
        threads: config.threads.clone(),
        path: config.path,
        progress,
        records: Vec::new(),
    };
    for &size in &config.sizes {
        for &dir in &config.directions {
            for format in &config.formats {
                format_bench(format.name)?(&mut bench, dir, size);
            }
        }
    }
    progress.done();
    let records = &bench.records;
    Ok(Report {
        // Given before the run (`header`), since a full run takes minutes.
        header: None,
        table: table(records),
        notes: footnotes(config.min_time),
        json: Value::Array(records.iter().map(|r| r.to_json(records)).collect()),
    })
}

/// The first line of the report: the path in use, the paths this CPU supports and the thread
/// count (`path`: the single-threaded rows' path, if not the active one).
pub fn header(path: Option<Path>) -> String {
    let active = active_path();
    let used = match path {
        Some(p) if p != active => {
            format!("{p} for single-threaded rows (--path), {active} for multi-threaded rows")
        }
        _ => active.to_string(),
    };
    format!(
        "conversion path: {used}; supported paths: {}; threads: {}\n",
        supported_names(),
        rayon::current_num_threads()
    )
}

/// The table of lowp's measurements with their baselines.
fn table(records: &[Record]) -> Table {
    let columns = vec![
        Column::left("format", "format"),
        Column::left("direction", "direction"),
        Column::right("size", "size"),
        Column::left("threads", "threads"),
        Column::right("gbps", "GB/s"),
        Column::right("memcpy_gbps", "memcpy GB/s"),
        Column::right("ratio", "vs memcpy"),
        Column::right("half_gbps", "half GB/s"),
        Column::right("ratio_half", "vs half*"),
    ];
    let number = |x: f64| Cell::Text(format!("{x:.2}"));
    let rows = records
        .iter()
        .filter(|r| r.library == "lowp")
        .map(|r| {
            let memcpy = &records[r.memcpy.unwrap_or_default()];
            let half = &records[r.half.unwrap_or_default()];
            vec![
                Cell::Text(r.format.unwrap_or_default().to_string()),
                Cell::Text(r.direction.map_or("", Direction::name).to_string()),
                Cell::Text(size_label(r.size)),
                Cell::Text(r.threads.to_string()),
                number(r.gbps()),
                number(memcpy.gbps()),
                number(r.gbps() / memcpy.gbps()),
                number(half.gbps()),
                number(half.seconds / r.seconds),
            ]
        })
        .collect();
    Table { columns, rows }
}

/// What the columns mean.
fn footnotes(min_time: f64) -> String {
    format!(
        "GB/s: bytes read plus bytes written per call, 10^9 bytes per GB; the best time per \
         call over at least {MIN_SAMPLES} samples after a warm-up, sampling for {min_time} s or \
         more.\n\
         memcpy: copy_from_slice of a buffer moving the same bytes (half the total each way).\n\
         * half: the half crate's slice conversion of as many values in the same direction: \
         half::f16 for f16, half::bf16 for every other format (half has nothing narrower); \
         vs half = half's time / lowp's time, so for the 8-bit and smaller formats it compares \
         values per second, not GB/s.\n\
         multi: lowp's par_ methods; memcpy and half (which has no parallel API) run on rayon's \
         par_chunks split the same way, one contiguous range per thread. Buffers too short to \
         split run on one thread.\n"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_format_has_a_benchmark() {
        for format in lowp::Format::ALL {
            assert!(format_bench(format.name).is_ok());
        }
    }
}
