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
use std::collections::HashMap;
use std::fs::File;
use std::path::{Path, PathBuf};

/// The name transformers gives the index of a sharded safetensors model.
pub const INDEX_NAME: &str = "model.safetensors.index.json";

/// The largest index accepted. An index maps tensor names to file names: under 10 MB for the
/// largest models published (DeepSeek-V3's is about 9 MB). Parsed, an index takes a few times
/// its size in memory (each name as a string, once), so this bounds a hostile index's cost.
pub const MAX_INDEX: u64 = 64 << 20;

/// An index file as read: only its `weight_map`; anything else (its `metadata`) is skipped
/// by the parser without building a tree of it.
#[derive(serde::Deserialize)]
struct IndexFile {
    /// Tensor name to shard file name, in the file's order.
    weight_map: Option<WeightMap>,
}

/// The `weight_map` object's entries in order, as strings.
struct WeightMap(Vec<(String, String)>);

impl<'de> serde::Deserialize<'de> for WeightMap {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<WeightMap, D::Error> {
        /// Collects the entries of an object.
        struct Entries;
        impl<'de> serde::de::Visitor<'de> for Entries {
            type Value = WeightMap;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("an object mapping each tensor name to its file name")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut m: A,
            ) -> Result<WeightMap, A::Error> {
                let mut out = Vec::new();
                while let Some(entry) = m.next_entry::<String, String>()? {
                    out.push(entry);
                }
                Ok(WeightMap(out))
            }
        }
        d.deserialize_map(Entries)
    }
}

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

    /// Opens `input`: a safetensors file, an index, or a directory holding an index, exactly
    /// one safetensors file, or `model.safetensors` among others.
    pub fn open(input: &Path) -> Result<Model, Error> {
        Model::open_checked(input, &|| Ok(()))
    }

    /// [`Model::open`], calling `check` before each shard's header is read and stopping at
    /// its error (the cancel flag).
    pub(crate) fn open_checked(
        input: &Path,
        check: &dyn Fn() -> Result<(), Error>,
    ) -> Result<Model, Error> {
        if input.is_dir() {
            let index = input.join(INDEX_NAME);
            if index.is_file() {
                return Model::open_index(&index, input, check);
            }
            let files = safetensors_files(input)?;
            // Beside other .safetensors files (an adapter, say), `model.safetensors` is the
            // model; a model directory converts the others on their own.
            let main = input.join("model.safetensors");
            let files = if files.len() > 1 && files.contains(&main) {
                vec![main]
            } else {
                files
            };
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
            return Model::open_index(input, &dir, check);
        }
        Ok(Model {
            shards: vec![open_shard(input)?],
            dir: None,
            index: None,
        })
    }

    /// Opens the shards an index names and checks them against it.
    /// `check` is called before each shard's header is read: an error from it (the cancel
    /// flag) stops the opening.
    pub(crate) fn open_index(
        index: &Path,
        dir: &Path,
        check: &dyn Fn() -> Result<(), Error>,
    ) -> Result<Model, Error> {
        let bad = |why: String| Error::file(format!("{}: {why}", index.display()));
        let text = files::read_small(index, MAX_INDEX, "an index")?;
        let parsed: IndexFile =
            serde_json::from_slice(&text).map_err(|e| bad(format!("not a valid index: {e}")))?;
        drop(text);
        let Some(WeightMap(entries)) = parsed.weight_map else {
            return Err(bad(
                "no \"weight_map\" object naming each tensor's file".to_string()
            ));
        };
        let mut map: HashMap<&str, &str> = HashMap::with_capacity(entries.len());
        for (tensor, shard) in &entries {
            if map.insert(tensor, shard).is_some() {
                return Err(bad(format!("tensor '{tensor}' is mapped twice")));
            }
        }
        // Shards in the order the index first mentions them; tensors by shard.
        let mut order: Vec<&str> = Vec::new();
        let mut named: HashMap<&str, Vec<&str>> = HashMap::new();
        for (tensor, shard) in &entries {
            if Path::new(shard).components().count() != 1 || shard.starts_with('.') {
                return Err(bad(format!(
                    "tensor '{tensor}' maps to '{shard}', which is not a file name in the \
                     model's directory"
                )));
            }
            if !named.contains_key(shard.as_str()) {
                order.push(shard);
            }
            named.entry(shard).or_default().push(tensor);
        }
        let mut shards = Vec::new();
        for &name in &order {
            check()?;
            let shard = open_shard(&dir.join(name))?;
            let held: std::collections::HashSet<&str> = shard
                .header
                .tensors
                .iter()
                .map(|t| t.name.as_str())
                .collect();
            if let Some(missing) = named[name].iter().find(|t| !held.contains(*t)) {
                return Err(bad(format!(
                    "tensor '{missing}' is mapped to {name}, which does not hold it"
                )));
            }
            if let Some(extra) = shard
                .header
                .tensors
                .iter()
                .find(|t| map.get(t.name.as_str()).copied() != Some(name))
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
