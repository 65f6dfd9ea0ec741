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

mod check;
mod identity;
mod kind;
mod temp;

pub use check::{check_output, check_paths};
pub use identity::check_not_same;
pub use kind::{check_replaceable, kind_of};
pub use temp::{TempFile, create_dir, create_temp_dir_beside, rename, temp_name, write_atomically};

use std::fmt;
use std::path::Path;

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
    pub(crate) fn label(&self) -> String {
        format!("{} {}", self.name, self.path.display())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;
    use std::path::PathBuf;

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
