//! Hostile and damaged NumPy files, end to end: headers that nest brackets deeply, in a `.npy`
//! and in `.npz` members, are refused at once with an error saying why; a `.npz` member whose
//! data does not match its CRC-32 is refused whether it would be converted or copied; and
//! nothing is left behind.

use lowp_io::{Error, FloatType, Options, Report};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// A `.npy` file of `descr`, `shape` and `data`.
fn npy(header: &str, data: &[u8]) -> Vec<u8> {
    let mut h = header.to_string();
    while !(10 + h.len() + 1).is_multiple_of(64) {
        h.push(' ');
    }
    h.push('\n');
    let mut out = b"\x93NUMPY\x01\x00".to_vec();
    out.extend((h.len() as u16).to_le_bytes());
    out.extend(h.as_bytes());
    out.extend(data);
    out
}

/// A fresh scratch folder for one test.
fn scratch(test: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("lowp-io-numpy-{test}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// A `.npy` file whose `descr` nests `depth` lists deep around `'<f4'`, one element.
fn nested_npy(depth: usize) -> Vec<u8> {
    let header = format!(
        "{{'descr': {}'<f4'{}, 'fortran_order': False, 'shape': (1,), }}",
        "[".repeat(depth),
        "]".repeat(depth)
    );
    npy(&header, &[0; 4])
}

/// An `.npz` archive of `members` (name, bytes), stored or deflated.
fn npz(members: &[(&str, Vec<u8>)], deflated: bool) -> Vec<u8> {
    let mut zip = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    let method = if deflated {
        zip::CompressionMethod::Deflated
    } else {
        zip::CompressionMethod::Stored
    };
    let options = zip::write::SimpleFileOptions::default().compression_method(method);
    for (name, bytes) in members {
        zip.start_file(*name, options).unwrap();
        zip.write_all(bytes).unwrap();
    }
    zip.finish().unwrap().into_inner()
}

/// `lowp_io::convert` of `input` to `out` as f32 (a dry run with no `out`), on a thread that
/// must answer within 10 s, so that a parser gone exponential fails the test instead of
/// hanging it.
fn convert_within_10_s(input: &Path, out: Option<&Path>) -> Result<Report, Error> {
    let opts = Options::new(input, out.map(Path::to_path_buf), FloatType::F32);
    let (send, recv) = std::sync::mpsc::channel();
    std::thread::spawn(move || send.send(lowp_io::convert(&opts)));
    recv.recv_timeout(Duration::from_secs(10))
        .unwrap_or_else(|_| {
            panic!(
                "{} took over 10 s: is the header parser exponential?",
                input.display()
            )
        })
}

/// Expects `input` to be refused as a bad file with a message holding `want`, in a dry run
/// and in a conversion, and nothing but the inputs in `dir` afterwards.
fn refused(dir: &Path, input: &Path, want: &str) {
    let before = listing(dir);
    let out = dir.join(format!(
        "out.{}",
        input.extension().unwrap().to_str().unwrap()
    ));
    for out in [None, Some(out.as_path())] {
        match convert_within_10_s(input, out) {
            Err(Error::File(m)) => assert!(m.contains(want), "{}: {m}", input.display()),
            other => panic!("{}: {other:?}", input.display()),
        }
        assert_eq!(listing(dir), before, "{}", input.display());
    }
}

/// The files in `dir`, sorted.
fn listing(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

#[test]
fn deeply_nested_headers_are_refused_at_once() {
    let dir = scratch("nesting");
    // The header's dict is one level of the 32 allowed, so `descr` may nest 31 deep: those
    // parse (and are refused as structured dtypes without fields); deeper ones stop at the
    // cap. The parser is linear: a recursive one takes seconds at depth 20 and hours at 30.
    let cases = [
        (20, "invalid .npy header: a field has no dtype"),
        (30, "invalid .npy header: a field has no dtype"),
        (31, "invalid .npy header: a field has no dtype"),
        (
            32,
            "invalid .npy header: brackets nest deeper than 32 levels",
        ),
        (
            1_000,
            "invalid .npy header: brackets nest deeper than 32 levels",
        ),
        (5_000, "bytes, more than the 10000 NumPy accepts"),
    ];
    for (depth, want) in cases {
        let a = dir.join("a.npy");
        std::fs::write(&a, nested_npy(depth)).unwrap();
        // A `.npy` is named by its file stem, as an `.npz` member by its name.
        refused(&dir, &a, want);
        std::fs::remove_file(&a).unwrap();
        for deflated in [false, true] {
            let z = dir.join("a.npz");
            std::fs::write(&z, npz(&[("a.npy", nested_npy(depth))], deflated)).unwrap();
            refused(&dir, &z, want);
            std::fs::remove_file(&z).unwrap();
        }
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn npz_members_with_a_bad_crc_are_refused_converted_or_copied() {
    let dir = scratch("crc");
    let f32s = npy(
        "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }",
        &[0, 0, 128, 63, 0, 0, 0, 64],
    );
    let f64s = npy(
        "{'descr': '<f8', 'fortran_order': False, 'shape': (1,), }",
        &1.5f64.to_le_bytes(),
    );
    let ints = npy(
        "{'descr': '<i4', 'fortran_order': False, 'shape': (1,), }",
        &[7, 0, 0, 0],
    );
    let members = [
        ("kept_f32.npy", f32s),
        ("converted.npy", f64s),
        ("ints.npy", ints),
        ("notes.txt", b"not an array".to_vec()),
    ];
    let good = npz(&members, false);
    // The intact archive converts: f32 kept, f64 converted, the rest copied.
    let input = dir.join("in.npz");
    let out = dir.join("out.npz");
    std::fs::write(&input, &good).unwrap();
    convert_within_10_s(&input, Some(&out)).unwrap();
    std::fs::remove_file(&out).unwrap();
    // One byte flipped in the last byte of each member's data in turn (stored, so the
    // archive's structure is intact and only the CRC-32 can tell).
    let what = [
        "array 'kept_f32': the data is corrupt",
        "array 'converted': the data is corrupt",
        "array 'ints': the data is corrupt",
        "member 'notes.txt': the data is corrupt",
    ];
    for ((name, bytes), want) in members.iter().zip(what) {
        let at = find(&good, bytes) + bytes.len() - 1;
        let mut bad = good.clone();
        bad[at] ^= 0x01;
        std::fs::write(&input, &bad).unwrap();
        refused(&dir, &input, want);
        let err = convert_within_10_s(&input, None).unwrap_err().to_string();
        assert!(err.contains("CRC-32"), "{name}: {err}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Where `needle` starts in `haystack`.
fn find(haystack: &[u8], needle: &[u8]) -> usize {
    haystack
        .windows(needle.len())
        .position(|w| w == needle)
        .expect("the member is stored as it is")
}
