//! `lowp convert` on inputs that are not what they claim to be: an empty, junk or truncated
//! `.npy`/`.npz`, or a file taken for safetensors that is none, exits 1 with a message naming
//! what is wrong with IN (not 2 with "IN is a safetensors file but OUT names a .npy file"); an
//! `.npz` member whose data does not match its CRC-32 is refused even when it would be copied
//! unconverted; and nothing is left behind.

mod common;

use common::{data, listing, usage_error, work_error};
use std::io::Read;
use std::path::{Path, PathBuf};

/// A fresh, empty directory under the target directory for one test.
fn scratch(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// Writes `bytes` as `dir/name`, runs `lowp convert` of it to OUT `out_name` (and as a dry
/// run), expects exit 1 with a message holding `want`, and no new file in `dir`.
fn refused(dir: &Path, name: &str, bytes: &[u8], out_name: &str, want: &str) {
    let input = dir.join(name);
    std::fs::write(&input, bytes).unwrap();
    let before = listing(dir);
    let out = dir.join(out_name);
    for args in [
        vec!["convert", s(&input), s(&out), "--to", "f16"],
        vec!["convert", "--dry-run", s(&input), "--to", "f16"],
    ] {
        let err = work_error(&args);
        assert!(err.contains(want), "{args:?}: {err}");
        assert_eq!(listing(dir), before, "{args:?}");
    }
    std::fs::remove_file(&input).unwrap();
}

#[test]
fn inputs_that_are_not_what_they_claim_exit_1_naming_the_problem() {
    let dir = scratch("bad-inputs-kind");
    let junk = b"this is not an array, nor an archive".as_slice();
    let model = std::fs::read(data("model_f32.safetensors")).unwrap();
    let cases: [(&str, &[u8], &str, &str); 9] = [
        (
            "empty.npy",
            b"",
            "out.npy",
            "empty.npy: not a NumPy .npy file: the file is empty",
        ),
        (
            "junk.npy",
            junk,
            "out.npy",
            "junk.npy: not a NumPy .npy file: it does not start with the .npy magic string \
             \\x93NUMPY",
        ),
        (
            "short.npy",
            b"\x93NU",
            "out.npy",
            "short.npy: not a NumPy .npy file: the file is only 3 bytes: truncated?",
        ),
        (
            "renamed.npy",
            &model,
            "out.npy",
            "it looks like a safetensors file",
        ),
        (
            "empty.npz",
            b"",
            "out.npz",
            "empty.npz: not a NumPy .npz file: the file is empty",
        ),
        (
            "junk.npz",
            junk,
            "out.npz",
            "junk.npz: not a NumPy .npz file: it does not start with a zip signature \
             (PK\\x03\\x04)",
        ),
        // Named as nothing in particular, so read as safetensors: its reader's error, not
        // the kinds of IN and OUT.
        ("junk.bin", junk, "out.npy", "header length"),
        ("empty.safetensors", b"", "out.npz", "too short"),
        // A damaged .npy (its magic string intact) is the .npy reader's to explain.
        (
            "bad-version.npy",
            b"\x93NUMPY\x09\x00",
            "out.npy",
            "version 9.0",
        ),
    ];
    for (name, bytes, out, want) in cases {
        refused(&dir, name, bytes, out, want);
    }
    // A real safetensors file to a .npy OUT is still a usage error.
    let out = dir.join("m.npy");
    let m = data("model_f32.safetensors");
    let err = usage_error(&["convert", s(&m), s(&out), "--to", "f16"]);
    assert!(err.contains("IN is a safetensors file but OUT"), "{err}");
    assert!(!out.exists());
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn an_npz_member_with_a_bad_crc_is_refused_even_when_copied() {
    let dir = scratch("bad-inputs-crc");
    // arrays.npz is np.savez's (members stored); its w.npy is f32, so --to f32 copies it.
    let mut bytes = std::fs::read(data("arrays.npz")).unwrap();
    let mut w = Vec::new();
    zip::ZipArchive::new(std::io::Cursor::new(&bytes))
        .unwrap()
        .by_name("w.npy")
        .unwrap()
        .read_to_end(&mut w)
        .unwrap();
    let input = dir.join("in.npz");
    let out = dir.join("out.npz");
    // One bit of its data flipped: the archive's structure is intact, only the CRC-32 tells.
    let at = bytes.windows(w.len()).position(|m| m == w).unwrap() + w.len() - 1;
    bytes[at] ^= 0x01;
    std::fs::write(&input, &bytes).unwrap();
    for args in [
        vec!["convert", s(&input), s(&out), "--to", "f32"],
        vec!["convert", "--dry-run", s(&input), "--to", "f32"],
    ] {
        let err = work_error(&args);
        assert!(
            err.contains("in.npz: array 'w': the data is corrupt") && err.contains("CRC-32"),
            "{err}"
        );
        assert_eq!(listing(&dir), ["in.npz"]);
    }
    std::fs::remove_dir_all(&dir).unwrap();
}
