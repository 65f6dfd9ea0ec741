//! What a path is: its kind in words, the file name it names, its folder, and whether lowp may
//! replace what is there.

use crate::Error;
use std::ffi::OsStr;
use std::fs;
use std::io;
use std::path::Path;

/// What a file is, in words: "a FIFO (named pipe)", "a character device", ...
pub fn kind_of(file_type: fs::FileType) -> &'static str {
    if file_type.is_file() {
        return "a regular file";
    }
    if file_type.is_dir() {
        return "a directory";
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if file_type.is_fifo() {
            return "a FIFO (named pipe)";
        }
        if file_type.is_socket() {
            return "a socket";
        }
        if file_type.is_char_device() {
            return "a character device";
        }
        if file_type.is_block_device() {
            return "a block device";
        }
    }
    "not a regular file"
}

/// The name of the file `target` names, refusing paths that name a directory: empty, ending
/// in a separator (`out/`), or ending in `.` or `..`.
pub(crate) fn file_name<'p>(target: &'p Path, label: &str) -> Result<&'p OsStr, Error> {
    if target.as_os_str().is_empty() {
        return Err(Error::Invalid(format!(
            "{label} is empty: give a file name"
        )));
    }
    let text = target.as_os_str().as_encoded_bytes();
    let slash = text
        .last()
        .is_some_and(|&c| std::path::is_separator(c as char));
    match target.file_name() {
        Some(name) if !slash => Ok(name),
        _ => Err(Error::Invalid(format!(
            "{label} names a directory (it ends in '{}'); give a file name",
            if slash { "/" } else { "." }
        ))),
    }
}

/// The folder a file `target` is written in (`.` for a bare name).
pub(crate) fn parent_dir(target: &Path) -> &Path {
    match target.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    }
}

/// Refuses to replace `target` when it exists and is not a regular file (following symbolic
/// links: a link to `/dev/null` is refused too). A missing target is fine.
pub fn check_replaceable(target: &Path) -> Result<(), Error> {
    match fs::metadata(target) {
        Ok(m) if m.is_file() => Ok(()),
        Ok(m) => Err(not_regular(&target.display().to_string(), m.file_type())),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(Error::Io(format!("cannot write {}: {e}", target.display()))),
    }
}

/// The refusal of a target that is `kind`.
pub(crate) fn not_regular(label: &str, kind: fs::FileType) -> Error {
    let kind = kind_of(kind);
    Error::Invalid(format!(
        "{label} is {kind}, not a regular file; lowp replaces only regular files (a new file \
         would take its place): give a file name"
    ))
}
