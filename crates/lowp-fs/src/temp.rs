//! Writing complete or not at all: temporary files and directories created new beside their
//! target under unpredictable names, renamed into place when complete.

use crate::Error;
use crate::kind::{check_replaceable, file_name, kind_of, parent_dir};
use std::ffi::{OsStr, OsString};
use std::fs::{self, File, OpenOptions};
use std::hash::{BuildHasher, Hasher};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// An unpredictable temporary name for `name`: `.NAME.lowp-PID-RANDOM.tmp`. The random part
/// comes from the standard library's per-process random hash keys and a counter.
pub fn temp_name(name: &OsStr) -> OsString {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
    hasher.write_u64(COUNTER.fetch_add(1, Ordering::Relaxed));
    if let Ok(t) = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH) {
        hasher.write_u128(t.as_nanos());
    }
    let mut tmp = OsString::from(".");
    tmp.push(name);
    tmp.push(format!(
        ".lowp-{}-{}.tmp",
        std::process::id(),
        hasher.finish()
    ));
    tmp
}

/// How many fresh names are tried when a temporary name is taken.
const TRIES: usize = 16;

/// Makes something new beside `target` under a fresh [`temp_name`] with `make` (which must
/// fail with `AlreadyExists` on a taken name: `create_new`, `mkdir`), trying a few names.
fn create_beside<T>(
    target: &Path,
    name: &OsStr,
    what: &str,
    make: impl Fn(&Path) -> io::Result<T>,
) -> Result<(PathBuf, T), Error> {
    let dir = parent_dir(target);
    let mut last = None;
    for _ in 0..TRIES {
        let path = dir.join(temp_name(name));
        match make(&path) {
            Ok(made) => return Ok((path, made)),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => last = Some(e),
            Err(e) => {
                last = Some(e);
                break;
            }
        }
    }
    Err(Error::Io(format!(
        "cannot create a temporary {what} beside {}: {}",
        target.display(),
        last.map_or_else(String::new, |e| e.to_string())
    )))
}

/// Creates a new empty directory beside `target` under a [`temp_name`] (`mkdir` is exclusive:
/// an existing file or link there is never used), and answers its path.
pub fn create_temp_dir_beside(target: &Path) -> Result<PathBuf, Error> {
    let name = target
        .file_name()
        .ok_or_else(|| Error::Invalid(format!("{} names no directory", target.display())))?;
    create_beside(target, name, "directory", |p| fs::create_dir(p)).map(|(path, ())| path)
}

/// A file being written for `target`: created new beside it (in the target's folder, so the
/// rename is atomic), renamed to `target` by [`TempFile::commit`], and removed when dropped
/// without a commit (an error, Ctrl-C), so `target` is either untouched or complete.
pub struct TempFile {
    /// Where the file goes when complete.
    target: PathBuf,
    /// The temporary file's path.
    path: PathBuf,
    /// The open file, for reading and writing.
    file: File,
    /// Whether it has been renamed to `target`.
    committed: bool,
}

impl TempFile {
    /// Creates the temporary file for `target`, refusing a `target` that names a directory or
    /// exists as anything but a regular file. The file is opened with `create_new`, so a file
    /// or symbolic link someone planted at its name is never written through.
    pub fn beside(target: &Path) -> Result<TempFile, Error> {
        let name = file_name(target, &target.display().to_string())?;
        check_replaceable(target)?;
        let (path, file) = create_beside(target, name, "file", |p| {
            OpenOptions::new()
                .read(true)
                .write(true)
                .create_new(true)
                .open(p)
        })?;
        Ok(TempFile {
            target: target.to_path_buf(),
            path,
            file,
            committed: false,
        })
    }

    /// The open temporary file.
    pub fn file(&self) -> &File {
        &self.file
    }

    /// The temporary file's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Where the file goes.
    pub fn target(&self) -> &Path {
        &self.target
    }

    /// Renames the complete file to its target, replacing the regular file there, if any (a
    /// device or FIFO that appeared there meanwhile is refused). As `cp`, it leaves flushing
    /// to disk to the operating system.
    pub fn commit(mut self) -> Result<(), Error> {
        check_replaceable(&self.target)?;
        rename(&self.path, &self.target)?;
        self.committed = true;
        Ok(())
    }
}

impl Drop for TempFile {
    fn drop(&mut self) {
        if !self.committed {
            // Best effort: the error being reported matters more than a leftover file.
            let _ = fs::remove_file(&self.path);
        }
    }
}

/// Renames `from` to `to` (a finished output into place), the error naming both.
pub fn rename(from: &Path, to: &Path) -> Result<(), Error> {
    fs::rename(from, to).map_err(|e| {
        Error::Io(format!(
            "cannot rename {} to {}: {e}",
            from.display(),
            to.display()
        ))
    })
}

/// Writes `contents` to `target` through a [`TempFile`]: complete or not at all.
pub fn write_atomically(target: &Path, contents: &[u8]) -> Result<(), Error> {
    let tmp = TempFile::beside(target)?;
    (&tmp.file)
        .write_all(contents)
        .map_err(|e| Error::Io(format!("cannot write {}: {e}", target.display())))?;
    tmp.commit()
}

/// Creates the directory `dir` and its parents unless it exists; anything else in the way (a
/// file, a device) is refused.
pub fn create_dir(dir: &Path) -> Result<(), Error> {
    match fs::metadata(dir) {
        Ok(m) if m.is_dir() => return Ok(()),
        Ok(m) => {
            return Err(Error::Invalid(format!(
                "{} is {}, not a directory",
                dir.display(),
                kind_of(m.file_type())
            )));
        }
        Err(_) => {}
    }
    fs::create_dir_all(dir).map_err(|e| Error::Io(format!("cannot create {}: {e}", dir.display())))
}
