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
use crate::model::Model;
use serde_json::Value;
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

    /// Creates the file `name` in the directory, for reading and writing.
    pub fn create_file(&self, name: &str) -> Result<File, Error> {
        OpenOptions::new()
            .read(true)
            .write(true)
            .create_new(true)
            .open(self.path.join(name))
            .map_err(|e| {
                Error::file(format!(
                    "cannot create {}: {e}",
                    self.target.join(name).display()
                ))
            })
    }

    /// Writes the file `name` with `bytes`.
    pub fn write(&self, name: &str, bytes: &[u8]) -> Result<(), Error> {
        let file = self.create_file(name)?;
        crate::files::write_at(&file, bytes, 0)
            .map_err(|e| crate::files::write_error(&self.target.join(name), &e))
    }

    /// Copies the file or folder `source` into the directory under its own name (a folder
    /// with everything in it; symbolic links are followed).
    pub fn copy(&self, source: &Path) -> Result<(), Error> {
        let name = source.file_name().unwrap_or_default();
        copy_tree(source, &self.path.join(name)).map_err(|e| {
            Error::file(format!(
                "cannot copy {} into {}: {e}",
                source.display(),
                self.target.display()
            ))
        })
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

/// Copies a file, or a folder and everything in it.
fn copy_tree(from: &Path, to: &Path) -> std::io::Result<()> {
    if from.is_dir() {
        std::fs::create_dir(to)?;
        for entry in std::fs::read_dir(from)? {
            let entry = entry?;
            copy_tree(&entry.path(), &to.join(entry.file_name()))?;
        }
        Ok(())
    } else {
        std::fs::copy(from, to).map(|_| ())
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        if !self.committed {
            // Best effort: the error being reported matters more than a leftover directory.
            let _ = std::fs::remove_dir_all(&self.path);
        }
    }
}

/// Copies the model directory's other files (config, tokenizer, ...) into `dir`, with a
/// `config.json` whose `quantization_config` says what the weights now are: the layout's
/// (`quantization`: the layout and what its summary says) when weights were quantized, none
/// otherwise. A config that had one and now holds plain weights (decoded, or a config that
/// claimed a quantization its tensors did not hold) loses it, and ModelOpt's
/// `hf_quant_config.json` goes with it; the layout's own extra files are written.
pub(crate) fn copy_model_files(
    model: &Model,
    dir: &TempDir,
    quantization: Option<&(Layout, Summary)>,
) -> Result<(), Error> {
    let extra = quantization.map_or_else(Vec::new, |(layout, summary)| layout.extra_files(summary));
    for file in model.other_files()? {
        let name = file
            .file_name()
            .unwrap_or_default()
            .to_string_lossy()
            .to_string();
        if name == modelopt::HF_QUANT_CONFIG || extra.iter().any(|(n, _)| *n == name) {
            continue;
        }
        if name == "config.json" {
            let config = quantization.map(|(l, s)| l.quantization_config(s));
            if let Some(out) = updated_config(&file, config)? {
                dir.write(&name, &out)?;
                continue;
            }
        }
        dir.copy(&file)?;
    }
    for (name, value) in extra {
        dir.write(name, &pretty(&value))?;
    }
    Ok(())
}

/// `config.json` with `quantization_config` set to `config` (removed for `None`), or `None`
/// when the file needs no change (no quantization to write, none to remove).
fn updated_config(file: &Path, config: Option<Value>) -> Result<Option<Vec<u8>>, Error> {
    let text = std::fs::read(file).map_err(|e| crate::files::read_error(file, &e))?;
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
