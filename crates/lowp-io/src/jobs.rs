//! A model's tensors planned into jobs, before any data is read: a plain tensor copied or
//! converted, a weight quantized into its layout's tensors, a quantized weight decoded back
//! to a float type or kept as it is, a read-only type decoded. Planning also refuses, up
//! front, what would leave a model whose `quantization_config` could not tell the truth.

use crate::error::Error;
use crate::float_type::FloatType;
use crate::layouts::{self, Layout, ModelInfo, Part, Quantized, Role, Summary, modelopt};
use crate::model::{Model, TensorRef};
use crate::options::{Options, Target};
use crate::packed::Packed;
use crate::plan::Plan;
use crate::quant::Scheme;
use crate::quant_tensor::Encoding;
use crate::selection::Selection;
use safetensors::Dtype;
use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};

/// What one job does.
pub(crate) enum Work {
    /// A plain tensor, copied or converted as its plan says.
    Plain { tensor: TensorRef, plan: Plan },
    /// A weight quantized into a layout.
    Quantize {
        tensor: TensorRef,
        from: FloatType,
        encoding: Encoding,
        /// The layout it is written in.
        layout: Layout,
        /// Whether each matrix is stored transposed (gpt-oss's experts in transformers).
        transposed: bool,
        /// ModelOpt's activation scale of the layer, written as its last output.
        input_scale: Option<f32>,
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
pub(crate) struct Job {
    pub work: Work,
    pub outputs: Vec<Part>,
}

impl Job {
    /// Bytes of output.
    pub fn bytes(&self) -> u64 {
        self.outputs.iter().map(part_bytes).sum()
    }
}

/// Bytes of a tensor.
pub(crate) fn part_bytes(p: &Part) -> u64 {
    p.shape.iter().map(|&d| d as u64).product::<u64>() * p.dtype.bitsize() as u64 / 8
}

/// The element type of a plain tensor of `model`.
fn source_type(model: &Model, t: TensorRef) -> Option<FloatType> {
    FloatType::from_safetensors(model.entry(t).dtype)
}

/// The plan of a conversion: its jobs, and for a block-quantized one what the configuration
/// must say.
pub(crate) struct Planned {
    /// Every tensor's job, in the model's order.
    pub jobs: Vec<Job>,
    /// The scheme's layout and summary when some weight is quantized.
    pub quantization: Option<(Layout, Summary)>,
}

/// Plans every tensor of `model` (whose config says `info`) into jobs, in the model's order.
pub(crate) fn plan(
    opts: &Options,
    model: &Model,
    info: &ModelInfo,
    writing: bool,
) -> Result<Planned, Error> {
    let quantized = layouts::recognise(model)?;
    let selection = match opts.to {
        Target::Scheme(scheme) => Some(Selection::new(opts, scheme, info)?),
        Target::Float(_) => None,
    };
    check_quantized_input(opts, model, &quantized)?;
    let amax = match &opts.activation_amax {
        Some(path) => Some(read_activation_amax(path, selection.as_ref())?),
        None => None,
    };
    let mut heads: HashMap<(usize, usize), Quantized> = HashMap::new();
    let mut consumed: HashSet<(usize, usize)> = HashSet::new();
    for q in quantized {
        for r in q.tensors().into_iter().skip(1) {
            consumed.insert((r.shard, r.entry));
        }
        heads.insert((q.data.shard, q.data.entry), q);
    }
    let decisions = decide_all(opts, model, selection.as_ref());
    let mut jobs = Vec::new();
    let mut quantized_modules = BTreeSet::new();
    // Why the first linear weight or expert tensor was left, for a scheme that quantizes none.
    let mut first_refusal: Option<(String, Vec<usize>, String)> = None;
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
        let decision = decisions.get(&key).cloned();
        if let (Some(Ok(_)), Some(from), Some(s)) = (&decision, source, &selection) {
            let (job, module) = quantize_job(opts, s, model, r, from, amax.as_ref())?;
            quantized_modules.insert(module);
            jobs.push(job);
            continue;
        }
        if let Some(packed) = Packed::of(t.dtype)
            && let Some(to) = decoded_type(opts, &t.name)
        {
            jobs.push(Job {
                outputs: vec![Part::new(
                    t.name.clone(),
                    to.to_safetensors(),
                    t.shape.clone(),
                )],
                work: Work::Decode {
                    tensor: r,
                    packed,
                    to,
                },
            });
            continue;
        }
        let mut plan = opts.plan(&t.name, source, writing);
        if let Some(Err(why)) = decision {
            let linear = selection.as_ref().is_some_and(|s| {
                matches!(
                    s.info.role(&t.name, &t.shape),
                    Role::Linear | Role::Experts { .. }
                )
            });
            let asked = if opts.only.is_empty() {
                linear
            } else {
                opts.selects(&t.name)
            };
            if first_refusal.is_none() && asked {
                first_refusal = Some((t.name.clone(), t.shape.clone(), why.clone()));
            }
            // A tensor --keep-f32 names is stored as f32 whatever --rest says.
            plan.note = if opts.keeps_f32(&t.name) {
                why
            } else {
                format!("{why}; {}", opts.rest_note())
            };
        }
        let dtype = plan.target.map_or(t.dtype, FloatType::to_safetensors);
        let mut outputs = vec![Part::new(t.name.clone(), dtype, t.shape.clone())];
        if let Some(scale) = &plan.scale_name {
            outputs.push(Part::new(scale.clone(), Dtype::F32, Vec::new()));
        }
        jobs.push(Job {
            work: Work::Plain { tensor: r, plan },
            outputs,
        });
    }
    check_names(&jobs)?;
    if let Some(s) = &selection
        && quantized_modules.is_empty()
    {
        let why = first_refusal.map_or_else(
            || "it has no linear weight in a float type".to_string(),
            |(name, shape, why)| format!("'{name}' for one: {why}{}", s.alternative(&name, &shape)),
        );
        return Err(Error::invalid(format!(
            "no tensor of {} would be quantized in {} ({} layout): {why}",
            opts.input.display(),
            s.scheme,
            s.layout.name()
        )));
    }
    let quantization = selection
        .filter(|_| !quantized_modules.is_empty())
        .map(|s| {
            let summary = Summary {
                scheme: s.scheme,
                layout: s.layout,
                unquantized: unquantized_modules(model, &jobs, &quantized_modules),
                activations: amax.is_some(),
            };
            (s.layout, summary)
        });
    Ok(Planned { jobs, quantization })
}

/// Each float tensor's decision ([`Selection::decide`]), with a module quantized whole or not
/// at all: gpt-oss's experts module holds two weights, and a loader that reads it quantized
/// reads both, so when one cannot be quantized neither is.
fn decide_all(
    opts: &Options,
    model: &Model,
    selection: Option<&Selection<'_>>,
) -> HashMap<(usize, usize), Result<Role, String>> {
    let Some(s) = selection else {
        return HashMap::new();
    };
    let mut decisions = HashMap::new();
    let mut refused: HashMap<String, String> = HashMap::new();
    for r in model.tensors() {
        let t = model.entry(r);
        if source_type(model, r).is_none() {
            continue;
        }
        let d = s.decide(opts, &t.name, &t.shape);
        if let Err(why) = &d
            && matches!(s.info.role(&t.name, &t.shape), Role::Experts { .. })
        {
            refused.insert(
                layouts::module_of(&t.name).to_string(),
                format!("'{}' of the same module: {why}", t.name),
            );
        }
        decisions.insert((r.shard, r.entry), d);
    }
    for r in model.tensors() {
        let t = model.entry(r);
        if let Some(d @ Ok(_)) = decisions.get_mut(&(r.shard, r.entry))
            && let Some(why) = refused.get(layouts::module_of(&t.name))
        {
            *d = Err(format!("{why} (a module is quantized whole or not at all)"));
        }
    }
    decisions
}

/// The job quantizing the tensor `r` of `model` (of float type `from`) in the
/// selection's scheme and layout, and the module it belongs to; with `amax`
/// (`--activation-amax`), the layer's ModelOpt input scale too.
fn quantize_job(
    opts: &Options,
    s: &Selection<'_>,
    model: &Model,
    r: TensorRef,
    from: FloatType,
    amax: Option<&HashMap<String, f64>>,
) -> Result<(Job, String), Error> {
    let t = model.entry(r);
    let placement = s.layout.placement(s.scheme, &t.name, &t.shape, from);
    let mut outputs = placement.parts;
    // The scales' dtype: the codec's bytes, or fp8 scales in the weight's own dtype.
    let scale_dtype = outputs[1].dtype;
    let module = layouts::module_of(&t.name).to_string();
    let input_scale = match amax {
        Some(map) => {
            let (Some(&a), Some(name)) = (map.get(&module), modelopt::input_scale_name(&t.name))
            else {
                return Err(Error::invalid(format!(
                    "--activation-amax gives no amax for '{module}', which nvfp4 quantizes: \
                     W4A4 needs the input amax of every quantized layer"
                )));
            };
            outputs.push(Part::new(name, Dtype::F32, Vec::new()));
            // ModelOpt's input scale is the input amax over 448 * 6, as scale_2 is the weight's.
            Some(crate::quant::nvfp4_tensor_scale(a))
        }
        None => None,
    };
    let work = Work::Quantize {
        tensor: r,
        from,
        encoding: Encoding {
            scheme: s.scheme,
            opts: crate::quant::QuantOptions {
                scale_type: s.layout.scale_type(from),
                ..opts.quant
            },
            scale_dtype,
            second: s.layout.second(),
        },
        layout: s.layout,
        transposed: placement.transposed,
        input_scale,
    };
    Ok((Job { work, outputs }, module))
}

/// The modules a loader of the layout must be told are not quantized: those of every plain
/// tensor of 2 or more dimensions (weights left in their float type, embeddings, experts), in
/// the order of their names, less the quantized ones.
fn unquantized_modules(model: &Model, jobs: &[Job], quantized: &BTreeSet<String>) -> Vec<String> {
    let mut out = BTreeSet::new();
    for job in jobs {
        if let Work::Plain { tensor, .. } = &job.work {
            let t = model.entry(*tensor);
            let module = layouts::module_of(&t.name);
            if t.shape.len() >= 2 && !quantized.contains(module) {
                out.insert(module.to_string());
            }
        }
    }
    out.into_iter().collect()
}

/// Refuses what would leave the configuration unable to describe the output: quantizing a
/// model whose weights are already quantized (two schemes in one model), or, for a model
/// directory, decoding only some of its quantized weights.
fn check_quantized_input(
    opts: &Options,
    model: &Model,
    quantized: &[Quantized],
) -> Result<(), Error> {
    let Some(first) = quantized.first() else {
        return Ok(());
    };
    let mut by_scheme: BTreeMap<&str, usize> = BTreeMap::new();
    for q in quantized {
        *by_scheme.entry(q.scaling.name()).or_default() += 1;
    }
    let held = by_scheme
        .iter()
        .map(|(s, n)| format!("{n} in {s}"))
        .collect::<Vec<_>>()
        .join(", ");
    match opts.to {
        Target::Scheme(scheme) => Err(Error::invalid(format!(
            "IN already holds quantized weights ({held}; '{}' is one): quantizing them again \
             in {scheme} would mix two schemes in one model; decode them first (--to bf16), \
             then quantize that",
            first.name
        ))),
        Target::Float(_) if model.dir.is_some() => {
            if let Some(left) = quantized.iter().find(|q| !opts.selects(&q.name)) {
                return Err(Error::invalid(format!(
                    "--only leaves '{}' (and maybe others) quantized while decoding the rest: \
                     no quantization_config describes such a mix; decode every weight of the \
                     model (without --only), or convert its .safetensors files one by one",
                    left.name
                )));
            }
            Ok(())
        }
        Target::Float(_) => Ok(()),
    }
}

/// Reads `--activation-amax`: a JSON object of module names and their input's largest
/// magnitude (finite, positive). Only for nvfp4 in ModelOpt's layout.
fn read_activation_amax(
    path: &std::path::Path,
    selection: Option<&Selection<'_>>,
) -> Result<HashMap<String, f64>, Error> {
    let fits = selection.is_some_and(|s| s.scheme == Scheme::Nvfp4 && s.layout == Layout::ModelOpt);
    if !fits {
        return Err(Error::invalid(
            "--activation-amax makes ModelOpt's W4A4 NVFP4: it needs --to nvfp4 --layout modelopt",
        ));
    }
    let bad = |why: String| Error::file(format!("{}: {why}", path.display()));
    let text = crate::files::read_small(path, crate::files::MAX_JSON, "an amax list")?;
    let value: serde_json::Value =
        serde_json::from_slice(&text).map_err(|e| bad(format!("not valid JSON ({e})")))?;
    let Some(object) = value.as_object() else {
        return Err(bad(
            "not a JSON object of module names and their input amax".to_string(),
        ));
    };
    let mut out = HashMap::new();
    for (module, v) in object {
        let Some(a) = v.as_f64().filter(|a| a.is_finite() && *a > 0.0) else {
            return Err(bad(format!(
                "the amax of '{module}' is {v}, not a finite positive number"
            )));
        };
        out.insert(module.clone(), a);
    }
    Ok(out)
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

/// The job of a weight found quantized: decoded when the target is a float type and selects
/// it (to f32 under `--keep-f32`), kept otherwise.
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
            outputs: vec![Part::new(
                q.name.clone(),
                to.to_safetensors(),
                q.shape.clone(),
            )],
            work: Work::Dequantize { q, to },
        },
        None => {
            let outputs = q
                .tensors()
                .into_iter()
                .map(|r| {
                    let e = model.entry(r);
                    Part::new(e.name.clone(), e.dtype, e.shape.clone())
                })
                .collect();
            Job {
                work: Work::Keep {
                    q,
                    note: "not matched by --only".to_string(),
                },
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
