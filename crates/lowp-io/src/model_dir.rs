//! A model directory as input, walked once before any work: the models it holds, the files
//! that travel with them, and what is left out, with every entry checked first.
//!
//! The rules (the long form is `docs/safety.md`):
//!
//! - **Links stay inside.** A symbolic link anywhere in the directory must resolve inside it;
//!   one that leads out (to a file, a folder, a device) is refused, naming the link and its
//!   target. A link that stays inside is followed: its file is read, or its folder walked, as
//!   if it were there (a folder reached twice through links is walked twice; a link to a
//!   folder it is in is refused as a loop). The one exception is the Hugging Face cache,
//!   whose snapshot folders (`models--ORG--NAME/snapshots/REV/`) hold links to the
//!   repository's `blobs/` folder: there links into that `blobs/` folder are allowed too.
//!   IN itself may be a link to the model directory: the user named it.
//! - **Only regular files and folders.** A FIFO, a socket or a device is refused, naming it,
//!   without being opened; every file to be copied is opened once up front, so an unreadable
//!   one fails before any work.
//! - **Nothing dropped silently.** Every file ends up in OUT: the model's shards and index
//!   converted, every other `.safetensors` file converted as a model of its own (a folder's
//!   `*.safetensors.index.json` with the shards it names, or one file), into the same place
//!   in OUT, and everything else copied. Hidden entries (`.git`, `.cache`, temporaries of lowp
//!   runs) are left out and listed as skipped, with the reason; `--strict` makes any skipped
//!   entry an error. OUT itself, when it is inside IN, is not part of the input.

use crate::error::Error;
use crate::files;
use crate::model::Model;
use crate::progress::Control;
use crate::report::Skipped;
use std::collections::{BTreeMap, HashSet};
use std::path::{Path, PathBuf};

/// How deep folders may nest in a model directory: real models use two or three levels; the
/// bound keeps a hostile tree from exhausting the stack.
const MAX_DEPTH: usize = 32;

/// The ending of a safetensors index's name.
const INDEX_ENDING: &str = ".safetensors.index.json";

/// One model of the input and where its output goes.
pub(crate) struct Unit {
    /// The model.
    pub model: Model,
    /// The folder its output goes to, relative to OUT (empty: OUT itself).
    pub folder: PathBuf,
    /// The stem of its output shards' names when it is written as several
    /// (`STEM-00001-of-00002.safetensors`, indexed by `STEM.safetensors.index.json`).
    pub stem: String,
    /// Its output file's name when it is written as one file without an index.
    pub single: String,
    /// Whether it may be split into shards (`--shard-size`): the main model only; another
    /// model keeps its one file or follows its own index.
    pub split: bool,
    /// What its tensors' names are prefixed with in the report (empty for the main model).
    pub prefix: String,
    /// The `config.json` of its folder, read for the roles of its tensors.
    pub config: Option<PathBuf>,
    /// Whether it owns that `config.json` (the one model of its folder): its
    /// `quantization_config` is then rewritten to say what the weights now are.
    pub owns_config: bool,
}

/// A file copied as it is.
pub(crate) struct Copy {
    /// Where it is read from.
    pub source: PathBuf,
    /// Where it goes, relative to OUT.
    pub rel: PathBuf,
    /// Its size in bytes.
    pub bytes: u64,
}

/// Everything a conversion reads, sorted out before any work.
pub(crate) struct Contents {
    /// The models: the main one first.
    pub units: Vec<Unit>,
    /// The folders to make in OUT, relative to it, each after its parent.
    pub dirs: Vec<PathBuf>,
    /// The files copied as they are.
    pub copies: Vec<Copy>,
    /// What is left out, and why.
    pub skipped: Vec<Skipped>,
    /// Decisions worth telling: which other models were converted.
    pub notes: Vec<String>,
}

/// Sorts out the input of `opts` (a file, an index, a model directory), checking every entry
/// of a model directory by the rules above, opening every model's headers and every file to
/// be copied. Fails before any work on a link out, a special file, an unreadable file, or with
/// `strict` set, an entry left out.
pub(crate) fn survey(
    input: &Path,
    output: Option<&Path>,
    strict: bool,
    control: Control<'_>,
) -> Result<Contents, Error> {
    let check = || control.check();
    if !Model::is_model_path(input) {
        let model = Model::open_checked(input, &check)?;
        let single = file_name(&model.shards[0].path);
        let unit = Unit {
            model,
            folder: PathBuf::new(),
            stem: "model".into(),
            single,
            split: false,
            prefix: String::new(),
            config: None,
            owns_config: false,
        };
        return Ok(Contents {
            units: vec![unit],
            dirs: Vec::new(),
            copies: Vec::new(),
            skipped: Vec::new(),
            notes: Vec::new(),
        });
    }
    let root = if input.is_dir() {
        input.to_path_buf()
    } else {
        match input.parent() {
            Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
            _ => PathBuf::from("."),
        }
    };
    let mut walker = Walker::new(&root, output, control)?;
    walker.walk(Path::new(""), 0)?;
    let Walker {
        files: found,
        dirs,
        skipped,
        ..
    } = walker;
    if strict && !skipped.is_empty() {
        let list: Vec<String> = skipped.iter().map(|s| s.to_string()).collect();
        return Err(Error::file(format!(
            "{}: {} left out of the conversion, and --strict allows nothing to be left out: {}",
            root.display(),
            plural(skipped.len(), "entry", "entries"),
            list.join("; ")
        )));
    }
    let main = Model::open_checked(input, &check)?;
    let rel_of = |p: &Path| p.strip_prefix(&root).unwrap_or(p).to_path_buf();
    let mut taken: HashSet<PathBuf> = main.shards.iter().map(|s| rel_of(&s.path)).collect();
    taken.extend(main.index.iter().map(|i| rel_of(i)));
    let has = |rel: &Path| found.iter().any(|f| f.rel == rel);
    let root_config = has(Path::new("config.json")).then(|| root.join("config.json"));
    let mut units = vec![Unit {
        single: file_name(&main.shards[0].path),
        model: main,
        folder: PathBuf::new(),
        stem: "model".into(),
        split: true,
        prefix: String::new(),
        config: root_config,
        owns_config: true,
    }];
    let mut notes = Vec::new();
    // Other indexes first (they claim their shards), then the other .safetensors files.
    let mut by_folder: BTreeMap<PathBuf, Vec<&Found>> = BTreeMap::new();
    for f in &found {
        by_folder
            .entry(f.rel.parent().unwrap_or(Path::new("")).to_path_buf())
            .or_default()
            .push(f);
    }
    for (folder, entries) in &by_folder {
        let config =
            has(&folder.join("config.json")).then(|| root.join(folder).join("config.json"));
        let mut here = Vec::new();
        for f in entries {
            let name = file_name(&f.rel);
            if taken.contains(&f.rel) || !name.ends_with(INDEX_ENDING) {
                continue;
            }
            check()?;
            let model = Model::open_index(&f.source, &root.join(folder), &check)?;
            for s in &model.shards {
                let rel = rel_of(&s.path);
                if !taken.insert(rel.clone()) {
                    return Err(Error::file(format!(
                        "{}: {} is named by two indexes; lowp cannot tell which model it belongs to",
                        f.source.display(),
                        s.path.display()
                    )));
                }
            }
            taken.insert(f.rel.clone());
            let stem = name[..name.len() - INDEX_ENDING.len()].to_string();
            here.push(Unit {
                model,
                folder: folder.clone(),
                single: format!("{stem}.safetensors"),
                stem,
                split: false,
                prefix: String::new(),
                config: config.clone(),
                owns_config: false,
            });
        }
        for f in entries {
            if taken.contains(&f.rel) || !file_name(&f.rel).ends_with(".safetensors") {
                continue;
            }
            check()?;
            let model = Model::open_checked(&f.source, &check)?;
            taken.insert(f.rel.clone());
            let single = file_name(&f.rel);
            here.push(Unit {
                model,
                folder: folder.clone(),
                stem: single.trim_end_matches(".safetensors").to_string(),
                single,
                split: false,
                prefix: String::new(),
                config: config.clone(),
                owns_config: false,
            });
        }
        // The one model of a folder (other than IN's own) is named by its folder and owns its
        // config; several are each named by their file.
        let alone = here.len() == 1 && !folder.as_os_str().is_empty();
        for unit in &mut here {
            let named = if alone {
                folder.clone()
            } else if unit.model.index.is_some() {
                folder.join(format!("{}{INDEX_ENDING}", unit.stem))
            } else {
                folder.join(&unit.single)
            };
            unit.prefix = format!("{}/", named.display());
            unit.owns_config = alone;
            notes.push(format!(
                "{} is converted as a model of its own, into the same place in OUT; its \
                 tensors are reported as {}NAME",
                named.display(),
                unit.prefix
            ));
        }
        units.extend(here);
    }
    let mut copies = Vec::new();
    for f in found {
        if taken.contains(&f.rel) {
            continue;
        }
        check()?;
        // Opened once now, so that an unreadable file fails before any work.
        files::open(&f.source)?;
        copies.push(Copy {
            source: f.source,
            rel: f.rel,
            bytes: f.bytes,
        });
    }
    Ok(Contents {
        units,
        dirs,
        copies,
        skipped,
        notes,
    })
}

/// `n thing` or `n things`.
fn plural(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// The last component of a path, as text.
fn file_name(path: &Path) -> String {
    path.file_name()
        .unwrap_or_default()
        .to_string_lossy()
        .into_owned()
}

/// A regular file found in the directory.
struct Found {
    /// Its path under the directory as given.
    source: PathBuf,
    /// Its path relative to the directory.
    rel: PathBuf,
    /// Its size in bytes.
    bytes: u64,
}

/// The walk of a model directory.
struct Walker<'a> {
    /// The directory as given.
    root: PathBuf,
    /// Where links may lead: the directory itself, and a Hugging Face cache's `blobs/`.
    allowed: Vec<PathBuf>,
    /// OUT's canonical path, when it exists or its folder does.
    out: Option<PathBuf>,
    /// The cancel flag.
    control: Control<'a>,
    /// The folders being walked, canonical (a link back to one is a loop).
    ancestors: Vec<PathBuf>,
    /// The regular files found.
    files: Vec<Found>,
    /// The folders found, relative to the root.
    dirs: Vec<PathBuf>,
    /// What is left out.
    skipped: Vec<Skipped>,
}

impl<'a> Walker<'a> {
    /// A walk of `root`, leaving `out` out.
    fn new(root: &Path, out: Option<&Path>, control: Control<'a>) -> Result<Walker<'a>, Error> {
        let canonical = root
            .canonicalize()
            .map_err(|e| Error::file(format!("cannot open {}: {e}", root.display())))?;
        let mut allowed = vec![canonical.clone()];
        if let Some(blobs) = hf_cache_blobs(&canonical) {
            allowed.push(blobs);
        }
        let out = out.and_then(|o| {
            o.canonicalize().ok().or_else(|| {
                let parent = match o.parent() {
                    Some(p) if !p.as_os_str().is_empty() => p,
                    _ => Path::new("."),
                };
                Some(parent.canonicalize().ok()?.join(o.file_name()?))
            })
        });
        Ok(Walker {
            root: root.to_path_buf(),
            allowed,
            out,
            control,
            ancestors: vec![canonical],
            files: Vec::new(),
            dirs: Vec::new(),
            skipped: Vec::new(),
        })
    }

    /// Walks the folder `rel` (relative to the root), `depth` levels down.
    fn walk(&mut self, rel: &Path, depth: usize) -> Result<(), Error> {
        let dir = self.root.join(rel);
        if depth > MAX_DEPTH {
            return Err(Error::file(format!(
                "{}: folders nest more than {MAX_DEPTH} levels deep in the model directory",
                dir.display()
            )));
        }
        let err = |e: std::io::Error| Error::file(format!("cannot list {}: {e}", dir.display()));
        let mut names: Vec<_> = std::fs::read_dir(&dir)
            .map_err(err)?
            .map(|e| e.map(|e| e.file_name()))
            .collect::<Result<_, _>>()
            .map_err(err)?;
        names.sort();
        for name in names {
            self.control.check()?;
            let rel = rel.join(&name);
            let path = self.root.join(&rel);
            let text = name.to_string_lossy();
            if text.starts_with('.') {
                let why = if crate::leftovers::temp_output_pid(&name).is_some() {
                    "a temporary output of a lowp run"
                } else {
                    "hidden"
                };
                self.skipped.push(Skipped {
                    path: rel,
                    why: why.to_string(),
                });
                continue;
            }
            let canonical = path.canonicalize().ok();
            if canonical.is_some() && canonical == self.out {
                continue;
            }
            let lstat = std::fs::symlink_metadata(&path)
                .map_err(|e| Error::file(format!("cannot open {}: {e}", path.display())))?;
            let meta = if lstat.file_type().is_symlink() {
                self.check_link(&path, canonical.as_deref())?;
                std::fs::metadata(&path)
                    .map_err(|e| Error::file(format!("cannot open {}: {e}", path.display())))?
            } else {
                lstat
            };
            if meta.is_dir() {
                let canonical = canonical.unwrap_or_else(|| path.clone());
                if self.ancestors.contains(&canonical) {
                    return Err(Error::file(format!(
                        "{} is a symbolic link to a folder it is in (a loop)",
                        path.display()
                    )));
                }
                self.dirs.push(rel.clone());
                self.ancestors.push(canonical);
                self.walk(&rel, depth + 1)?;
                self.ancestors.pop();
            } else if meta.is_file() {
                self.files.push(Found {
                    source: path,
                    rel,
                    bytes: meta.len(),
                });
            } else {
                return Err(files::not_regular(&path, meta.file_type()));
            }
        }
        Ok(())
    }

    /// Refuses the link `path` unless it resolves (to `canonical`) inside the model directory.
    fn check_link(&self, path: &Path, canonical: Option<&Path>) -> Result<(), Error> {
        let target = std::fs::read_link(path)
            .map(|t| t.display().to_string())
            .unwrap_or_else(|e| format!("? ({e})"));
        let Some(canonical) = canonical else {
            return Err(Error::file(format!(
                "{} is a symbolic link to {target}, which does not exist",
                path.display()
            )));
        };
        if self.allowed.iter().any(|a| canonical.starts_with(a)) {
            return Ok(());
        }
        let resolved = if Path::new(&target) == canonical {
            String::new()
        } else {
            format!(" (that is, {})", canonical.display())
        };
        Err(Error::file(format!(
            "{} is a symbolic link to {target}{resolved}, outside the model directory {}: \
             lowp follows no link out of a model directory (copy the file in instead)",
            path.display(),
            self.root.display()
        )))
    }
}

/// The `blobs/` folder of a Hugging Face cache repository when `dir` (canonical) is one of
/// its snapshots, `.../models--ORG--NAME/snapshots/REV`.
fn hf_cache_blobs(dir: &Path) -> Option<PathBuf> {
    let snapshots = dir.parent()?;
    let repo = snapshots.parent()?;
    let is_repo = repo
        .file_name()?
        .to_str()?
        .strip_prefix("models--")
        .is_some_and(|rest| !rest.is_empty());
    (snapshots.file_name()? == "snapshots" && is_repo).then(|| repo.join("blobs"))
}
