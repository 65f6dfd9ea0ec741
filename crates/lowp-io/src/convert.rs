//! A checkpoint (safetensors, `.npy`, `.npz`) stored in another float type, with a
//! per-tensor report of what that cost.
//!
//! [`convert`] decides per tensor what to do ([`Options::plan`]), writes the output header,
//! then moves each tensor's data through the conversion ([`crate::pipeline`]) into a temporary
//! file beside the output that is renamed into place only when everything succeeded
//! ([`TempOutput`]). The input is only ever opened for reading.

use crate::error::Error;
use crate::file_kind::Kind;
use crate::files::{self, TempOutput};
use crate::model::Model;
use crate::options::{Options, Target};
use crate::progress::{Control, NoProgress, Progress};
use crate::report::Report;
use crate::{numpy, write_model};
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;

/// Converts as `opts` says and gives the report; nothing is written in a dry run (no
/// output). The same as [`convert_with`] without progress reports or a way to cancel.
///
/// ```
/// # fn main() -> Result<(), lowp_io::Error> {
/// # let dir = std::env::temp_dir().join(format!("lowp-io-doc-{}", std::process::id()));
/// # std::fs::create_dir_all(&dir).unwrap();
/// # let model = dir.join("model.safetensors");
/// # let header = br#"{"w":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}}"#;
/// # let mut bytes = (header.len() as u64).to_le_bytes().to_vec();
/// # bytes.extend(header);
/// # bytes.extend([0.1f32, 3.0].iter().flat_map(|x| x.to_le_bytes()));
/// # std::fs::write(&model, bytes).unwrap();
/// use lowp_io::{FloatType, Options, Verdict};
///
/// let out = dir.join("model_bf16.safetensors");
/// let report = lowp_io::convert(&Options::new(&model, Some(out.clone()), FloatType::BF16))?;
/// let w = &report.tensors[0];
/// assert_eq!((w.name.as_str(), w.to.as_str()), ("w", "BF16"));
/// assert_eq!(w.verdict(report.saturate).0, Verdict::Ok); // 0.1 rounded, 3.0 exact
/// assert_eq!(std::fs::metadata(&out).unwrap().len(), report.file_bytes_out);
/// # std::fs::remove_dir_all(&dir).unwrap();
/// # Ok(())
/// # }
/// ```
pub fn convert(opts: &Options) -> Result<Report, Error> {
    convert_with(opts, &NoProgress, &AtomicBool::new(false))
}

/// [`convert`], reporting progress to `progress` (from several threads) and stopping with
/// [`Error::Cancelled`] at the next block once `cancel` is set. Options that do not go
/// together are refused first ([`Options::validate`]). Whatever the error, nothing is
/// left behind: the temporary output is removed and the output path is untouched. First it
/// removes the temporary outputs that killed runs left beside the output
/// ([`crate::leftovers`]), telling `progress` of each.
pub fn convert_with(
    opts: &Options,
    progress: &dyn Progress,
    cancel: &AtomicBool,
) -> Result<Report, Error> {
    let control = Control { progress, cancel };
    opts.validate()?;
    if let Some(out) = &opts.output {
        // A model directory's files are inputs, whatever their names: never swept.
        let input_root = if opts.input.is_dir() || !Model::is_model_path(&opts.input) {
            opts.input.clone()
        } else {
            opts.input
                .parent()
                .filter(|p| !p.as_os_str().is_empty())
                .map_or_else(|| PathBuf::from("."), Path::to_path_buf)
        };
        for leftover in crate::leftovers::remove_beside_sparing(out, &input_root) {
            progress.removed_leftover(&leftover);
        }
    }
    if Model::is_model_path(&opts.input) {
        return convert_model(opts, control);
    }
    let (input, len) = files::open(&opts.input)?;
    let kind = Kind::of_file(&input, &opts.input, len)?;
    if kind == Kind::Safetensors {
        drop(input);
        return convert_model(opts, control);
    }
    if let Some(out) = &opts.output {
        files::check_distinct(&opts.input, out)?;
        if let Some(named) = Kind::of_name(out)
            && named != kind
        {
            return Err(Error::invalid(format!(
                "IN is a {} file but OUT {} names a {} file; lowp convert keeps the kind of file",
                kind.name(),
                out.display(),
                named.name()
            )));
        }
        if kind != Kind::Safetensors
            && let Target::Float(to) = opts.to
            && !to.in_numpy()
        {
            return Err(Error::invalid(format!(
                "NumPy files cannot hold {} (NumPy saves ml_dtypes arrays as raw bytes that do \
                 not say what they hold); use a .safetensors file, --to f16, or --dry-run",
                to.name()
            )));
        }
    }
    if kind != Kind::Safetensors && matches!(opts.to, Target::Scheme(_)) {
        return Err(Error::invalid(format!(
            "{} is a layout of safetensors tensors; NumPy files cannot hold it",
            opts.to.name()
        )));
    }
    let temp = opts.output.as_deref().map(TempOutput::create).transpose()?;
    progress.start(len);
    let output = temp
        .as_ref()
        .zip(opts.output.as_deref())
        .map(|(t, p)| (t.file(), p));
    let tensors = if kind == Kind::Npy {
        numpy::convert_npy(opts, &input, len, output, control)
    } else {
        numpy::convert_npz(opts, &input, output, control)
    };
    progress.finish();
    let tensors = tensors?;
    // Dropped uncommitted, a refused output is removed.
    let temp = temp.filter(|_| !opts.refuses(&tensors));
    let file_bytes_out = match &temp {
        Some(t) => t.file().metadata().map_err(|e| t.error(&e))?.len(),
        None => 0,
    };
    let written = temp.is_some();
    if let Some(t) = temp {
        t.commit()?;
    }
    Ok(Report {
        tensors,
        saturate: opts.saturate,
        file_bytes_in: len,
        file_bytes_out,
        written,
        skipped: Vec::new(),
        notes: Vec::new(),
    })
}

/// Converts a safetensors file or model ([`write_model`]) and gives the report.
fn convert_model(opts: &Options, control: Control<'_>) -> Result<Report, Error> {
    if let Some(out) = &opts.output
        && Model::is_model_path(&opts.input)
        && Kind::of_name(out).is_some()
    {
        return Err(Error::invalid(format!(
            "IN {} is a model directory, so OUT is written as one: give OUT as a directory name, \
             not {}",
            opts.input.display(),
            out.display()
        )));
    }
    if let Some(out) = &opts.output
        && !Model::is_model_path(&opts.input)
    {
        files::check_distinct(&opts.input, out)?;
        if out.is_dir() {
            return Err(Error::invalid(format!(
                "OUT {} is a directory, but IN is one safetensors file: give a file name (or \
                 give IN as the model's directory to write a model directory)",
                out.display()
            )));
        }
        if let Some(named) = Kind::of_name(out)
            && named != Kind::Safetensors
        {
            // IN was taken for safetensors because it is nothing else: if it is no safetensors
            // file either, that is the error to report, not the kinds of IN and OUT.
            let (input, len) = files::open(&opts.input)?;
            crate::safetensors::read_header(&input, &opts.input, len)?;
            return Err(Error::invalid(format!(
                "IN is a safetensors file but OUT {} names a {} file; lowp convert keeps the \
                 kind of file",
                out.display(),
                named.name()
            )));
        }
    }
    let result = write_model::convert(opts, control);
    control.progress.finish();
    let done = result?;
    Ok(Report {
        written: opts.output.is_some() && !opts.refuses(&done.tensors),
        tensors: done.tensors,
        saturate: opts.saturate,
        file_bytes_in: done.bytes_in,
        file_bytes_out: done.bytes_out,
        skipped: done.skipped,
        notes: done.notes,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::float_type::FloatType;

    /// A deterministic generator (splitmix64).
    struct Rng(u64);

    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let mut z = self.0;
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            z ^ (z >> 31)
        }
        fn below(&mut self, n: usize) -> usize {
            (self.next() % n.max(1) as u64) as usize
        }
    }

    /// Converts `bytes` as a file (dry run, then for real) and gives whether both failed;
    /// fails the test on a panic, naming the case.
    fn survives(dir: &Path, case: &str, bytes: &[u8], to: FloatType) -> bool {
        let input = dir.join("in.bin");
        std::fs::write(&input, bytes).unwrap();
        let out = dir.join("out.bin");
        let mut results = Vec::new();
        for output in [None, Some(out.clone())] {
            let opts = Options {
                per_tensor_scale: to.is_fp8(),
                ..Options::new(input.clone(), output, to)
            };
            let result = std::panic::catch_unwind(|| convert(&opts));
            match result {
                Ok(r) => results.push(r.is_err()),
                Err(_) => panic!("{case}: panicked"),
            }
        }
        // The real run never leaves a temporary file, and writes OUT only when it succeeds.
        let leftovers: Vec<_> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .filter(|n| n.to_string_lossy().contains(".tmp"))
            .collect();
        assert!(leftovers.is_empty(), "{case}: {leftovers:?}");
        assert_eq!(out.exists(), !results[1], "{case}");
        let _ = std::fs::remove_file(&out);
        results[0] && results[1]
    }

    /// Thousands of truncated and corrupted files, derived deterministically from the Python
    /// fixtures: none panics; every truncation and every lie about the header's length or a
    /// tensor's offsets is an error.
    #[test]
    fn corrupted_files_are_errors_never_panics() {
        let dir = std::env::temp_dir().join(format!("lowp-fuzz-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        // The fixtures are shared with the CLI's tests, which convert the same files end to end.
        let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("../lowp-cli/tests/data");
        let mut rng = Rng(42);
        let mut cases = 0;
        for name in [
            "model_f32.safetensors",
            "mixed.safetensors",
            "c_f32.npy",
            "fortran_f64_be.npy",
            "arrays.npz",
            "arrays_compressed.npz",
        ] {
            let good = std::fs::read(fixtures.join(name)).unwrap();
            let to = [FloatType::BF16, FloatType::F16, FloatType::F8E4M3FN][rng.below(3)];
            let to = if name.ends_with("safetensors") {
                to
            } else {
                FloatType::F16
            };
            // Every truncation is an error.
            for _ in 0..150 {
                let len = rng.below(good.len());
                let case = format!("{name} truncated to {len}");
                assert!(survives(&dir, &case, &good[..len], to), "{case}: accepted");
                cases += 1;
            }
            // Random bytes anywhere (header and body): errors or valid files, never panics.
            for _ in 0..250 {
                let mut bad = good.clone();
                let n = 1 + rng.below(4);
                for _ in 0..n {
                    let at = rng.below(bad.len());
                    bad[at] = rng.next() as u8;
                }
                survives(&dir, &format!("{name} with {n} random bytes"), &bad, to);
                cases += 1;
            }
            if !name.ends_with("safetensors") {
                continue;
            }
            let n = u64::from_le_bytes(good[..8].try_into().unwrap()) as usize;
            let header = std::str::from_utf8(&good[8..8 + n]).unwrap();
            // A header length that lies.
            for _ in 0..100 {
                let lie = match rng.below(3) {
                    0 => rng.next(),
                    1 => rng.below(n) as u64,
                    _ => (n + 1 + rng.below(good.len())) as u64,
                };
                let mut bad = good.clone();
                bad[..8].copy_from_slice(&lie.to_le_bytes());
                let case = format!("{name} with header length {lie}");
                assert!(survives(&dir, &case, &bad, to), "{case}: accepted");
                cases += 1;
            }
            // Offsets and shapes that lie: one number of the header replaced by another.
            let numbers: Vec<(usize, usize)> = header
                .char_indices()
                // Numbers in arrays (shapes and offsets), not digits in names.
                .filter(|&(i, c)| c.is_ascii_digit() && header[..i].ends_with(['[', ',']))
                .map(|(i, _)| {
                    let end = header[i..]
                        .find(|c: char| !c.is_ascii_digit())
                        .map_or(header.len(), |e| i + e);
                    (i, end)
                })
                .collect();
            for _ in 0..300 {
                let (start, end) = numbers[rng.below(numbers.len())];
                let old: u64 = header[start..end].parse().unwrap();
                let new = match rng.below(3) {
                    0 => old + 1 + rng.below(8) as u64,
                    1 => old.saturating_sub(1 + rng.below(8) as u64),
                    _ => rng.next() >> rng.below(64),
                };
                if new == old {
                    continue;
                }
                let text = format!("{}{new}{}", &header[..start], &header[end..]);
                let mut bad = (text.len() as u64).to_le_bytes().to_vec();
                bad.extend(text.as_bytes());
                bad.extend(&good[8 + n..]);
                let case = format!("{name} with {old} at {start} replaced by {new}");
                // A changed dimension of an empty tensor, or a shape whose product happens to
                // stay the same, can be a valid header; an offset cannot.
                let in_offsets =
                    header[..start].rfind("data_offsets") > header[..start].rfind("shape");
                let failed = survives(&dir, &case, &bad, to);
                assert!(failed || !in_offsets, "{case}: accepted");
                cases += 1;
            }
        }
        assert!(cases > 2000, "{cases}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
