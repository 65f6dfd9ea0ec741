//! The file handling of a conversion: positioned reads and writes, the temporary output that
//! is renamed into place only when complete, and same-file protection.
//!
//! Input is read with positioned reads (`pread`) into buffers of a megabyte or so, not
//! memory-mapped: memory stays at a few such buffers per thread whatever the size of a tensor,
//! no `unsafe` is needed, and a file truncated by someone else during the run gives a read
//! error instead of the `SIGBUS` a mapping would raise.

use crate::error::Error;
use std::fs::{File, OpenOptions};
use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// A byte buffer aligned for every element type (8 bytes), reused from block to block.
#[derive(Default)]
pub struct Block {
    /// The storage, in `u64`s for the alignment.
    words: Vec<u64>,
}

impl Block {
    /// The first `len` bytes, grown (zeroed) as needed.
    pub fn bytes(&mut self, len: usize) -> &mut [u8] {
        let words = len.div_ceil(8);
        if self.words.len() < words {
            self.words.resize(words, 0);
        }
        &mut bytemuck::cast_slice_mut::<u64, u8>(&mut self.words)[..len]
    }
}

/// Reads exactly `buf.len()` bytes of `file` from `offset`.
pub fn read_at(file: &File, buf: &mut [u8], offset: u64) -> io::Result<()> {
    #[cfg(unix)]
    {
        std::os::unix::fs::FileExt::read_exact_at(file, buf, offset)
    }
    #[cfg(windows)]
    {
        let (mut buf, mut offset) = (buf, offset);
        while !buf.is_empty() {
            match std::os::windows::fs::FileExt::seek_read(file, buf, offset) {
                Ok(0) => return Err(io::ErrorKind::UnexpectedEof.into()),
                Ok(n) => {
                    buf = &mut buf[n..];
                    offset += n as u64;
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        Ok(())
    }
}

/// Writes all of `buf` to `file` at `offset`.
pub fn write_at(file: &File, buf: &[u8], offset: u64) -> io::Result<()> {
    #[cfg(unix)]
    {
        std::os::unix::fs::FileExt::write_all_at(file, buf, offset)
    }
    #[cfg(windows)]
    {
        let (mut buf, mut offset) = (buf, offset);
        while !buf.is_empty() {
            match std::os::windows::fs::FileExt::seek_write(file, buf, offset) {
                Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
                Ok(n) => {
                    buf = &buf[n..];
                    offset += n as u64;
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        Ok(())
    }
}

/// The error of a failed read of `path`; an early end means the file is shorter than its
/// header says, or changed during the run.
pub fn read_error(path: &Path, e: &io::Error) -> Error {
    let why = if e.kind() == io::ErrorKind::UnexpectedEof {
        "the file ended early (truncated, or changed while being read)".to_string()
    } else {
        e.to_string()
    };
    Error::file(format!("cannot read {}: {why}", path.display()))
}

/// The error of a failed write of the output for `path`.
pub fn write_error(path: &Path, e: &io::Error) -> Error {
    Error::file(format!("cannot write {}: {e}", path.display()))
}

/// The output being written: a new file beside OUT (`.OUT.lowp-PID-N.tmp`), renamed to OUT
/// by [`TempOutput::commit`]. Dropped without a commit (an error, Ctrl-C), it is removed, so
/// OUT is either untouched or complete.
pub struct TempOutput {
    /// Where the output goes when complete.
    target: PathBuf,
    /// The temporary file's path.
    path: PathBuf,
    /// The open file.
    file: File,
    /// Whether it has been renamed to `target`.
    committed: bool,
}

impl TempOutput {
    /// Creates the temporary file for `target` in its folder.
    pub fn create(target: &Path) -> Result<TempOutput, Error> {
        static COUNTER: AtomicU64 = AtomicU64::new(0);
        let name = target
            .file_name()
            .ok_or_else(|| Error::invalid(format!("OUT {} names no file", target.display())))?;
        let mut tmp_name = std::ffi::OsString::from(".");
        tmp_name.push(name);
        tmp_name.push(format!(
            ".lowp-{}-{}.tmp",
            std::process::id(),
            COUNTER.fetch_add(1, Ordering::Relaxed)
        ));
        let path = target.with_file_name(tmp_name);
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create_new(true)
            .open(&path)
            .map_err(|e| {
                Error::file(format!(
                    "cannot create a temporary file beside {}: {e}",
                    target.display()
                ))
            })?;
        Ok(TempOutput {
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

    /// The error of a failed write to the output.
    pub fn error(&self, e: &io::Error) -> Error {
        write_error(&self.target, e)
    }

    /// Renames the complete file to its target, replacing any file there. As `cp`, it leaves
    /// flushing to disk to the operating system.
    pub fn commit(mut self) -> Result<(), Error> {
        rename(&self.path, &self.target)?;
        self.committed = true;
        Ok(())
    }
}

/// Renames `from` to `to` (a finished output into place), the error naming both.
pub fn rename(from: &Path, to: &Path) -> Result<(), Error> {
    std::fs::rename(from, to).map_err(|e| {
        Error::file(format!(
            "cannot rename {} to {}: {e}",
            from.display(),
            to.display()
        ))
    })
}

impl Drop for TempOutput {
    fn drop(&mut self) {
        if !self.committed {
            // Best effort: the error being reported matters more than a leftover file.
            let _ = std::fs::remove_file(&self.path);
        }
    }
}

/// Refuses an OUT that is IN: the same canonical path, or (where OUT exists) the same file
/// under another name (a hard link).
pub fn check_distinct(input: &Path, output: &Path) -> Result<(), Error> {
    let same = || {
        Error::invalid(format!(
            "IN and OUT are the same file ({}); give another OUT",
            input.display()
        ))
    };
    let canonical_in = input
        .canonicalize()
        .map_err(|e| Error::file(format!("cannot open {}: {e}", input.display())))?;
    let canonical_out = match output.canonicalize() {
        Ok(p) => p,
        Err(_) => {
            let parent = match output.parent() {
                Some(p) if !p.as_os_str().is_empty() => p,
                _ => Path::new("."),
            };
            let dir = parent.canonicalize().map_err(|e| {
                Error::invalid(format!(
                    "cannot write {}: no folder {} ({e})",
                    output.display(),
                    parent.display()
                ))
            })?;
            match output.file_name() {
                Some(name) => dir.join(name),
                None => {
                    return Err(Error::invalid(format!(
                        "OUT {} names no file",
                        output.display()
                    )));
                }
            }
        }
    };
    if canonical_in == canonical_out {
        return Err(same());
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        if let (Ok(a), Ok(b)) = (std::fs::metadata(input), std::fs::metadata(output))
            && a.dev() == b.dev()
            && a.ino() == b.ino()
        {
            return Err(same());
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_are_aligned_and_grow() {
        let mut b = Block::default();
        assert_eq!(b.bytes(3).len(), 3);
        let bytes = b.bytes(100);
        assert_eq!(bytes.len(), 100);
        assert_eq!(bytes.as_ptr() as usize % 8, 0);
    }

    #[test]
    fn temporary_output_is_removed_unless_committed() {
        let dir = std::env::temp_dir().join(format!("lowp-files-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let target = dir.join("out.bin");
        let tmp = TempOutput::create(&target).unwrap();
        write_at(tmp.file(), b"abc", 2).unwrap();
        let path = tmp.path.clone();
        assert!(path.exists());
        drop(tmp);
        assert!(!path.exists() && !target.exists());
        let tmp = TempOutput::create(&target).unwrap();
        write_at(tmp.file(), b"abc", 0).unwrap();
        tmp.commit().unwrap();
        assert_eq!(std::fs::read(&target).unwrap(), b"abc");
        let mut buf = [0u8; 2];
        read_at(&File::open(&target).unwrap(), &mut buf, 1).unwrap();
        assert_eq!(&buf, b"bc");
        let err = read_at(&File::open(&target).unwrap(), &mut buf, 2).unwrap_err();
        assert!(
            read_error(&target, &err)
                .to_string()
                .contains("ended early")
        );
        assert!(matches!(
            check_distinct(&target, &target).unwrap_err(),
            Error::Invalid(_)
        ));
        check_distinct(&target, &dir.join("other.bin")).unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
