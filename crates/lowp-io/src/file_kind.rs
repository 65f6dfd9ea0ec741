//! What kind of file an input is (safetensors, `.npy`, `.npz`), from its first bytes and its
//! name.

use crate::error::Error;
use crate::files;
use std::fs::File;
use std::path::Path;

/// The kinds of file `lowp convert` reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// safetensors.
    Safetensors,
    /// A NumPy `.npy` array.
    Npy,
    /// A NumPy `.npz` archive.
    Npz,
}

impl Kind {
    /// The kind of the file `path` of `len` bytes, from its first bytes: `\x93NUMPY` is a
    /// `.npy`, a zip signature a `.npz`. A safetensors file starts with its header's length,
    /// which could spell a zip signature, but then has its JSON's `{` at byte 8, where a zip
    /// entry has its compression method; a name ending in `.npz` settles that case. Anything
    /// else is read as safetensors (whose reader says what is wrong with it), unless the name
    /// ends in `.npy` or `.npz`: then it is a damaged or mislabelled NumPy file, and the error
    /// says what its first bytes lack.
    pub(crate) fn of_file(file: &File, path: &Path, len: u64) -> Result<Kind, Error> {
        let mut head = [0u8; 9];
        let head = &mut head[..len.min(9) as usize];
        files::read_at(file, head, 0).map_err(|e| files::read_error(path, &e))?;
        let named = Kind::of_name(path);
        let zip = head.starts_with(b"PK\x03\x04") || head.starts_with(b"PK\x05\x06");
        if head.starts_with(b"\x93NUMPY") {
            return Ok(Kind::Npy);
        }
        if zip && (named == Some(Kind::Npz) || head.get(8) != Some(&b'{')) {
            return Ok(Kind::Npz);
        }
        let (kind, magic, spelled) = match named {
            Some(Kind::Npy) => (
                ".npy",
                &b"\x93NUMPY"[..],
                "the .npy magic string \\x93NUMPY",
            ),
            Some(Kind::Npz) => (".npz", &b"PK\x03\x04"[..], "a zip signature (PK\\x03\\x04)"),
            _ => return Ok(Kind::Safetensors),
        };
        let why = if len == 0 {
            "the file is empty".to_string()
        } else if head.len() < magic.len() && magic.starts_with(head) {
            format!("the file is only {len} bytes: truncated?")
        } else if head.get(8) == Some(&b'{') {
            format!("it does not start with {spelled}; it looks like a safetensors file")
        } else {
            format!("it does not start with {spelled}")
        };
        Err(Error::file(format!(
            "{}: not a NumPy {kind} file: {why}",
            path.display()
        )))
    }

    /// The kind a file name's extension says, if any.
    pub(crate) fn of_name(path: &Path) -> Option<Kind> {
        match path.extension()?.to_str()?.to_ascii_lowercase().as_str() {
            "safetensors" => Some(Kind::Safetensors),
            "npy" => Some(Kind::Npy),
            "npz" => Some(Kind::Npz),
            _ => None,
        }
    }

    /// The kind's name.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Kind::Safetensors => "safetensors",
            Kind::Npy => ".npy",
            Kind::Npz => ".npz",
        }
    }
}
