//! Converting a safetensors model (one file, or the shards of an index): each tensor planned,
//! the output laid out in one or several shards, every shard written under a temporary name,
//! and the whole output renamed into place only when all of it succeeded.
//!
//! A model's tensors become *jobs*: a plain tensor copied or converted, a weight quantized
//! into its scheme's tensors ([`crate::layouts::parts`]), a quantized weight decoded back to
//! a float type, or a quantized weight kept as it is. All the tensors one job writes go to the
//! same shard, so a weight and its scales are never split between files.

use crate::convert::{Options, Plan, Target};
use crate::error::Error;
use crate::files::{self, TempOutput};
use crate::kernel::FloatType;
use crate::layouts::{self, Layout, Part, Quantized};
use crate::model::{INDEX_NAME, Model, TensorRef};
use crate::outdir::{JobsSummary, TempDir};
use crate::packed::Packed;
use crate::pipeline::{self, Files, Segment};
use crate::progress::Control;
use crate::quant::Scheme;
use crate::quant_io::{self, At};
use crate::report::{QuantReport, TensorReport};
use safetensors::Dtype;
use std::collections::{HashMap, HashSet};
use std::fs::File;
use std::path::PathBuf;

/// What one job does.
enum Work {
    /// A plain tensor, copied or converted as its plan says.
    Plain { tensor: TensorRef, plan: Plan },
    /// A weight quantized into a scheme.
    Quantize {
        tensor: TensorRef,
        from: FloatType,
        scheme: Scheme,
    },
    /// A quantized weight decoded to a float type.
    Dequantize { q: Quantized, to: FloatType },
    /// A quantized weight's tensors copied as they are.
    Keep { q: Quantized, note: String },
    /// A tensor of a type lowp reads but does not write (F4, F6, E8M0) decoded to a float
    /// type.
    Decode {
        tensor: TensorRef,
        packed: Packed,
        to: FloatType,
    },
}

/// One job: its work and the tensors it writes.
struct Job {
    work: Work,
    outputs: Vec<Part>,
}

impl Job {
    /// Bytes of output.
    fn bytes(&self) -> u64 {
        self.outputs.iter().map(part_bytes).sum()
    }
}

/// Bytes of a tensor.
fn part_bytes(p: &Part) -> u64 {
    p.shape.iter().map(|&d| d as u64).product::<u64>() * p.dtype.bitsize() as u64 / 8
}

/// The element type of a plain tensor of `model`.
fn source_type(model: &Model, t: TensorRef) -> Option<FloatType> {
    FloatType::from_safetensors(model.entry(t).dtype)
}

/// Plans every tensor of `model` into jobs, in the model's order.
fn plan_jobs(opts: &Options, model: &Model, writing: bool) -> Result<Vec<Job>, Error> {
    let quantized = layouts::recognise(model)?;
    let mut heads: HashMap<(usize, usize), Quantized> = HashMap::new();
    let mut consumed: HashSet<(usize, usize)> = HashSet::new();
    for q in quantized {
        for r in [Some(q.scales), q.scale_2].into_iter().flatten() {
            consumed.insert((r.shard, r.entry));
        }
        heads.insert((q.data.shard, q.data.entry), q);
    }
    let mut jobs = Vec::new();
    for r in model.tensors() {
        let key = (r.shard, r.entry);
        if consumed.contains(&key) {
            continue;
        }
        let t = model.entry(r);
        if let Some(q) = heads.remove(&key) {
            jobs.push(plan_quantized(opts, model, q));
            continue;
        }
        let source = source_type(model, r);
        if let (Some(scheme), Some(from)) = (opts.quantizes(&t.name, source, &t.shape), source) {
            jobs.push(Job {
                outputs: layouts::parts(scheme, &t.name, &t.shape),
                work: Work::Quantize {
                    tensor: r,
                    from,
                    scheme,
                },
            });
            continue;
        }
        if let Some(packed) = Packed::of(t.dtype)
            && let Some(to) = decoded_type(opts, &t.name)
        {
            jobs.push(Job {
                outputs: vec![Part {
                    name: t.name.clone(),
                    dtype: to.to_safetensors(),
                    shape: t.shape.clone(),
                }],
                work: Work::Decode {
                    tensor: r,
                    packed,
                    to,
                },
            });
            continue;
        }
        let mut plan = opts.plan(&t.name, source, writing);
        if let (Target::Scheme(_), Some(why)) = (opts.to, opts.why_not_quantized(&t.name, &t.shape))
            && source.is_some()
            && plan.target.is_none()
        {
            plan.note = why;
        }
        let dtype = plan.target.map_or(t.dtype, FloatType::to_safetensors);
        let mut outputs = vec![Part {
            name: t.name.clone(),
            dtype,
            shape: t.shape.clone(),
        }];
        if let Some(scale) = &plan.scale_name {
            outputs.push(Part {
                name: scale.clone(),
                dtype: Dtype::F32,
                shape: Vec::new(),
            });
        }
        jobs.push(Job {
            work: Work::Plain { tensor: r, plan },
            outputs,
        });
    }
    check_names(&jobs)?;
    Ok(jobs)
}

/// The float type a tensor of a read-only type (F4, F6, E8M0) named `name` is decoded to:
/// `--to`'s float type (f32 under `--keep-f32`) when it selects the tensor, `--rest`'s with a
/// scheme; `None` keeps it as it is.
fn decoded_type(opts: &Options, name: &str) -> Option<FloatType> {
    if opts.keeps_f32(name) {
        return Some(FloatType::F32);
    }
    match opts.to {
        Target::Float(to) => opts.selects(name).then_some(to),
        Target::Scheme(_) => opts.rest,
    }
}

/// The job of a weight found quantized: decoded when the target is a float type (and the
/// weight is selected), kept otherwise.
fn plan_quantized(opts: &Options, model: &Model, q: Quantized) -> Job {
    let to = match opts.to {
        Target::Float(_) if opts.keeps_f32(&q.name) && opts.selects(&q.name) => {
            Some(FloatType::F32)
        }
        Target::Float(to) if opts.selects(&q.name) => Some(to),
        _ => None,
    };
    match to {
        Some(to) => Job {
            outputs: vec![Part {
                name: q.name.clone(),
                dtype: to.to_safetensors(),
                shape: q.shape.clone(),
            }],
            work: Work::Dequantize { q, to },
        },
        None => {
            let note = match opts.to {
                Target::Scheme(_) => format!(
                    "already {}; decode it first (--to bf16) to quantize it otherwise",
                    q.layout.name()
                ),
                Target::Float(_) => "not matched by --only".to_string(),
            };
            let outputs = [Some(q.data), Some(q.scales), q.scale_2]
                .into_iter()
                .flatten()
                .map(|r| {
                    let e = model.entry(r);
                    Part {
                        name: e.name.clone(),
                        dtype: e.dtype,
                        shape: e.shape.clone(),
                    }
                })
                .collect();
            Job {
                work: Work::Keep { q, note },
                outputs,
            }
        }
    }
}

/// Refuses two output tensors of one name (a weight's new scale named like an existing
/// tensor).
fn check_names(jobs: &[Job]) -> Result<(), Error> {
    let mut seen: HashMap<&str, &str> = HashMap::new();
    for job in jobs {
        let owner = job.outputs[0].name.as_str();
        for p in &job.outputs {
            if let Some(other) = seen.insert(p.name.as_str(), owner) {
                return Err(Error::file(format!(
                    "cannot store tensor '{owner}' with '{}': the model already has a tensor \
                     of that name (from '{other}')",
                    p.name
                )));
            }
        }
    }
    Ok(())
}

/// The output's `__metadata__`: the input's, without the padded shapes of weights that are
/// no longer padded, with those of the weights padded now.
fn output_metadata(model: &Model, jobs: &[&Job]) -> Option<HashMap<String, String>> {
    let mut metadata = model.metadata();
    let mut padded = Vec::new();
    for job in jobs {
        let (name, shape, scheme) = match &job.work {
            Work::Quantize { tensor, scheme, .. } => {
                let t = model.entry(*tensor);
                (&t.name, &t.shape, *scheme)
            }
            Work::Keep {
                q:
                    Quantized {
                        layout: Layout::Blocks(scheme),
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

/// Converts a safetensors model as `opts` says; `output` is `None` in a dry run.
pub(crate) fn convert(
    opts: &Options,
    control: Control<'_>,
) -> Result<(Vec<TensorReport>, u64, u64), Error> {
    let model = Model::open(&opts.input)?;
    let writing = opts.output.is_some();
    let jobs = plan_jobs(opts, &model, writing)?;
    let dir_mode = model.dir.is_some();
    if opts.shard_size.is_some() && !dir_mode {
        return Err(Error::invalid(
            "--shard-size shards a model directory: give IN as a directory or a \
             model.safetensors.index.json",
        ));
    }
    let limit = opts.shard_size.or_else(|| {
        (model.shards.len() > 1).then(|| model.shards.iter().map(|s| s.len).max().unwrap_or(0))
    });
    let groups = if dir_mode {
        shard_jobs(&jobs, limit)
    } else {
        vec![(0..jobs.len()).collect()]
    };
    let indexed = groups.len() > 1 || model.index.is_some();
    let temp_dir = match (&opts.output, dir_mode) {
        (Some(out), true) => Some(TempDir::create(out, &opts.input)?),
        _ => None,
    };
    control.progress.start(model.bytes());
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
        let (header, places) =
            crate::safetensors::layout(output_metadata(&model, &members), entries)?;
        let name = if indexed {
            format!("model-{:05}-of-{:05}.safetensors", i + 1, groups.len())
        } else {
            model.shards[0].path.file_name().map_or_else(
                || "model.safetensors".into(),
                |n| n.to_string_lossy().to_string(),
            )
        };
        let (path, file, temp) = match (&opts.output, &temp_dir) {
            (None, _) => (PathBuf::from(name.as_str()), None, None),
            (Some(_), Some(dir)) => {
                let path = dir.target().join(&name);
                let file = dir.create_file(&name)?;
                (path, Some(file), None)
            }
            (Some(out), None) => {
                let temp = TempOutput::create(out)?;
                let file = temp.file().try_clone().map_err(|e| temp.error(&e))?;
                (out.clone(), Some(file), Some(temp))
            }
        };
        if let Some(f) = &file {
            files::write_at(f, &header, 0).map_err(|e| files::write_error(&path, &e))?;
        }
        shards.push(OutShard {
            path,
            file,
            temp,
            data_start: header.len() as u64,
            places,
        });
    }
    let mut reports = Vec::new();
    for (s, group) in groups.iter().enumerate() {
        for &j in group {
            let report = run_job(opts, &model, &jobs[j], &shards[s], control)?;
            reports.push(report);
        }
    }
    if opts.refuses(&reports) {
        // Dropped uncommitted, the temporary files and directory are removed.
        return Ok((reports, model.bytes(), 0));
    }
    let mut bytes_out = 0;
    for s in &shards {
        if let Some(f) = &s.file {
            bytes_out += f
                .metadata()
                .map_err(|e| files::write_error(&s.path, &e))?
                .len();
        }
    }
    if let Some(dir) = temp_dir {
        if indexed {
            let index = index_json(&shards, &groups, &jobs, bytes_out);
            dir.write(INDEX_NAME, &index)?;
        }
        crate::outdir::copy_model_files(&model, &dir, &jobs_summary(&jobs))?;
        dir.commit()?;
    } else {
        for s in shards {
            if let Some(t) = s.temp {
                drop(s.file);
                t.commit()?;
            }
        }
    }
    Ok((reports, model.bytes(), bytes_out))
}

/// The summary of `jobs`.
fn jobs_summary(jobs: &[Job]) -> JobsSummary {
    let mut summary = JobsSummary {
        scheme: None,
        dequantized: false,
        unquantized: Vec::new(),
    };
    for job in jobs {
        match &job.work {
            Work::Quantize { scheme, .. } => summary.scheme = Some(*scheme),
            Work::Keep {
                q:
                    Quantized {
                        layout: Layout::Blocks(scheme),
                        ..
                    },
                ..
            } => summary.scheme = Some(*scheme),
            Work::Dequantize { .. } | Work::Decode { .. } => summary.dequantized = true,
            Work::Plain { .. } => {
                let p = &job.outputs[0];
                if p.shape.len() >= 2 && p.name.ends_with("weight") {
                    let module = p.name.strip_suffix(".weight").unwrap_or(&p.name);
                    summary.unquantized.push(module.to_string());
                }
            }
            _ => {}
        }
    }
    summary
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
                crate::convert::run_tensor(opts, &files, segment, plan, false, elements)
                    .map_err(|e| e.about(&t.name))?;
            let stored = scale.map(crate::kernel::stored_scale);
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
            })
        }
        Work::Quantize {
            tensor,
            from,
            scheme,
        } => {
            let t = model.entry(*tensor);
            let outs = job
                .outputs
                .iter()
                .map(|p| shard.at(&p.name))
                .collect::<Vec<_>>();
            let outputs = match outs.as_slice() {
                [Some(a), Some(b)] => Some([*a, *b, *b]),
                [Some(a), Some(b), Some(c)] => Some([*a, *b, *c]),
                _ => None,
            };
            let stats = quant_io::quantize(
                quant_io::at(model, *tensor),
                *from,
                &t.shape,
                *scheme,
                &opts.quant,
                outputs,
                control,
            )
            .map_err(|e| e.about(&t.name))?;
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
                    scheme: *scheme,
                    stats,
                }),
            })
        }
        Work::Dequantize { q, to } => {
            let stats = quant_io::dequantize(model, q, *to, shard.at(&q.name), control)
                .map_err(|e| e.about(&q.name))?;
            Ok(TensorReport {
                name: q.name.clone(),
                shape: q.shape.iter().map(|&d| d as u64).collect(),
                from: q.layout.name().to_string(),
                to: first.dtype.to_string(),
                target: Some(*to),
                stats: Some(stats),
                scale: None,
                note: String::new(),
                bytes_in: quantized_bytes(model, q),
                bytes_out,
                quant: None,
            })
        }
        Work::Decode { tensor, packed, to } => {
            let t = model.entry(*tensor);
            let stats =
                quant_io::decode_packed(model, *tensor, *packed, *to, shard.at(&t.name), control)
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
            })
        }
        Work::Keep { q, note } => {
            for r in [Some(q.data), Some(q.scales), q.scale_2]
                .into_iter()
                .flatten()
            {
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
                from: q.layout.name().to_string(),
                to: q.layout.name().to_string(),
                target: None,
                stats: None,
                scale: None,
                note: note.clone(),
                bytes_in: quantized_bytes(model, q),
                bytes_out,
                quant: None,
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
    [Some(q.data), Some(q.scales), q.scale_2]
        .into_iter()
        .flatten()
        .map(|r| {
            let e = model.entry(r);
            e.end - e.begin
        })
        .sum()
}
