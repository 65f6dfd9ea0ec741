//! Output files that destroy nothing by accident: the one place where lowp decides whether a
//! path may be written, and how.
//!
//! Every file lowp writes (a converted checkpoint, a JSON report, a PNG, a report directory)
//! goes through this crate, so the rules hold for every writer alike:
//!
//! * **Inputs are only read.** [`check_paths`] refuses an output that is one of the inputs or
//!   another output: the same path, or the same file reached through `./`, `..`, a symbolic
//!   link or a hard link (compared by canonical path and by device and inode).
//! * **Only regular files are replaced.** An output that exists as a device (`/dev/null`), a
//!   FIFO, a socket or a directory where a file is expected is refused, not replaced by a new
//!   file: writing under a temporary name and renaming it into place would swap the device
//!   for a file. Nothing is written *through* such a path either; give a file name.
//! * **Outputs appear complete or not at all.** [`TempFile`] is created beside its target with
//!   `O_CREAT | O_EXCL` (`create_new`: a planted file or symbolic link at the temporary name is
//!   never followed or reused) under an unpredictable name `.NAME.lowp-PID-RANDOM.tmp`, renamed
//!   to the target when complete, and removed when dropped before that.
//! * **Unwritable outputs fail before the work.** [`check_paths`] creates (and removes) a
//!   probe file where each output will go, so a long run does not end in "permission denied".
//!
//! The crate prints nothing and never exits: every refusal is an [`Error`] naming the option,
//! the path and the problem, [`Error::Invalid`] for a request that cannot be honoured (a usage
//! error) and [`Error::Io`] for a file system that refused.
#![forbid(unsafe_code)]

use std::ffi::{OsStr, OsString};
use std::fmt;
use std::fs::{self, File, OpenOptions};
use std::hash::{BuildHasher, Hasher};
use std::io::{self, Write};
use std::path::{Component, Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// Why a path cannot be written.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Error {
    /// The request cannot be honoured: an output that is an input or another output, a device,
    /// FIFO or socket, a directory where a file is expected, an empty name (a usage error).
    Invalid(String),
    /// The file system refused: no permission, no space, a missing directory on the way.
    Io(String),
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Invalid(m) | Error::Io(m) => f.write_str(m),
        }
    }
}

impl std::error::Error for Error {}

/// What an output path is to be.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Expect {
    /// A regular file, replaced whole if it exists.
    File,
    /// A directory, created if missing, that files are written into.
    Dir,
}

/// A path as the user gave it, with the name of the argument that gave it (`IN`, `OUT`,
/// `--report`), for the messages.
#[derive(Clone, Copy, Debug)]
pub struct Named<'a> {
    /// The argument's name as the command line spells it.
    pub name: &'a str,
    /// The path.
    pub path: &'a Path,
}

impl<'a> Named<'a> {
    /// `path`, given as `name`.
    pub fn new(name: &'a str, path: &'a Path) -> Self {
        Named { name, path }
    }

    /// `NAME PATH`, as messages name it.
    fn label(&self) -> String {
        format!("{} {}", self.name, self.path.display())
    }
}

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
fn file_name<'p>(target: &'p Path, label: &str) -> Result<&'p OsStr, Error> {
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
fn parent_dir(target: &Path) -> &Path {
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
fn not_regular(label: &str, kind: fs::FileType) -> Error {
    let kind = kind_of(kind);
    Error::Invalid(format!(
        "{label} is {kind}, not a regular file; lowp replaces only regular files (a new file \
         would take its place): give a file name"
    ))
}

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

/// Where a path is: its canonical path (for a missing path, its nearest existing ancestor's
/// canonical path with the rest appended) and, where it exists, its device and inode.
#[derive(Debug)]
struct Identity {
    /// The canonical path.
    canonical: PathBuf,
    /// Device and inode, where the path exists (a hard link has its target's).
    inode: Option<(u64, u64)>,
    /// Whether the path exists.
    exists: bool,
}

impl Identity {
    /// The identity of `path`, or `None` when not even its root can be resolved.
    fn of(path: &Path) -> Option<Identity> {
        if let Ok(canonical) = fs::canonicalize(path) {
            return Some(Identity {
                inode: inode(&canonical),
                canonical,
                exists: true,
            });
        }
        // Missing: resolve the nearest existing ancestor and append the rest, lexically (the
        // rest does not exist, so it holds no links).
        let mut rest = Vec::new();
        let mut base = path;
        let canonical_base = loop {
            let parent = base.parent()?;
            rest.push(base.components().next_back()?);
            let parent = if parent.as_os_str().is_empty() {
                Path::new(".")
            } else {
                parent
            };
            if let Ok(c) = fs::canonicalize(parent) {
                break c;
            }
            base = parent;
        };
        let mut canonical = canonical_base;
        for part in rest.into_iter().rev() {
            match part {
                Component::ParentDir => {
                    canonical.pop();
                }
                Component::CurDir => {}
                other => canonical.push(other),
            }
        }
        Some(Identity {
            canonical,
            inode: None,
            exists: false,
        })
    }

    /// Whether `self` and `other` are the same file.
    fn same(&self, other: &Identity) -> bool {
        self.canonical == other.canonical || (self.inode.is_some() && self.inode == other.inode)
    }
}

/// The device and inode of an existing path.
fn inode(path: &Path) -> Option<(u64, u64)> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        fs::metadata(path).ok().map(|m| (m.dev(), m.ino()))
    }
    #[cfg(not(unix))]
    {
        let _ = path;
        None
    }
}

/// Refuses `output` when it is the file `input` (the same path, or the same file through
/// `./`, `..`, a symbolic link or a hard link). An input that does not exist clashes with
/// nothing (reading it will say what is wrong).
pub fn check_not_same(input: Named<'_>, output: Named<'_>) -> Result<(), Error> {
    let (Some(a), Some(b)) = (Identity::of(input.path), Identity::of(output.path)) else {
        return Ok(());
    };
    if a.exists && a.same(&b) {
        return Err(same_file(output, input));
    }
    Ok(())
}

/// The refusal of `output` that is `other`.
fn same_file(output: Named<'_>, other: Named<'_>) -> Error {
    Error::Invalid(format!(
        "{} is the same file as {}; lowp never writes over {}: give another {}",
        output.label(),
        other.label(),
        if other.name.starts_with("IN") {
            "its input"
        } else {
            "one of its own outputs"
        },
        output.name
    ))
}

/// Checks one output before any work: not empty, not a directory where a file is expected
/// (nor ending in `/`), not a device, FIFO or socket, its folder existing (for a file), and
/// writable (a probe file is created there and removed).
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
            if !dir.is_dir() {
                return Err(Error::Invalid(format!(
                    "cannot write {label}: no folder {}",
                    dir.display()
                )));
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

#[cfg(test)]
mod tests {
    use super::*;

    /// A fresh scratch folder for one test.
    fn scratch(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("lowp-fs-{name}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).unwrap();
        dir
    }

    /// The names in `dir`.
    fn names(dir: &Path) -> Vec<String> {
        let mut v: Vec<String> = fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    }

    #[test]
    fn temp_files_are_new_unpredictable_and_removed_unless_committed() {
        let dir = scratch("temp");
        let target = dir.join("out.bin");
        let a = TempFile::beside(&target).unwrap();
        let b = TempFile::beside(&target).unwrap();
        assert_ne!(a.path(), b.path());
        assert_eq!(a.path().parent(), Some(dir.as_path()));
        drop((a, b));
        assert!(names(&dir).is_empty());
        write_atomically(&target, b"abc").unwrap();
        write_atomically(&target, b"de").unwrap();
        assert_eq!(fs::read(&target).unwrap(), b"de");
        assert_eq!(names(&dir), ["out.bin"]);
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn targets_that_are_not_regular_files_are_refused() {
        let dir = scratch("special");
        let err = write_atomically(Path::new("/dev/null"), b"x").unwrap_err();
        assert!(
            matches!(&err, Error::Invalid(m) if m.contains("character device")),
            "{err}"
        );
        assert!(matches!(
            write_atomically(&dir, b"x"),
            Err(Error::Invalid(_))
        ));
        let slash = PathBuf::from(format!("{}/", dir.display()));
        let err = TempFile::beside(&slash).err().unwrap();
        assert!(err.to_string().contains("ends in '/'"), "{err}");
        assert!(names(&dir).is_empty());
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn clashes_are_found_through_links_and_dots() {
        let dir = scratch("clash");
        let input = dir.join("in.bin");
        fs::write(&input, b"in").unwrap();
        let hard = dir.join("hard.bin");
        fs::hard_link(&input, &hard).unwrap();
        let dotted = dir.join("sub/../in.bin");
        fs::create_dir(dir.join("sub")).unwrap();
        let inputs = [Named::new("IN", &input)];
        for out in [&input, &hard, &dotted] {
            let err =
                check_paths(&inputs, &[(Named::new("--report", out), Expect::File)]).unwrap_err();
            assert!(err.to_string().contains("same file as IN"), "{err}");
        }
        #[cfg(unix)]
        {
            let link = dir.join("link.bin");
            std::os::unix::fs::symlink(&input, &link).unwrap();
            assert!(check_not_same(inputs[0], Named::new("OUT", &link)).is_err());
        }
        let a = dir.join("a.json");
        let same = dir.join("./a.json");
        let err = check_paths(
            &inputs,
            &[
                (Named::new("OUT", &a), Expect::File),
                (Named::new("--report", &same), Expect::File),
            ],
        )
        .unwrap_err();
        assert!(err.to_string().contains("are the same file"), "{err}");
        check_paths(&inputs, &[(Named::new("OUT", &a), Expect::File)]).unwrap();
        let err = check_output(Named::new("--plot", Path::new("")), Expect::File).unwrap_err();
        assert_eq!(err.to_string(), "--plot is empty: give a file name");
        fs::remove_dir_all(&dir).unwrap();
    }
}
