//! A model directory written whole or not at all, and the files that travel with the weights.
//!
//! The shards, the index and the copied files are written into a hidden temporary directory
//! beside OUT (`.OUT.lowp-PID-RANDOM.tmp`, made by [`lowp_fs::create_temp_dir_beside`]), which is renamed to OUT only when everything
//! succeeded; dropped before that (an error, Ctrl-C) it is removed. So OUT either does not
//! exist or holds a complete model: an interrupted run leaves nothing that looks finished.
//! OUT must not exist yet, or be an empty directory: a model directory is never merged into
//! or replaced, since the files there may be someone's only copy.

use crate::error::Error;
use crate::layouts::{Layout, Summary, modelopt};
use crate::model_dir::Contents;
use crate::progress::Control;
use serde_json::Value;
use std::collections::HashMap;
use std::fs::{File, OpenOptions};
use std::path::{Path, PathBuf};

/// The output directory being written.
pub struct TempDir {
    /// Where it goes when complete.
    target: PathBuf,
    /// The temporary directory.
    path: PathBuf,
    /// Whether it was renamed into place.
    committed: bool,
}

impl TempDir {
    /// Creates the temporary directory for `target`, refusing a `target` that is `input` (or
    /// its directory) or a directory that is not empty.
    pub fn create(target: &Path, input: &Path) -> Result<TempDir, Error> {
        let input_dir = if input.is_dir() {
            input.to_path_buf()
        } else {
            input
                .parent()
                .map_or_else(|| PathBuf::from("."), Path::to_path_buf)
        };
        if let Ok(meta) = std::fs::symlink_metadata(target)
            && meta.file_type().is_symlink()
        {
            let to = std::fs::read_link(target).unwrap_or_default();
            return Err(Error::invalid(format!(
                "OUT {} is a symbolic link (to {}); a model directory is written in place of \
                 OUT, never through a link: give a new directory name",
                target.display(),
                to.display()
            )));
        }
        if let Ok(meta) = std::fs::metadata(target) {
            if !meta.is_dir() {
                return Err(Error::invalid(format!(
                    "OUT {} is {}, but a model directory is written as a directory: give a \
                     new directory name",
                    target.display(),
                    lowp_fs::kind_of(meta.file_type())
                )));
            }
            let same = match (target.canonicalize(), input_dir.canonicalize()) {
                (Ok(a), Ok(b)) => a == b,
                _ => false,
            };
            if same {
                return Err(Error::invalid(format!(
                    "OUT {} is the model's own directory; give another OUT",
                    target.display()
                )));
            }
            let mut entries = std::fs::read_dir(target)
                .map_err(|e| Error::file(format!("cannot list {}: {e}", target.display())))?;
            if entries.next().is_some() {
                return Err(Error::invalid(format!(
                    "OUT {} exists and is not empty; lowp convert writes a model directory \
                     whole and never into one that holds files: give a new directory",
                    target.display()
                )));
            }
        }
        let path = lowp_fs::create_temp_dir_beside(target).map_err(Error::from_fs)?;
        Ok(TempDir {
            target: target.to_path_buf(),
            path,
            committed: false,
        })
    }

    /// Where the directory goes (for the names in messages).
    pub fn target(&self) -> &Path {
        &self.target
    }

    /// Makes the folder `rel` (relative to the directory) in it.
    pub fn create_dir(&self, rel: &Path) -> Result<(), Error> {
        std::fs::create_dir(self.path.join(rel)).map_err(|e| {
            Error::file(format!(
                "cannot create {}: {e}",
                self.target.join(rel).display()
            ))
        })
    }

    /// Creates the file `rel` (relative to the directory) in it, for reading and writing.
    pub fn create_file(&self, rel: &Path) -> Result<File, Error> {
        OpenOptions::new()
            .read(true)
            .write(true)
            .create_new(true)
            .open(self.path.join(rel))
            .map_err(|e| {
                Error::file(format!(
                    "cannot create {}: {e}",
                    self.target.join(rel).display()
                ))
            })
    }

    /// Writes the file `rel` with `bytes`.
    pub fn write(&self, rel: &Path, bytes: &[u8]) -> Result<(), Error> {
        let file = self.create_file(rel)?;
        crate::files::write_at(&file, bytes, 0)
            .map_err(|e| crate::files::write_error(&self.target.join(rel), &e))
    }

    /// Copies the regular file `source` to `rel` in the directory, a chunk at a time, checking
    /// the cancel flag before each chunk and reporting the bytes as progress; an error names
    /// the file.
    pub fn copy(&self, source: &Path, rel: &Path, control: Control<'_>) -> Result<(), Error> {
        let (from, len) = crate::files::open(source)?;
        let to = self.create_file(rel)?;
        let mut buf = vec![0u8; COPY_CHUNK.min(len) as usize];
        let mut done = 0u64;
        while done < len {
            control.check()?;
            let n = COPY_CHUNK.min(len - done) as usize;
            crate::files::read_at(&from, &mut buf[..n], done)
                .map_err(|e| crate::files::read_error(source, &e))?;
            crate::files::write_at(&to, &buf[..n], done).map_err(|e| {
                Error::file(format!(
                    "cannot copy {} to {}: {e}",
                    source.display(),
                    self.target.join(rel).display()
                ))
            })?;
            done += n as u64;
            control.add(n as u64);
        }
        Ok(())
    }

    /// Renames the complete directory to its target (replacing an empty directory there).
    pub fn commit(mut self) -> Result<(), Error> {
        if self.target.is_dir() {
            std::fs::remove_dir(&self.target).map_err(|e| {
                Error::file(format!(
                    "cannot replace the empty {}: {e}",
                    self.target.display()
                ))
            })?;
        }
        crate::files::rename(&self.path, &self.target)?;
        self.committed = true;
        Ok(())
    }
}

/// The bytes copied between two looks at the cancel flag: a few milliseconds of disk.
const COPY_CHUNK: u64 = 4 << 20;

impl Drop for TempDir {
    fn drop(&mut self) {
        if !self.committed {
            // Best effort: the error being reported matters more than a leftover directory.
            let _ = std::fs::remove_dir_all(&self.path);
        }
    }
}

/// What the model owning a folder's `config.json` writes there: whether it owns one, and its
/// layout and summary when its weights were quantized.
pub(crate) type Owner<'a> = Option<&'a (Layout, Summary)>;

/// Copies the input's other files (config, tokenizer,
/// sentence-transformers' `1_Pooling/config.json`, ...) into `dir`, whose folders are made. The `config.json` of a
/// folder whose model is `owners[folder]` gets a `quantization_config` that says what the
/// weights now are: the layout's (its summary) when weights were quantized, none otherwise. A
/// config that had one and now holds plain weights (decoded, or a config that claimed a
/// quantization its tensors did not hold) loses it, and ModelOpt's `hf_quant_config.json`
/// goes with it; the layout's own extra files are written.
pub(crate) fn copy_files(
    contents: &Contents,
    owners: &HashMap<PathBuf, Owner<'_>>,
    dir: &TempDir,
    control: Control<'_>,
) -> Result<(), Error> {
    let extras: HashMap<&PathBuf, Vec<(&str, Value)>> = owners
        .iter()
        .map(|(folder, q)| {
            let extra = q.map_or_else(Vec::new, |(layout, summary)| layout.extra_files(summary));
            (folder, extra)
        })
        .collect();
    for copy in &contents.copies {
        control.check()?;
        let folder = copy.rel.parent().unwrap_or(Path::new("")).to_path_buf();
        let name = copy.rel.file_name().unwrap_or_default().to_string_lossy();
        if let (Some(quantization), Some(extra)) = (owners.get(&folder), extras.get(&folder)) {
            if name == modelopt::HF_QUANT_CONFIG || extra.iter().any(|(n, _)| *n == name) {
                continue;
            }
            if name == "config.json" {
                let config = quantization.map(|(l, s)| l.quantization_config(s));
                if let Some(out) = updated_config(&copy.source, config)? {
                    dir.write(&copy.rel, &out)?;
                    control.add(copy.bytes);
                    continue;
                }
            }
        }
        dir.copy(&copy.source, &copy.rel, control)?;
    }
    for (folder, extra) in extras {
        for (name, value) in extra {
            control.check()?;
            dir.write(&folder.join(name), &pretty(&value))?;
        }
    }
    Ok(())
}

/// `config.json` with `quantization_config` set to `config` (removed for `None`), or `None`
/// when the file needs no change (no quantization to write, none to remove).
fn updated_config(file: &Path, config: Option<Value>) -> Result<Option<Vec<u8>>, Error> {
    let text = crate::files::read_small(file, crate::files::MAX_JSON, "a config")?;
    let mut value: Value = serde_json::from_slice(&text).map_err(|e| {
        Error::file(format!(
            "{}: not valid JSON ({e}), so its quantization_config cannot be updated",
            file.display()
        ))
    })?;
    let Some(object) = value.as_object_mut() else {
        return Err(Error::file(format!(
            "{}: not a JSON object",
            file.display()
        )));
    };
    match config {
        Some(c) => {
            object.insert("quantization_config".into(), c);
        }
        None => {
            if object.remove("quantization_config").is_none() {
                return Ok(None);
            }
        }
    }
    Ok(Some(pretty(&value)))
}

/// JSON as transformers writes it: indented, with a final newline.
fn pretty(value: &Value) -> Vec<u8> {
    let mut out = serde_json::to_vec_pretty(value).unwrap_or_default();
    out.push(b'\n');
    out
}
