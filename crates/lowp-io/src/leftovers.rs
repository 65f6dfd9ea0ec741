//! Temporary outputs that a run could not remove, found and removed by a later run.
//!
//! An output is written under a temporary name beside it (`.OUT.lowp-PID-N.tmp`, a file or, for
//! a model, a directory; see [`crate::files::TempOutput`] and the model directory's `TempDir`) and
//! removed if the run fails. A process that is killed (SIGKILL, or SIGXFSZ past a file-size
//! limit) cannot remove it, so the next conversion into the same directory removes every such
//! name whose PID is no running process ([`remove_beside`]) and tells its caller through
//! [`crate::Progress::removed_leftover`].
//!
//! Only lowp's own names are touched, and only where the process is known to be gone: on
//! Linux a PID is running while `/proc/PID` exists; elsewhere (or without `/proc`) nothing is
//! removed. A process of another PID namespace (a container sharing the directory) is not
//! visible in `/proc`, so two namespaces should not convert into one directory at once. A
//! conversion never sweeps its own input ([`remove_beside_sparing`]): with OUT written inside a
//! model directory, a file there named like a leftover is the model's, not lowp's.

use std::ffi::OsStr;
use std::fmt;
use std::path::{Path, PathBuf};

/// A temporary output of a process that is no longer running, removed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Leftover {
    /// Where it was.
    pub path: PathBuf,
    /// The process that wrote it.
    pub pid: u32,
    /// Its size in bytes (a directory's: the files in it).
    pub bytes: u64,
}

impl fmt::Display for Leftover {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "removed {} ({} bytes), left by process {}, which is no longer running",
            self.path.display(),
            self.bytes,
            self.pid
        )
    }
}

/// The PID in a temporary output's name, `.NAME.lowp-PID-N.tmp` (NAME not empty), or `None`
/// for any other name.
pub fn temp_output_pid(name: &OsStr) -> Option<u32> {
    let name = name.to_str()?;
    let rest = name.strip_prefix('.')?.strip_suffix(".tmp")?;
    let (stem, numbers) = rest.rsplit_once(".lowp-")?;
    let (pid, counter) = numbers.split_once('-')?;
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    if stem.is_empty() || !digits(pid) || !digits(counter) {
        return None;
    }
    pid.parse().ok()
}

/// Whether process `pid` is running: `Some` on Linux with `/proc` mounted, `None` (unknown)
/// elsewhere.
pub fn process_running(pid: u32) -> Option<bool> {
    if !cfg!(target_os = "linux") || !Path::new("/proc/self").exists() {
        return None;
    }
    Some(pid == 0 || Path::new(&format!("/proc/{pid}")).exists())
}

/// Removes the temporary outputs of processes no longer running from the directory `target`
/// would be written in, and says which (best effort: what cannot be listed or removed is left
/// and not mentioned).
pub fn remove_beside(target: &Path) -> Vec<Leftover> {
    let dir = match target.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    remove_dead(dir, temp_output_pid)
}

/// [`remove_beside`], never touching `input` (a file or a folder) or anything in it: a name that
/// looks like a leftover but is an input of this run (OUT written inside a model directory,
/// beside the model's own files) is the user's file, not a leftover.
pub fn remove_beside_sparing(target: &Path, input: &Path) -> Vec<Leftover> {
    let dir = match target.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    let Ok(spared) = input.canonicalize() else {
        return Vec::new();
    };
    let inside = |p: &Path| p.canonicalize().is_ok_and(|c| c.starts_with(&spared));
    if inside(dir) {
        return Vec::new();
    }
    remove_dead(dir, |name| {
        temp_output_pid(name).filter(|_| !inside(&dir.join(name)))
    })
}

/// Removes from `dir` the entries whose name `pid_of` gives the PID of a process that is
/// known not to be running (files, and directories with everything in them; never a symbolic
/// link), and says which.
pub fn remove_dead(dir: &Path, pid_of: impl Fn(&OsStr) -> Option<u32>) -> Vec<Leftover> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut removed = Vec::new();
    for entry in entries.flatten() {
        let Some(pid) = pid_of(&entry.file_name()) else {
            continue;
        };
        if process_running(pid) != Some(false) {
            continue;
        }
        let path = entry.path();
        let Ok(meta) = std::fs::symlink_metadata(&path) else {
            continue;
        };
        let (bytes, gone) = if meta.is_dir() {
            let bytes = size_of_tree(&path);
            (bytes, std::fs::remove_dir_all(&path).is_ok())
        } else if meta.is_file() {
            (meta.len(), std::fs::remove_file(&path).is_ok())
        } else {
            continue;
        };
        if gone {
            removed.push(Leftover { path, pid, bytes });
        }
    }
    removed.sort_by(|a, b| a.path.cmp(&b.path));
    removed
}

/// The bytes of the files under `dir` (links not followed).
fn size_of_tree(dir: &Path) -> u64 {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return 0;
    };
    entries
        .flatten()
        .filter_map(|e| Some((e.path(), std::fs::symlink_metadata(e.path()).ok()?)))
        .map(|(path, meta)| {
            if meta.is_dir() {
                size_of_tree(&path)
            } else {
                meta.len()
            }
        })
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::files::TempOutput;

    /// A PID no process has: above Linux's largest (2^22).
    const DEAD: u32 = 4_194_999;

    #[test]
    fn names() {
        let pid = |s: &str| temp_output_pid(OsStr::new(s));
        assert_eq!(pid(".m.safetensors.lowp-123-0.tmp"), Some(123));
        assert_eq!(pid(".a.lowp-b.lowp-7-12.tmp"), Some(7));
        for other in [
            "m.safetensors.lowp-123-0.tmp",
            ".lowp-123-0.tmp",
            ".m.lowp-123.tmp",
            ".m.lowp--0.tmp",
            ".m.lowp-12x-0.tmp",
            ".m.lowp-123-0.tmp.bak",
            ".m.123.tmp",
            "lowp-bench-123.safetensors",
        ] {
            assert_eq!(pid(other), None, "{other}");
        }
    }

    #[test]
    fn the_outputs_own_temporary_names_are_recognised() {
        let dir = std::env::temp_dir().join(format!("lowp-leftovers-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let _tmp = TempOutput::create(&dir.join("out.safetensors")).unwrap();
        let names: Vec<_> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names.len(), 1);
        assert_eq!(temp_output_pid(&names[0]), Some(std::process::id()));
        drop(_tmp);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn only_dead_processes_files_are_removed() {
        if process_running(1).is_none() {
            return; // Not Linux: nothing is ever removed.
        }
        let dir = std::env::temp_dir().join(format!("lowp-leftovers-d-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let me = std::process::id();
        let dead_file = dir.join(format!(".out.safetensors.lowp-{DEAD}-0.tmp"));
        let dead_dir = dir.join(format!(".model.lowp-{DEAD}-1.tmp"));
        let live = dir.join(format!(".out.safetensors.lowp-{me}-0.tmp"));
        let other = dir.join(format!("out.lowp-{DEAD}-0.tmp"));
        std::fs::write(&dead_file, [0u8; 10]).unwrap();
        std::fs::create_dir(&dead_dir).unwrap();
        std::fs::write(dead_dir.join("shard.safetensors"), [0u8; 7]).unwrap();
        std::fs::write(&live, b"x").unwrap();
        std::fs::write(&other, b"x").unwrap();
        let removed = remove_beside(&dir.join("anything"));
        assert_eq!(
            removed,
            vec![
                Leftover {
                    path: dead_dir.clone(),
                    pid: DEAD,
                    bytes: 7
                },
                Leftover {
                    path: dead_file.clone(),
                    pid: DEAD,
                    bytes: 10
                },
            ]
        );
        assert!(!dead_file.exists() && !dead_dir.exists());
        assert!(live.exists() && other.exists());
        let message = removed[1].to_string();
        assert!(message.contains(&format!("lowp-{DEAD}-0.tmp")), "{message}");
        assert!(message.contains("no longer running"), "{message}");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[cfg(unix)]
    #[test]
    fn links_are_left() {
        if process_running(1).is_none() {
            return;
        }
        let dir = std::env::temp_dir().join(format!("lowp-leftovers-l-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let victim = dir.join("victim");
        std::fs::write(&victim, b"keep").unwrap();
        let link = dir.join(format!(".x.lowp-{DEAD}-0.tmp"));
        std::os::unix::fs::symlink(&victim, &link).unwrap();
        assert!(remove_beside(&dir.join("x")).is_empty());
        assert!(victim.exists() && link.symlink_metadata().is_ok());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
