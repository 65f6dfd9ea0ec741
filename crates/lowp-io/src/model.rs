//! A safetensors model as `lowp convert` reads it: one file, or the shards that a
//! `model.safetensors.index.json` names, or a model directory holding either.
//!
//! Every shard's header is read and checked ([`crate::safetensors::read_header`]), and an
//! index is checked against the shards: each tensor it maps must be in the shard it names,
//! and each tensor of a shard must be in the index, so a stale or hand-edited index is an
//! error before anything is written rather than a model that loads wrongly.

use crate::error::Error;
use crate::files;
use crate::safetensors::{self, Entry, Header};
use serde_json::Value;
use std::collections::{BTreeMap, HashMap};
use std::fs::File;
use std::path::{Path, PathBuf};

/// The name transformers gives the index of a sharded safetensors model.
pub const INDEX_NAME: &str = "model.safetensors.index.json";

/// The largest index accepted: an index maps names to file names, a few megabytes for the
/// largest models published.
const MAX_INDEX: u64 = 256 << 20;

/// One safetensors file of a model.
pub struct Shard {
    /// Its path.
    pub path: PathBuf,
    /// The open file.
    pub file: File,
    /// Its length in bytes.
    pub len: u64,
    /// Its checked header.
    pub header: Header,
}

/// A model: its shards and, when it came as a directory or an index, its directory.
pub struct Model {
    /// The safetensors files, in the index's order of first mention (one for a plain file).
    pub shards: Vec<Shard>,
    /// The model directory when the input was a directory or an index: its other files
    /// (config, tokenizer) travel with a converted model.
    pub dir: Option<PathBuf>,
    /// The index read, when there was one.
    pub index: Option<PathBuf>,
}

/// Where one tensor of a model is.
#[derive(Clone, Copy, Debug)]
pub struct TensorRef {
    /// The shard holding it (an index into [`Model::shards`]).
    pub shard: usize,
    /// Its place in that shard's header.
    pub entry: usize,
}

impl Model {
    /// The tensor a reference points at.
    pub fn entry(&self, r: TensorRef) -> &Entry {
        &self.shards[r.shard].header.tensors[r.entry]
    }

    /// Every tensor, shard by shard, each shard's in the order of their offsets.
    pub fn tensors(&self) -> Vec<TensorRef> {
        self.shards
            .iter()
            .enumerate()
            .flat_map(|(shard, s)| {
                (0..s.header.tensors.len()).map(move |entry| TensorRef { shard, entry })
            })
            .collect()
    }

    /// The `__metadata__` of every shard, merged (transformers writes the same into each;
    /// lowp writes a padded weight's shape into the shard that holds the weight).
    pub fn metadata(&self) -> Option<HashMap<String, String>> {
        let mut merged: Option<HashMap<String, String>> = None;
        for s in &self.shards {
            if let Some(m) = &s.header.metadata {
                merged.get_or_insert_with(HashMap::new).extend(m.clone());
            }
        }
        merged
    }

    /// Bytes of every shard together.
    pub fn bytes(&self) -> u64 {
        self.shards.iter().map(|s| s.len).sum()
    }

    /// Whether `path` names something that must be read as a model rather than one file: a
    /// directory or a JSON index.
    pub fn is_model_path(path: &Path) -> bool {
        path.is_dir()
            || path
                .extension()
                .is_some_and(|e| e.eq_ignore_ascii_case("json"))
    }

    /// Opens `input`: a safetensors file, an index, or a directory holding an index or
    /// exactly one safetensors file.
    pub fn open(input: &Path) -> Result<Model, Error> {
        if input.is_dir() {
            let index = input.join(INDEX_NAME);
            if index.is_file() {
                return Model::open_index(&index, input);
            }
            let files = safetensors_files(input)?;
            return match files.as_slice() {
                [one] => Ok(Model {
                    shards: vec![open_shard(one)?],
                    dir: Some(input.to_path_buf()),
                    index: None,
                }),
                [] => Err(Error::file(format!(
                    "{}: the directory holds neither {INDEX_NAME} nor a .safetensors file",
                    input.display()
                ))),
                _ => Err(Error::file(format!(
                    "{}: the directory holds {} .safetensors files but no {INDEX_NAME} saying \
                     which belong to the model",
                    input.display(),
                    files.len()
                ))),
            };
        }
        if input
            .extension()
            .is_some_and(|e| e.eq_ignore_ascii_case("json"))
        {
            let dir = match input.parent() {
                Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
                _ => PathBuf::from("."),
            };
            return Model::open_index(input, &dir);
        }
        Ok(Model {
            shards: vec![open_shard(input)?],
            dir: None,
            index: None,
        })
    }

    /// Opens the shards an index names and checks them against it.
    fn open_index(index: &Path, dir: &Path) -> Result<Model, Error> {
        let bad = |why: String| Error::file(format!("{}: {why}", index.display()));
        let (file, len) = files::open(index)?;
        if len > MAX_INDEX {
            return Err(bad(format!("{len} bytes is too large for an index")));
        }
        let mut text = vec![0u8; len as usize];
        files::read_at(&file, &mut text, 0).map_err(|e| files::read_error(index, &e))?;
        let value: Value =
            serde_json::from_slice(&text).map_err(|e| bad(format!("not valid JSON: {e}")))?;
        let Some(map) = value.get("weight_map").and_then(Value::as_object) else {
            return Err(bad(
                "no \"weight_map\" object naming each tensor's file".to_string()
            ));
        };
        // Shards in the order the index first mentions them; tensors by shard.
        let mut order: Vec<String> = Vec::new();
        let mut named: BTreeMap<String, Vec<String>> = BTreeMap::new();
        for (tensor, shard) in map {
            let Some(shard) = shard.as_str() else {
                return Err(bad(format!(
                    "tensor '{tensor}' maps to {shard}, not a file name"
                )));
            };
            if Path::new(shard).components().count() != 1 || shard.starts_with('.') {
                return Err(bad(format!(
                    "tensor '{tensor}' maps to '{shard}', which is not a file name in the \
                     model's directory"
                )));
            }
            if !named.contains_key(shard) {
                order.push(shard.to_string());
            }
            named
                .entry(shard.to_string())
                .or_default()
                .push(tensor.clone());
        }
        let mut shards = Vec::new();
        for name in &order {
            let shard = open_shard(&dir.join(name))?;
            let held: std::collections::HashSet<&str> = shard
                .header
                .tensors
                .iter()
                .map(|t| t.name.as_str())
                .collect();
            if let Some(missing) = named[name].iter().find(|t| !held.contains(t.as_str())) {
                return Err(bad(format!(
                    "tensor '{missing}' is mapped to {name}, which does not hold it"
                )));
            }
            if let Some(extra) = shard
                .header
                .tensors
                .iter()
                .find(|t| map.get(&t.name).and_then(Value::as_str) != Some(name.as_str()))
            {
                return Err(bad(format!(
                    "{name} holds tensor '{}', which the index does not map to it",
                    extra.name
                )));
            }
            shards.push(shard);
        }
        if shards.is_empty() {
            return Err(bad("the weight_map is empty".to_string()));
        }
        Ok(Model {
            shards,
            dir: Some(dir.to_path_buf()),
            index: Some(index.to_path_buf()),
        })
    }

    /// The model directory's `config.json`, if it has one.
    pub fn config_file(&self) -> Option<PathBuf> {
        self.dir
            .as_ref()
            .map(|d| d.join("config.json"))
            .filter(|p| p.is_file())
    }

    /// The files and folders of the model directory that are not its weights or its index
    /// (config, tokenizer, generation config, README, sentence-transformers' `1_Pooling/`),
    /// sorted by name. Hidden ones are left out, and so are folders holding `.safetensors`
    /// files (other models, such as an earlier output written inside the directory).
    pub fn other_files(&self) -> Result<Vec<PathBuf>, Error> {
        let Some(dir) = &self.dir else {
            return Ok(Vec::new());
        };
        let shards: Vec<&Path> = self.shards.iter().map(|s| s.path.as_path()).collect();
        let mut out = Vec::new();
        for entry in read_dir(dir)? {
            let name = entry.file_name().to_string_lossy().to_string();
            let path = entry.path();
            let weights = name.ends_with(".safetensors")
                || name.ends_with(".safetensors.index.json")
                || shards.contains(&path.as_path());
            // A folder holding weights is another model (an earlier output, say), not a part of
            // this one.
            let other_model = path.is_dir() && !safetensors_files(&path)?.is_empty();
            if !name.starts_with('.')
                && !weights
                && !other_model
                && (path.is_file() || path.is_dir())
            {
                out.push(path);
            }
        }
        out.sort();
        Ok(out)
    }
}

/// The entries of a directory.
fn read_dir(dir: &Path) -> Result<Vec<std::fs::DirEntry>, Error> {
    let err = |e: std::io::Error| Error::file(format!("cannot list {}: {e}", dir.display()));
    std::fs::read_dir(dir)
        .map_err(err)?
        .collect::<Result<Vec<_>, _>>()
        .map_err(err)
}

/// The `.safetensors` files of a directory, sorted.
fn safetensors_files(dir: &Path) -> Result<Vec<PathBuf>, Error> {
    let mut out: Vec<PathBuf> = read_dir(dir)?
        .into_iter()
        .map(|e| e.path())
        .filter(|p| p.is_file() && p.extension().is_some_and(|e| e == "safetensors"))
        .collect();
    out.sort();
    Ok(out)
}

/// Opens one safetensors file and reads its header.
fn open_shard(path: &Path) -> Result<Shard, Error> {
    let (file, len) = files::open(path)?;
    let header = safetensors::read_header(&file, path, len)?;
    Ok(Shard {
        path: path.to_path_buf(),
        file,
        len,
        header,
    })
}
