//! The file handling of a conversion: positioned reads and writes, the temporary output that
//! is renamed into place only when complete, and same-file protection.
//!
//! Input is read with positioned reads (`pread`) into buffers of a megabyte or so, not
//! memory-mapped: memory stays at a few such buffers per thread whatever the size of a tensor,
//! no `unsafe` is needed, and a file truncated by someone else during the run gives a read
//! error instead of the `SIGBUS` a mapping would raise.

use crate::error::Error;
use std::fs::File;
use std::io;
use std::path::Path;

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

/// Opens the regular file `path` for reading and gives its length; an error names the file.
///
/// Anything else (a FIFO, a socket, a device, a directory), directly or through a symbolic
/// link, is refused before it is opened: opening a FIFO for reading waits for a writer, and a
/// device such as `/dev/zero` never ends. The file is opened non-blocking and its type checked
/// again on the open descriptor, so a regular file swapped for a FIFO between the two checks
/// cannot hang the run either (regular files ignore the flag).
pub fn open(path: &Path) -> Result<(File, u64), Error> {
    let cannot = |why: String| Error::file(format!("cannot open {}: {why}", path.display()));
    let meta = std::fs::metadata(path).map_err(|e| cannot(e.to_string()))?;
    if !meta.is_file() {
        return Err(not_regular(path, meta.file_type()));
    }
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::custom_flags(&mut options, libc::O_NONBLOCK);
    let file = options.open(path).map_err(|e| cannot(e.to_string()))?;
    let meta = file.metadata().map_err(|e| read_error(path, &e))?;
    if !meta.is_file() {
        return Err(not_regular(path, meta.file_type()));
    }
    Ok((file, meta.len()))
}

/// The largest JSON side file read whole (a `config.json`, an `--activation-amax` list): a
/// model's config is some kilobytes, so this only bounds the memory a hostile one can take.
pub const MAX_JSON: u64 = 64 << 20;

/// Reads the whole regular file `path` (a config, an index, a list of amaxes) of at most
/// `max` bytes, through [`open`]; `what` names it in the error about its size.
pub fn read_small(path: &Path, max: u64, what: &str) -> Result<Vec<u8>, Error> {
    let (file, len) = open(path)?;
    if len > max {
        return Err(Error::file(format!(
            "{}: {len} bytes is too large for {what} (at most {max})",
            path.display()
        )));
    }
    let mut text = vec![0u8; len as usize];
    read_at(&file, &mut text, 0).map_err(|e| read_error(path, &e))?;
    Ok(text)
}

/// The error for an input that is not a regular file: what it is, and where a symbolic link
/// points.
pub fn not_regular(path: &Path, file_type: std::fs::FileType) -> Error {
    let link = match std::fs::read_link(path) {
        Ok(target) => format!(" (a symbolic link to {})", target.display()),
        Err(_) => String::new(),
    };
    Error::file(format!(
        "{}{link} is {}, not a regular file: lowp reads only regular files",
        path.display(),
        lowp_fs::kind_of(file_type)
    ))
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

/// The output being written: a new file beside OUT (`.OUT.lowp-PID-RANDOM.tmp`, created
/// exclusively by [`lowp_fs::TempFile`]), renamed to OUT by [`TempOutput::commit`]. Dropped
/// without a commit (an error, Ctrl-C), it is removed, so OUT is either untouched or complete.
/// An OUT that exists as anything but a regular file (a device such as `/dev/null`, a FIFO, a
/// socket, a directory) is refused, never replaced.
pub struct TempOutput(lowp_fs::TempFile);

impl TempOutput {
    /// Creates the temporary file for `target` in its folder.
    pub fn create(target: &Path) -> Result<TempOutput, Error> {
        lowp_fs::TempFile::beside(target)
            .map(TempOutput)
            .map_err(Error::from_fs)
    }

    /// The open temporary file.
    pub fn file(&self) -> &File {
        self.0.file()
    }

    /// The error of a failed write to the output.
    pub fn error(&self, e: &io::Error) -> Error {
        write_error(self.0.target(), e)
    }

    /// Renames the complete file to its target, replacing any regular file there. As `cp`, it
    /// leaves flushing to disk to the operating system.
    pub fn commit(self) -> Result<(), Error> {
        self.0.commit().map_err(Error::from_fs)
    }
}

/// Renames `from` to `to` (a finished output into place), the error naming both.
pub fn rename(from: &Path, to: &Path) -> Result<(), Error> {
    lowp_fs::rename(from, to).map_err(Error::from_fs)
}

/// Refuses an OUT that is IN: the same file through any path (`./`, `..`, symbolic links) or
/// under another name (a hard link). See [`lowp_fs::check_not_same`].
pub fn check_distinct(input: &Path, output: &Path) -> Result<(), Error> {
    use lowp_fs::Named;
    lowp_fs::check_not_same(Named::new("IN", input), Named::new("OUT", output))
        .map_err(Error::from_fs)
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
        let path = tmp.0.path().to_path_buf();
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
