//! Converting a safetensors model (one file, or the shards of an index): each tensor planned,
//! the output laid out in one or several shards, every shard written under a temporary name,
//! and the whole output renamed into place only when all of it succeeded.
//!
//! A model's tensors become *jobs*: a plain tensor copied or converted, a weight quantized
//! into its scheme's tensors ([`crate::layouts::parts`]), a quantized weight decoded back to
//! a float type, or a quantized weight kept as it is. All the tensors one job writes go to the
//! same shard, so a weight and its scales are never split between files.

use crate::error::Error;
use crate::files::{self, TempOutput};
use crate::jobs::{Job, Work, part_bytes};
use crate::layouts::{self, ModelInfo, Quantized, Scaling};
use crate::model::{Model, TensorRef};
use crate::model_dir::Unit;
use crate::options::Options;
use crate::outdir::TempDir;
use crate::pipeline::{self, Files, Segment};
use crate::progress::Control;
use crate::quant::Scheme;
use crate::quant_tensor::{self, At};
use crate::report::{QuantReport, Skipped, TensorReport};
use std::collections::HashMap;
use std::fs::File;
use std::path::PathBuf;

/// The output shard's `__metadata__`: that of the input shards its jobs read from (so each
/// shard's own metadata stays with its tensors), without the padded shapes of weights that are
/// no longer padded, with those of the padded weights kept as they are (the layouts lowp
/// writes hold whole blocks only).
fn output_metadata(model: &Model, jobs: &[&Job]) -> Option<HashMap<String, String>> {
    let mut sources: Vec<usize> = jobs
        .iter()
        .flat_map(|j| job_inputs(j))
        .map(|r| r.shard)
        .collect();
    sources.sort_unstable();
    sources.dedup();
    let mut metadata: Option<HashMap<String, String>> = None;
    for s in sources {
        if let Some(m) = &model.shards[s].header.metadata {
            metadata.get_or_insert_with(HashMap::new).extend(m.clone());
        }
    }
    let mut padded = Vec::new();
    for job in jobs {
        let (name, shape, scheme) = match &job.work {
            Work::Keep {
                q:
                    Quantized {
                        scaling: Scaling::Blocks(scheme),
                        name,
                        shape,
                        ..
                    },
                ..
            } => (name, shape, *scheme),
            _ => continue,
        };
        let cols = shape[shape.len() - 1];
        if matches!(scheme, Scheme::Mxfp4 | Scheme::Nvfp4) && cols % scheme.block_cols() != 0 {
            padded.push((
                layouts::shape_key(name),
                serde_json::to_string(shape).unwrap_or_default(),
            ));
        }
    }
    if let Some(m) = &mut metadata {
        m.retain(|k, _| !k.starts_with("lowp.shape."));
    }
    if !padded.is_empty() {
        metadata.get_or_insert_with(HashMap::new).extend(padded);
    }
    metadata.filter(|m| !m.is_empty())
}

/// The input tensors a job reads.
fn job_inputs(job: &Job) -> Vec<TensorRef> {
    match &job.work {
        Work::Plain { tensor, .. }
        | Work::Quantize { tensor, .. }
        | Work::Decode { tensor, .. } => {
            vec![*tensor]
        }
        Work::Dequantize { q, .. } | Work::Keep { q, .. } => q.tensors(),
    }
}

/// The header of an output shard laid out within safetensors' limit
/// ([`crate::safetensors::MAX_HEADER`]): when the tensors and `metadata` do not fit, the
/// largest `__metadata__` entries are dropped until they do, each named in `notes` (lowp's own
/// `lowp.shape.` entries are kept: they are needed to read the weights back). Tensors alone
/// over the limit are an error.
fn fitted_header(
    mut metadata: Option<HashMap<String, String>>,
    entries: Vec<(String, ::safetensors::Dtype, Vec<usize>)>,
    shard: &str,
    notes: &mut Vec<String>,
) -> Result<(Vec<u8>, HashMap<String, u64>), Error> {
    let mut drop_largest = |metadata: &mut Option<HashMap<String, String>>| {
        let largest = metadata.as_ref().and_then(|m| {
            m.iter()
                .filter(|(k, _)| !k.starts_with("lowp.shape."))
                .max_by_key(|(k, v)| (k.len() + v.len(), k.to_string()))
                .map(|(k, v)| (k.clone(), k.len() + v.len()))
        });
        let (key, bytes) = largest?;
        if let Some(m) = metadata {
            m.remove(&key);
        }
        notes.push(format!(
            "{shard}: __metadata__ entry '{key}' ({bytes} bytes) dropped, since with it the \
             header would exceed safetensors' limit of {} bytes",
            crate::safetensors::MAX_HEADER
        ));
        Some(())
    };
    // The entries' own bytes are a lower bound of what they take in the header: dropping
    // until that fits drops nothing that could have stayed, and spares laying out a header
    // of many times the limit once per entry dropped.
    let own = |m: &Option<HashMap<String, String>>| -> u64 {
        m.iter()
            .flatten()
            .map(|(k, v)| (k.len() + v.len()) as u64)
            .sum()
    };
    while own(&metadata) > crate::safetensors::MAX_HEADER && drop_largest(&mut metadata).is_some() {
    }
    loop {
        let (header, places) = crate::safetensors::layout(metadata.clone(), entries.clone())?;
        if header.len() as u64 - 8 <= crate::safetensors::MAX_HEADER {
            return Ok((header, places));
        }
        if drop_largest(&mut metadata).is_none() {
            return Err(Error::file(format!(
                "{shard}: its header would take {} bytes, over safetensors' limit of {} bytes; \
                 give a smaller --shard-size",
                header.len() - 8,
                crate::safetensors::MAX_HEADER
            )));
        }
    }
}

/// The shards of the output: groups of consecutive jobs of at most `limit` bytes each (a
/// job larger than the limit gets a shard of its own).
fn shard_jobs(jobs: &[Job], limit: Option<u64>) -> Vec<Vec<usize>> {
    let mut shards: Vec<Vec<usize>> = vec![Vec::new()];
    let mut size = 0u64;
    for (i, job) in jobs.iter().enumerate() {
        let bytes = job.bytes();
        if let Some(limit) = limit
            && size > 0
            && size + bytes > limit
        {
            shards.push(Vec::new());
            size = 0;
        }
        shards.last_mut().expect("one shard at least").push(i);
        size += bytes;
    }
    shards
}

/// One output shard being written.
struct OutShard {
    /// Its file name in the output directory (or OUT itself).
    path: PathBuf,
    /// The file (none in a dry run).
    file: Option<File>,
    /// The temporary file, when OUT is a single file.
    temp: Option<TempOutput>,
    /// Where its data starts.
    data_start: u64,
    /// Each tensor's offset from the data start.
    places: HashMap<String, u64>,
}

impl OutShard {
    /// Where the tensor `name` goes.
    fn at(&self, name: &str) -> Option<At<'_>> {
        let file = self.file.as_ref()?;
        Some(At {
            file,
            path: &self.path,
            offset: self.data_start + self.places.get(name).copied().unwrap_or_default(),
        })
    }
}

/// What a conversion gives back: the tensors' reports, the bytes read and written, what was
/// left out and what was decided.
pub(crate) struct Converted {
    /// One report per tensor, model by model.
    pub tensors: Vec<TensorReport>,
    /// Bytes of every model's shards.
    pub bytes_in: u64,
    /// Bytes of every shard written.
    pub bytes_out: u64,
    /// Entries of the model directory left out.
    pub skipped: Vec<Skipped>,
    /// Decisions to tell.
    pub notes: Vec<String>,
}

/// One model of the input, planned and laid out, before any data is read.
struct Prepared {
    /// The model and where it goes.
    unit: Unit,
    /// The options as they apply to it ([`Options::within`] its report prefix).
    opts: Options,
    /// Its jobs, and its quantization when some weight is quantized.
    planned: crate::jobs::Planned,
    /// The jobs of each output shard.
    groups: Vec<Vec<usize>>,
    /// Whether it is written with an index.
    indexed: bool,
    /// Each output shard's file name and header (with its tensors' places).
    shards: Vec<(String, Vec<u8>, HashMap<String, u64>)>,
}

/// Plans `unit`'s tensors and lays out its output shards.
fn prepare(
    opts: &Options,
    unit: Unit,
    writing: bool,
    dir_mode: bool,
    notes: &mut Vec<String>,
) -> Result<Prepared, Error> {
    let opts = &opts.within(&unit.prefix);
    let model = &unit.model;
    let info = ModelInfo::read(unit.config.as_deref())?;
    let planned = crate::jobs::plan(opts, model, &info, writing)?;
    let jobs = &planned.jobs;
    let limit = if unit.split {
        opts.shard_size.or_else(|| {
            (model.shards.len() > 1).then(|| model.shards.iter().map(|s| s.len).max().unwrap_or(0))
        })
    } else if model.index.is_some() {
        Some(model.shards.iter().map(|s| s.len).max().unwrap_or(0))
    } else {
        None
    };
    let groups = if dir_mode {
        shard_jobs(jobs, limit)
    } else {
        vec![(0..jobs.len()).collect()]
    };
    let indexed = groups.len() > 1 || model.index.is_some();
    let mut shards = Vec::new();
    for (i, group) in groups.iter().enumerate() {
        let members: Vec<&Job> = group.iter().map(|&j| &jobs[j]).collect();
        let entries = members
            .iter()
            .flat_map(|j| {
                j.outputs
                    .iter()
                    .map(|p| (p.name.clone(), p.dtype, p.shape.clone()))
            })
            .collect();
        let name = if indexed {
            format!(
                "{}-{:05}-of-{:05}.safetensors",
                unit.stem,
                i + 1,
                groups.len()
            )
        } else {
            unit.single.clone()
        };
        let shown = unit.folder.join(&name).display().to_string();
        let (header, places) =
            fitted_header(output_metadata(model, &members), entries, &shown, notes)?;
        shards.push((name, header, places));
    }
    Ok(Prepared {
        opts: opts.clone(),
        unit,
        planned,
        groups,
        indexed,
        shards,
    })
}

/// Converts a safetensors model as `opts` says; `output` is `None` in a dry run. Everything
/// that can be checked is checked before any work: the model directory's entries
/// ([`crate::model_dir::survey`]), every model's headers, plans and output headers, OUT.
pub(crate) fn convert(opts: &Options, control: Control<'_>) -> Result<Converted, Error> {
    let writing = opts.output.is_some();
    let mut contents = crate::model_dir::survey(
        &opts.input,
        opts.output.as_deref(),
        opts.strict.is_some(),
        control,
    )?;
    let dir_mode = contents.units[0].model.dir.is_some();
    if opts.shard_size.is_some() && !dir_mode {
        return Err(Error::invalid(
            "--shard-size shards a model directory: give IN as a directory or a \
             model.safetensors.index.json",
        ));
    }
    let mut notes = contents.notes.clone();
    let mut prepared = Vec::new();
    let units = std::mem::take(&mut contents.units);
    for unit in units {
        control.check()?;
        prepared.push(prepare(opts, unit, writing, dir_mode, &mut notes)?);
    }
    let temp_dir = match (&opts.output, dir_mode) {
        (Some(out), true) => Some(TempDir::create(out, &opts.input)?),
        _ => None,
    };
    let bytes_in: u64 = prepared.iter().map(|p| p.unit.model.bytes()).sum();
    let copy_bytes: u64 = contents.copies.iter().map(|c| c.bytes).sum();
    control.progress.start(bytes_in + copy_bytes);
    if let Some(dir) = &temp_dir {
        for folder in &contents.dirs {
            control.check()?;
            dir.create_dir(folder)?;
        }
    }
    let mut reports = Vec::new();
    let mut outputs = Vec::new();
    for p in &prepared {
        let shards = open_shards(opts, p, temp_dir.as_ref())?;
        for (s, group) in p.groups.iter().enumerate() {
            for &j in group {
                let mut report = run_job(
                    &p.opts,
                    &p.unit.model,
                    &p.planned.jobs[j],
                    &shards[s],
                    control,
                )?;
                report.name.insert_str(0, &p.unit.prefix);
                reports.push(report);
            }
        }
        outputs.push(shards);
    }
    if opts.refuses(&reports) {
        // Dropped uncommitted, the temporary files and directory are removed.
        return Ok(Converted {
            tensors: reports,
            bytes_in,
            bytes_out: 0,
            skipped: contents.skipped,
            notes,
        });
    }
    let mut bytes_out = 0;
    for s in outputs.iter().flatten() {
        if let Some(f) = &s.file {
            bytes_out += f
                .metadata()
                .map_err(|e| files::write_error(&s.path, &e))?
                .len();
        }
    }
    if let Some(dir) = temp_dir {
        let mut owners = HashMap::new();
        for (p, shards) in prepared.iter().zip(&outputs) {
            control.check()?;
            if p.indexed {
                let total = shards
                    .iter()
                    .filter_map(|s| s.file.as_ref()?.metadata().ok())
                    .map(|m| m.len())
                    .sum();
                let index = index_json(shards, &p.groups, &p.planned.jobs, total);
                let name = format!("{}.safetensors.index.json", p.unit.stem);
                dir.write(&p.unit.folder.join(name), &index)?;
            }
            if p.unit.owns_config {
                owners.insert(p.unit.folder.clone(), p.planned.quantization.as_ref());
            }
        }
        crate::outdir::copy_files(&contents, &owners, &dir, control)?;
        // The last moment a signal can still leave nothing behind.
        control.check()?;
        dir.commit()?;
    } else {
        control.check()?;
        for s in outputs.into_iter().flatten() {
            if let Some(t) = s.temp {
                drop(s.file);
                t.commit()?;
            }
        }
    }
    Ok(Converted {
        tensors: reports,
        bytes_in,
        bytes_out,
        skipped: contents.skipped,
        notes,
    })
}

/// Creates the output shards of `p` (none in a dry run) and writes their headers.
fn open_shards(
    opts: &Options,
    p: &Prepared,
    dir: Option<&TempDir>,
) -> Result<Vec<OutShard>, Error> {
    let mut shards = Vec::new();
    for (name, header, places) in &p.shards {
        let rel = p.unit.folder.join(name);
        let (path, file, temp) = match (&opts.output, dir) {
            (None, _) => (rel, None, None),
            (Some(_), Some(dir)) => {
                let file = dir.create_file(&rel)?;
                (dir.target().join(&rel), Some(file), None)
            }
            (Some(out), None) => {
                let temp = TempOutput::create(out)?;
                let file = temp.file().try_clone().map_err(|e| temp.error(&e))?;
                (out.clone(), Some(file), Some(temp))
            }
        };
        if let Some(f) = &file {
            files::write_at(f, header, 0).map_err(|e| files::write_error(&path, &e))?;
        }
        shards.push(OutShard {
            path,
            file,
            temp,
            data_start: header.len() as u64,
            places: places.clone(),
        });
    }
    Ok(shards)
}

/// The index of a sharded output: every output tensor mapped to its shard.
fn index_json(shards: &[OutShard], groups: &[Vec<usize>], jobs: &[Job], total: u64) -> Vec<u8> {
    let mut map = serde_json::Map::new();
    let mut names: Vec<(&str, &str)> = Vec::new();
    for (s, group) in shards.iter().zip(groups) {
        let file = s
            .path
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or_default();
        for &j in group {
            for p in &jobs[j].outputs {
                names.push((p.name.as_str(), file));
            }
        }
    }
    names.sort();
    for (name, file) in names {
        map.insert(
            name.to_string(),
            serde_json::Value::String(file.to_string()),
        );
    }
    let value = serde_json::json!({
        "metadata": {"total_size": total},
        "weight_map": map,
    });
    let mut text = serde_json::to_vec_pretty(&value).unwrap_or_default();
    text.push(b'\n');
    text
}

/// Runs one job into its shard and gives its report.
fn run_job(
    opts: &Options,
    model: &Model,
    job: &Job,
    shard: &OutShard,
    control: Control<'_>,
) -> Result<TensorReport, Error> {
    let first = &job.outputs[0];
    control.tensor(&first.name);
    let bytes_out: u64 = job.outputs.iter().map(part_bytes).sum();
    match &job.work {
        Work::Plain { tensor, plan } => {
            let t = model.entry(*tensor);
            let (files, segment) = copy_segment(model, *tensor, shard, control);
            let elements = t.shape.iter().map(|&d| d as u64).product();
            let (stats, scale) =
                crate::run_tensor::run_tensor(opts, &files, segment, plan, false, elements)
                    .map_err(|e| e.about(&t.name))?;
            let stored = scale.map(crate::block_convert::stored_scale);
            if let (Some(stored), Some(name)) = (stored, &plan.scale_name)
                && let Some(at) = shard.at(name)
            {
                at.write(&stored.to_le_bytes(), 0)?;
            }
            Ok(TensorReport {
                name: t.name.clone(),
                shape: t.shape.iter().map(|&d| d as u64).collect(),
                from: t.dtype.to_string(),
                to: first.dtype.to_string(),
                target: plan.target,
                stats,
                scale: stored.map(f64::from),
                note: plan.note.clone(),
                bytes_in: t.end - t.begin,
                bytes_out,
                quant: None,
                scale_check: None,
            })
        }
        Work::Quantize {
            tensor,
            from,
            encoding,
            layout,
            transposed,
            input_scale,
        } => {
            let t = model.entry(*tensor);
            // The layout's tensors: data, scales, second scale; an input scale goes last.
            let parts = &job.outputs[..job.outputs.len() - usize::from(input_scale.is_some())];
            let outs = parts.iter().map(|p| shard.at(&p.name)).collect::<Vec<_>>();
            let outputs = match outs.as_slice() {
                [Some(a), Some(b)] => Some([*a, *b, *b]),
                [Some(a), Some(b), Some(c)] => Some([*a, *b, *c]),
                _ => None,
            };
            let run = if *transposed {
                quant_tensor::quantize_transposed
            } else {
                quant_tensor::quantize
            };
            let input = quant_tensor::at(model, *tensor);
            let stats = run(input, *from, &t.shape, encoding, outputs, control)
                .map_err(|e| e.about(&t.name))?;
            if let (Some(s), Some(last)) = (input_scale, job.outputs.last())
                && let Some(at) = shard.at(&last.name)
            {
                at.write(&s.to_le_bytes(), 0)?;
            }
            let scheme = encoding.scheme;
            Ok(TensorReport {
                name: t.name.clone(),
                shape: t.shape.iter().map(|&d| d as u64).collect(),
                from: t.dtype.to_string(),
                to: scheme.name().to_string(),
                target: None,
                stats: None,
                scale: None,
                note: String::new(),
                bytes_in: t.end - t.begin,
                bytes_out,
                quant: Some(QuantReport {
                    scheme,
                    layout: *layout,
                    stats,
                }),
                scale_check: None,
            })
        }
        Work::Dequantize { q, to } => {
            let (stats, scale_check) =
                quant_tensor::dequantize(model, q, *to, shard.at(&q.name), control)
                    .map_err(|e| e.about(&q.name))?;
            Ok(TensorReport {
                name: q.name.clone(),
                shape: q.shape.iter().map(|&d| d as u64).collect(),
                from: q.scaling.name().to_string(),
                to: first.dtype.to_string(),
                target: Some(*to),
                stats: Some(stats),
                scale: None,
                note: String::new(),
                bytes_in: quantized_bytes(model, q),
                bytes_out,
                quant: None,
                scale_check: Some(scale_check),
            })
        }
        Work::Decode { tensor, packed, to } => {
            let t = model.entry(*tensor);
            let stats = quant_tensor::decode_packed(
                model,
                *tensor,
                *packed,
                *to,
                shard.at(&t.name),
                control,
            )
            .map_err(|e| e.about(&t.name))?;
            Ok(TensorReport {
                name: t.name.clone(),
                shape: t.shape.iter().map(|&d| d as u64).collect(),
                from: t.dtype.to_string(),
                to: first.dtype.to_string(),
                target: Some(*to),
                stats: Some(stats),
                scale: None,
                note: String::new(),
                bytes_in: t.end - t.begin,
                bytes_out,
                quant: None,
                scale_check: None,
            })
        }
        Work::Keep { q, note } => {
            for r in q.tensors() {
                let (files, segment) = copy_segment(model, r, shard, control);
                if files.output.is_some() {
                    pipeline::run(&segment, &files).map_err(|e| e.about(&model.entry(r).name))?;
                } else {
                    control.add(segment.bytes);
                }
            }
            Ok(TensorReport {
                name: q.name.clone(),
                shape: q.shape.iter().map(|&d| d as u64).collect(),
                from: q.scaling.name().to_string(),
                to: q.scaling.name().to_string(),
                target: None,
                stats: None,
                scale: None,
                note: note.clone(),
                bytes_in: quantized_bytes(model, q),
                bytes_out,
                quant: None,
                scale_check: None,
            })
        }
    }
}

/// The files and the copy of the tensor `r` of `model` to its place (of the same name) in
/// `shard`.
fn copy_segment<'a>(
    model: &'a Model,
    r: TensorRef,
    shard: &'a OutShard,
    control: Control<'a>,
) -> (Files<'a>, Segment) {
    let t = model.entry(r);
    let s = &model.shards[r.shard];
    let out = shard.at(&t.name);
    let files = Files {
        input: (&s.file, &s.path),
        output: out.map(|o| (o.file, o.path)),
        progress: control,
    };
    let segment = Segment {
        input: s.header.data_start + t.begin,
        output: out.map_or(0, |o| o.offset),
        bytes: t.end - t.begin,
        width: 1,
        action: pipeline::Action::Copy,
    };
    (files, segment)
}

/// Bytes of a quantized weight's tensors in the input.
fn quantized_bytes(model: &Model, q: &Quantized) -> u64 {
    q.tensors()
        .into_iter()
        .map(|r| {
            let e = model.entry(r);
            e.end - e.begin
        })
        .sum()
}
