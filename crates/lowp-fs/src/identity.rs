//! Whether two paths are one file: through `./`, `..`, symbolic links and hard links.

use crate::{Error, Named};
use std::fs;
use std::path::{Component, Path, PathBuf};

/// Where a path is: its canonical path (for a missing path, its nearest existing ancestor's
/// canonical path with the rest appended) and, where it exists, its device and inode.
#[derive(Debug)]
pub(crate) struct Identity {
    /// The canonical path.
    pub(crate) canonical: PathBuf,
    /// Device and inode, where the path exists (a hard link has its target's).
    pub(crate) inode: Option<(u64, u64)>,
    /// Whether the path exists.
    pub(crate) exists: bool,
}

impl Identity {
    /// The identity of `path`, or `None` when not even its root can be resolved.
    pub(crate) fn of(path: &Path) -> Option<Identity> {
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
    pub(crate) fn same(&self, other: &Identity) -> bool {
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
pub(crate) fn same_file(output: Named<'_>, other: Named<'_>) -> Error {
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
