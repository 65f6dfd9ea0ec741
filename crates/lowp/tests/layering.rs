//! The crate's architecture as ARCHITECTURE.md states it, checked on its source: the top-level
//! modules form layers (no module reaches, through `crate::` paths, a module that reaches it
//! back), [`lowp::cpu`] and the format descriptors sit at the bottom, and `unsafe` is written
//! only in the vector and hardware modules (and bytemuck's layout promise).

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
/// `lib.rs`, whose re-exports are the public face rather than a layer.
fn top_module(src: &Path, file: &Path) -> Option<String> {
    let rel = file.strip_prefix(src).expect("a file under src");
    let first = rel.components().next()?.as_os_str().to_str()?.to_owned();
    let name = first.strip_suffix(".rs").unwrap_or(&first).to_owned();
    (name != "lib").then_some(name)
}

/// For each top-level module, the other top-level modules its code names as `crate::x`.
fn module_graph() -> BTreeMap<String, BTreeSet<String>> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let files = sources(&src);
    let modules: BTreeSet<String> = files.iter().filter_map(|f| top_module(&src, f)).collect();
    let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for file in &files {
        let Some(from) = top_module(&src, file) else {
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
fn the_modules_form_layers_without_cycles() {
    let graph = module_graph();
    assert!(graph.len() > 10, "the walk found the modules: {graph:?}");
    for module in graph.keys() {
        if let Some(cycle) = cycle_from(&graph, module) {
            panic!("module cycle: {}", cycle.join(" -> "));
        }
    }
}

#[test]
fn the_bottom_layers_depend_on_nothing_above_them() {
    let graph = module_graph();
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
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    for file in sources(&src) {
        let module = top_module(&src, &file).unwrap_or_default();
        // bytemuck's `Pod`/`Zeroable` are unsafe traits: implementing them is a promise about
        // the layout (each type is `repr(transparent)` over its unsigned bits), made there once.
        let is_layout_promise = file.ends_with("features/bytemuck.rs");
        if module == "simd" || module == "hw" || is_layout_promise {
            continue;
        }
        let text = code(&file);
        let uses_unsafe = text
            .split(|c: char| !(c.is_alphanumeric() || c == '_'))
            .any(|word| word == "unsafe");
        assert!(!uses_unsafe, "{} uses unsafe", file.display());
    }
}
