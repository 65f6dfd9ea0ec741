//! The architecture as ARCHITECTURE.md states it, checked on the workspace's source: in every
//! crate the top-level modules form layers (no module reaches, through `crate::` paths, a
//! module that reaches it back); in this one [`lowp::cpu`] and the format descriptors sit at
//! the bottom; and `unsafe` is written only in the vector and hardware modules (and bytemuck's
//! layout promise, the in-place casts between values and bits, and lowp-py's FFI module).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Every `.rs` file under `dir`.
fn sources(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).expect("the source directory is readable") {
        let path = entry.expect("a directory entry").path();
        if path.is_dir() {
            out.extend(sources(&path));
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
    out
}

/// The text of a source file without its comments (line comments and doc comments; the crate
/// has no block comments), so that a path named in prose is not taken for a use.
fn code(path: &Path) -> String {
    let text = std::fs::read_to_string(path).expect("a readable source file");
    text.lines()
        .map(|l| match l.find("//") {
            Some(i) => &l[..i],
            None => l,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The top-level module a file belongs to (`simd` for `src/simd/avx2.rs`), or `None` for
/// `lib.rs` and `main.rs`, whose re-exports and calls are the crate's face, not a layer.
fn top_module(src: &Path, file: &Path) -> Option<String> {
    let rel = file.strip_prefix(src).expect("a file under src");
    let first = rel.components().next()?.as_os_str().to_str()?.to_owned();
    let name = first.strip_suffix(".rs").unwrap_or(&first).to_owned();
    (name != "lib" && name != "main").then_some(name)
}

/// This crate's sources.
fn own_src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

/// The `src` folders of every crate of the workspace (this crate's siblings).
fn workspace_srcs() -> Vec<PathBuf> {
    let crates = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut srcs: Vec<PathBuf> = std::fs::read_dir(&crates)
        .expect("the crates folder is readable")
        .map(|e| e.expect("a directory entry").path().join("src"))
        .filter(|src| src.is_dir())
        .collect();
    srcs.sort();
    srcs
}

/// For each top-level module under `src`, the other top-level modules its code names as
/// `crate::x`.
fn module_graph(src: &Path) -> BTreeMap<String, BTreeSet<String>> {
    let files = sources(src);
    let modules: BTreeSet<String> = files.iter().filter_map(|f| top_module(src, f)).collect();
    let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for file in &files {
        let Some(from) = top_module(src, file) else {
            continue;
        };
        let text = code(file);
        let deps = graph.entry(from.clone()).or_default();
        for (i, _) in text.match_indices("crate::") {
            let rest = &text[i + "crate::".len()..];
            let name: String = rest
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            if modules.contains(&name) && name != from {
                deps.insert(name);
            }
        }
    }
    graph
}

/// A cycle through `start`, if there is one.
fn cycle_from(graph: &BTreeMap<String, BTreeSet<String>>, start: &str) -> Option<Vec<String>> {
    let mut stack = vec![(start.to_owned(), vec![start.to_owned()])];
    let mut seen = BTreeSet::new();
    while let Some((node, path)) = stack.pop() {
        for next in graph.get(&node).into_iter().flatten() {
            if next == start {
                let mut cycle = path.clone();
                cycle.push(start.to_owned());
                return Some(cycle);
            }
            if seen.insert(next.clone()) {
                let mut p = path.clone();
                p.push(next.clone());
                stack.push((next.clone(), p));
            }
        }
    }
    None
}

#[test]
fn the_modules_of_every_crate_form_layers_without_cycles() {
    let srcs = workspace_srcs();
    assert!(srcs.len() >= 6, "the walk found the crates: {srcs:?}");
    assert!(
        module_graph(&own_src()).len() > 10,
        "the walk found the modules"
    );
    for src in srcs {
        let graph = module_graph(&src);
        for module in graph.keys() {
            if let Some(cycle) = cycle_from(&graph, module) {
                panic!("module cycle in {}: {}", src.display(), cycle.join(" -> "));
            }
        }
    }
}

#[test]
fn the_bottom_layers_depend_on_nothing_above_them() {
    let graph = module_graph(&own_src());
    assert_eq!(graph["cpu"], BTreeSet::new(), "cpu must stand alone");
    assert_eq!(graph["format"], BTreeSet::new(), "format must stand alone");
    // The vector kernels sit below the slice API and know nothing of what is built on them.
    for above in ["bulk", "fit", "types", "traits"] {
        assert!(
            !graph["simd"].contains(above),
            "simd reaches up into {above}"
        );
    }
    assert!(!graph["bulk"].contains("fit"), "bulk reaches up into fit");
}

#[test]
fn unsafe_is_written_only_in_the_vector_and_hardware_modules() {
    let mut checked = 0;
    for src in workspace_srcs() {
        for file in sources(&src) {
            let module = top_module(&src, &file).unwrap_or_default();
            // bytemuck's `Pod`/`Zeroable` are unsafe traits: implementing them is a promise
            // about the layout (each type is `repr(transparent)` over its unsigned bits).
            // `reinterpret_cast` and `reinterpret_into` (half's) rest on the same promise.
            // `bits.rs` transmutes floats to their bits where `to_bits` is not `const` (before
            // Rust 1.83) and would be a call (unoptimized builds).
            let is_layout_promise = file.ends_with("lowp/src/features/bytemuck.rs")
                || file.ends_with("lowp/src/bulk/reinterpret.rs")
                || file.ends_with("lowp/src/bits.rs");
            // lowp's conversion kernels and F16C, lowp-tensor's kernel loops; lowp-py's
            // memory handler, which NumPy's C API calls.
            let is_ffi = file.ends_with("lowp-py/src/ffi.rs");
            if module == "simd" || module == "hw" || is_layout_promise || is_ffi {
                continue;
            }
            let text = code(&file);
            let uses_unsafe = text
                .split(|c: char| !(c.is_alphanumeric() || c == '_'))
                .any(|word| word == "unsafe");
            assert!(!uses_unsafe, "{} uses unsafe", file.display());
            checked += 1;
        }
    }
    assert!(checked > 50, "only {checked} files read");
}
