//! The checks every command runs on its outputs before any work.

use crate::identity::{Identity, same_file};
use crate::kind::{file_name, kind_of, not_regular, parent_dir};
use crate::temp::TempFile;
use crate::{Error, Expect, Named};
use std::fs;
use std::path::Path;

/// Checks one output before any work: not empty, not a directory where a file is expected
/// (nor ending in `/`), not a device, FIFO or socket, its folder existing (for a file; a
/// missing folder is an [`Error::Io`], as the file system's refusals are), and writable (a
/// probe file is created there and removed).
pub fn check_output(output: Named<'_>, expect: Expect) -> Result<(), Error> {
    let label = output.label();
    let path = output.path;
    if path.as_os_str().is_empty() {
        return Err(Error::Invalid(format!(
            "{} is empty: give a {} name",
            output.name,
            match expect {
                Expect::File => "file",
                Expect::Dir => "directory",
            }
        )));
    }
    let meta = fs::metadata(path);
    let probe_dir = match expect {
        Expect::File => {
            file_name(path, &label)?;
            match &meta {
                Ok(m) if m.is_file() => {}
                Ok(m) if m.is_dir() => {
                    return Err(Error::Invalid(format!(
                        "{label} is a directory; give a file name"
                    )));
                }
                Ok(m) => return Err(not_regular(&label, m.file_type())),
                Err(_) => {}
            }
            let dir = parent_dir(path);
            // A missing folder is the file system's answer, as a missing input is: an I/O
            // error with the OS's reason, not a usage error.
            match fs::metadata(dir) {
                Ok(m) if m.is_dir() => {}
                Ok(m) => {
                    return Err(Error::Io(format!(
                        "cannot write {label}: {} is {}, not a folder",
                        dir.display(),
                        kind_of(m.file_type())
                    )));
                }
                Err(e) => {
                    return Err(Error::Io(format!(
                        "cannot write {label}: no folder {}: {e}",
                        dir.display()
                    )));
                }
            }
            dir.to_path_buf()
        }
        Expect::Dir => match &meta {
            Ok(m) if m.is_dir() => path.to_path_buf(),
            Ok(m) => {
                return Err(Error::Invalid(format!(
                    "{label} is {}, not a directory",
                    kind_of(m.file_type())
                )));
            }
            // Created when written: probe the nearest existing ancestor.
            Err(_) => path
                .ancestors()
                .skip(1)
                .map(|p| {
                    if p.as_os_str().is_empty() {
                        Path::new(".")
                    } else {
                        p
                    }
                })
                .find(|p| p.is_dir())
                .unwrap_or(Path::new("."))
                .to_path_buf(),
        },
    };
    let probe = TempFile::beside(&probe_dir.join("write-probe"))
        .map_err(|e| Error::Io(format!("cannot write {label}: {e}")))?;
    drop(probe);
    Ok(())
}

/// Checks every output of a command against every input and every other output before any
/// work ([`check_output`] on each, then the clashes): an output may not be an input or
/// another output (through any path, link or hard link), may not replace a file inside an
/// input directory, and a directory output may not hold an input.
pub fn check_paths(inputs: &[Named<'_>], outputs: &[(Named<'_>, Expect)]) -> Result<(), Error> {
    for &(output, expect) in outputs {
        check_output(output, expect)?;
    }
    let inputs: Vec<(Named<'_>, Identity)> = inputs
        .iter()
        .filter_map(|&n| Identity::of(n.path).filter(|i| i.exists).map(|i| (n, i)))
        .collect();
    let outputs: Vec<(Named<'_>, Expect, Identity)> = outputs
        .iter()
        .filter_map(|&(n, e)| Identity::of(n.path).map(|i| (n, e, i)))
        .collect();
    for (k, (out, expect, id)) in outputs.iter().enumerate() {
        for (input, input_id) in &inputs {
            if id.same(input_id) {
                return Err(same_file(*out, *input));
            }
            let in_dir = input.path.is_dir();
            if in_dir && id.exists && id.canonical.starts_with(&input_id.canonical) {
                return Err(Error::Invalid(format!(
                    "{} is inside {} and would replace a file of it; lowp never writes over \
                     its input: give another {}",
                    out.label(),
                    input.label(),
                    out.name
                )));
            }
            if *expect == Expect::Dir && input_id.canonical.starts_with(&id.canonical) {
                return Err(Error::Invalid(format!(
                    "{} holds {}; lowp never writes where its input is: give another {}",
                    out.label(),
                    input.label(),
                    out.name
                )));
            }
        }
        // A file inside a directory output is fine (`bench convert-file --dir D --json
        // D/bench.json`): the directory's own files have names of their own.
        for (other, _, other_id) in &outputs[..k] {
            if id.same(other_id) {
                return Err(Error::Invalid(format!(
                    "{} and {} are the same file; give each output its own name",
                    other.label(),
                    out.label()
                )));
            }
        }
    }
    Ok(())
}
