//! The architecture as ARCHITECTURE.md states it, checked on the workspace's source: in every
//! crate the modules form layers at every level (no file reaches, through its `use`
//! declarations, grouped ones included, or the `crate::`/`super::`/`self::` paths in its code,
//! a file that reaches it back); in this one
//! [`lowp::cpu`] and the format descriptors sit at the bottom; and `unsafe` is written only in
//! the vector and hardware modules (and bytemuck's layout promise, the in-place casts between
//! values and bits, and lowp-py's FFI module). Across crates, each depends only on the crates
//! below it, and only the command line on the benchmarks.

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

/// The module a file is, as a path from the crate root (`quant::codec` for
/// `src/quant/codec.rs`, `quant` for `src/quant/mod.rs`, empty for `lib.rs` and `main.rs`).
fn module_path(src: &Path, file: &Path) -> Vec<String> {
    let rel = file.strip_prefix(src).expect("a file under src");
    let mut path: Vec<String> = rel
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    let last = path.pop().expect("a file name");
    let at_root = path.is_empty();
    match last.as_str() {
        "mod.rs" => {}
        "lib.rs" | "main.rs" if at_root => {}
        name => path.push(name.strip_suffix(".rs").unwrap_or(name).to_owned()),
    }
    path
}

/// Whether `c` may be part of an identifier.
fn ident_char(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// The paths a `use` tree names, each as its segments (`a::{b, c::d}` gives `a::b` and
/// `a::c::d`; `self` in braces names the prefix itself; a glob names the prefix; an alias is
/// dropped).
fn use_tree_paths(tree: &str) -> Vec<Vec<String>> {
    /// Splits `text` at the commas of its top level (outside braces).
    fn top_level(text: &str) -> Vec<&str> {
        let (mut depth, mut start, mut out) = (0, 0, Vec::new());
        for (i, c) in text.char_indices() {
            match c {
                '{' => depth += 1,
                '}' => depth -= 1,
                ',' if depth == 0 => {
                    out.push(&text[start..i]);
                    start = i + 1;
                }
                _ => {}
            }
        }
        out.push(&text[start..]);
        out
    }
    let tree: String = tree.split_whitespace().collect::<Vec<_>>().join(" ");
    let tree = tree.trim();
    if let Some(open) = tree.find('{') {
        let prefix: Vec<String> = tree[..open]
            .split("::")
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(str::to_owned)
            .collect();
        let close = tree.rfind('}').filter(|&c| c > open).unwrap_or(tree.len());
        let inner = &tree[open + 1..close];
        let mut out = Vec::new();
        for branch in top_level(inner) {
            if branch.trim().is_empty() {
                continue;
            }
            for sub in use_tree_paths(branch) {
                let mut full = prefix.clone();
                if sub != ["self"] {
                    full.extend(sub);
                }
                out.push(full);
            }
        }
        return out;
    }
    let tree = tree.split(" as ").next().unwrap_or(tree);
    let segments: Vec<String> = tree
        .split("::")
        .map(str::trim)
        .filter(|s| !s.is_empty() && *s != "*")
        .map(str::to_owned)
        .collect();
    vec![segments]
}

/// One file's imports: the paths of its `use` declarations (with whether each is `pub`, a
/// re-export), the `crate::`/`super::`/`self::` paths written in its code, and whether it is
/// only a face (nothing but `mod` and `use` declarations).
struct Imports {
    uses: Vec<(bool, Vec<String>)>,
    inline: Vec<Vec<String>>,
    face: bool,
}

/// Reads the imports of a file's code (comments removed).
fn imports(code: &str) -> Imports {
    let mut uses = Vec::new();
    let mut rest = String::with_capacity(code.len());
    let mut i = 0;
    while let Some(c) = code[i..].chars().next() {
        // A `use` declaration starts a statement (after `pub`, `pub(crate)`, an attribute or
        // a block's opening): the word `use` in a string is not one.
        let before = rest.trim_end();
        let starts_item = before.is_empty()
            || before.ends_with([';', '{', '}', ']'])
            || before.ends_with("pub")
            || before.ends_with("pub(crate)")
            || before.ends_with("pub(super)");
        if starts_item && code[i..].starts_with("use ") {
            let end = code[i..].find(';').map_or(code.len(), |e| i + e);
            // `pub use`, `pub(crate) use`: a re-export, whose `pub` is already in `rest`.
            let before = rest.trim_end();
            let public = before.ends_with("pub") || before.ends_with("pub(crate)");
            for path in use_tree_paths(&code[i + 4..end]) {
                uses.push((public, path));
            }
            rest.push(';');
            i = (end + 1).min(code.len());
            continue;
        }
        rest.push(c);
        i += c.len_utf8();
    }
    let mut inline = Vec::new();
    for start in ["crate::", "super::", "self::"] {
        for (at, _) in rest.match_indices(start) {
            let before = rest[..at].chars().next_back().unwrap_or(' ');
            if ident_char(before) || before == '$' || before == ':' {
                continue;
            }
            let path: String = rest[at..]
                .chars()
                .take_while(|&c| ident_char(c) || c == ':')
                .collect();
            inline.push(
                path.split("::")
                    .filter(|s| !s.is_empty())
                    .map(str::to_owned)
                    .collect(),
            );
        }
    }
    // A face: once attributes and `use`s are gone, nothing but `mod NAME;` declarations.
    let mut declarations = String::new();
    let mut chars = rest.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '#' && matches!(chars.peek(), Some('[') | Some('!')) {
            let mut depth = 0;
            for d in chars.by_ref() {
                match d {
                    '[' => depth += 1,
                    ']' => {
                        depth -= 1;
                        if depth == 0 {
                            break;
                        }
                    }
                    _ => {}
                }
            }
            continue;
        }
        declarations.push(c);
    }
    let face = declarations.split(';').all(|item| {
        let words: Vec<&str> = item.split_whitespace().collect();
        matches!(
            words.as_slice(),
            [] | ["pub"]
                | ["pub(crate)"]
                | ["mod", _]
                | ["pub", "mod", _]
                | ["pub(crate)", "mod", _]
        )
    });
    Imports { uses, inline, face }
}

/// A crate's modules and the imports between them, every file a module.
struct Graph {
    /// Each module's imports of the other modules (path joined with `::`; the crate root is
    /// the empty string).
    edges: BTreeMap<String, BTreeSet<String>>,
}

/// The import graph of the crate whose sources are under `src`, at every module level. A path
/// names the deepest module it reaches; a path through a face (a file of `mod` and `use`
/// declarations only, such as a `mod.rs` that re-exports, and the crate root) names the
/// module the face re-exports it from. Faces themselves import nothing: handing names on is
/// not a dependency. `$crate::` paths (macros) are not followed.
fn module_graph(src: &Path) -> Graph {
    let mut modules: BTreeMap<Vec<String>, Imports> = BTreeMap::new();
    for file in sources(src) {
        let mut imports = imports(&code(&file));
        let path = module_path(src, &file);
        imports.face |= path.is_empty();
        modules.insert(path, imports);
    }
    // What each face re-exports: name -> the absolute path it names.
    let resolve_relative = |module: &[String], path: &[String]| -> Option<Vec<String>> {
        let mut out: Vec<String> = module.to_vec();
        let mut segments = path.iter().peekable();
        match segments.peek().map(|s| s.as_str()) {
            Some("crate") => {
                out.clear();
                segments.next();
            }
            Some("self") => {
                segments.next();
            }
            Some("super") => {
                while segments.peek().map(|s| s.as_str()) == Some("super") {
                    out.pop()?;
                    segments.next();
                }
            }
            Some(first) => {
                // A child module of this one named without `self::` (edition 2018 paths).
                let mut child = module.to_vec();
                child.push(first.to_owned());
                if !modules.contains_key(&child) {
                    return None;
                }
            }
            None => return None,
        }
        out.extend(segments.cloned());
        Some(out)
    };
    let mut reexports: BTreeMap<Vec<String>, Vec<String>> = BTreeMap::new();
    for (module, imports) in &modules {
        if !imports.face {
            continue;
        }
        for (public, path) in &imports.uses {
            if let (true, Some(full)) = (*public, resolve_relative(module, path)) {
                let mut name = module.clone();
                name.push(path.last().cloned().unwrap_or_default());
                reexports.insert(name, full);
            }
        }
    }
    // The module an absolute path names, through faces' re-exports.
    let target = |mut path: Vec<String>| -> Vec<String> {
        for _ in 0..8 {
            let depth = (0..=path.len())
                .rev()
                .find(|&n| modules.contains_key(&path[..n]))
                .unwrap_or(0);
            let module = path[..depth].to_vec();
            let face = modules.get(&module).is_some_and(|m| m.face);
            match path.get(depth) {
                Some(name) if face => {
                    let mut key = module.clone();
                    key.push(name.clone());
                    match reexports.get(&key) {
                        Some(full) => {
                            let mut next = full.clone();
                            next.extend(path[depth + 1..].iter().cloned());
                            path = next;
                        }
                        None => return module,
                    }
                }
                _ => return module,
            }
        }
        path
    };
    let mut edges: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (module, imports) in &modules {
        let deps = edges.entry(module.join("::")).or_default();
        if imports.face {
            continue;
        }
        let paths = imports.uses.iter().map(|(_, p)| p).chain(&imports.inline);
        for path in paths {
            let Some(full) = resolve_relative(module, path) else {
                continue;
            };
            let to = target(full);
            if !to.is_empty() && to != *module {
                deps.insert(to.join("::"));
            }
        }
    }
    Graph { edges }
}

/// The modules of `graph` in import circles: each strongly connected component of more than
/// one module (Tarjan's algorithm).
fn circles(graph: &Graph) -> Vec<Vec<String>> {
    struct State<'g> {
        graph: &'g Graph,
        index: BTreeMap<&'g str, usize>,
        low: BTreeMap<&'g str, usize>,
        stack: Vec<&'g str>,
        on_stack: BTreeSet<&'g str>,
        out: Vec<Vec<String>>,
    }
    fn visit<'g>(s: &mut State<'g>, v: &'g str) {
        let n = s.index.len();
        s.index.insert(v, n);
        s.low.insert(v, n);
        s.stack.push(v);
        s.on_stack.insert(v);
        for w in s.graph.edges.get(v).into_iter().flatten() {
            let w = w.as_str();
            if !s.index.contains_key(w) {
                visit(s, w);
                let low = s.low[v].min(s.low[w]);
                s.low.insert(v, low);
            } else if s.on_stack.contains(w) {
                let low = s.low[v].min(s.index[w]);
                s.low.insert(v, low);
            }
        }
        if s.low[v] == s.index[v] {
            let mut component = Vec::new();
            while let Some(w) = s.stack.pop() {
                s.on_stack.remove(w);
                component.push(w.to_owned());
                if w == v {
                    break;
                }
            }
            if component.len() > 1 {
                component.sort();
                s.out.push(component);
            }
        }
    }
    let mut state = State {
        graph,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on_stack: BTreeSet::new(),
        out: Vec::new(),
    };
    for v in graph.edges.keys() {
        if !state.index.contains_key(v.as_str()) {
            visit(&mut state, v);
        }
    }
    state.out
}

#[test]
fn the_import_parser_reads_grouped_nested_and_relative_paths() {
    let found = imports(
        "use crate::{a, b::{c, self}, d::e as f};\npub use super::g::*;\n\
         fn x() { crate::h::i(); $crate::j::k; self::l::m(); }\n",
    );
    let uses: Vec<String> = found.uses.iter().map(|(_, p)| p.join("::")).collect();
    assert_eq!(
        uses,
        [
            "crate::a",
            "crate::b::c",
            "crate::b",
            "crate::d::e",
            "super::g"
        ]
    );
    assert_eq!(found.uses.iter().filter(|(public, _)| *public).count(), 1);
    let inline: Vec<String> = found.inline.iter().map(|p| p.join("::")).collect();
    assert_eq!(inline, ["crate::h::i", "self::l::m"]);
    assert!(!found.face);
    let face = imports("#![doc = \"x\"]\npub mod a;\nmod b;\npub use a::{C, D};\n");
    assert!(face.face);
}

/// The circle finder on a crate made for it: `a` and `b` import each other through a grouped
/// `use` and a `super::` path, `c` imports `a` and `a` imports `d` without being imported back,
/// and `d::e` and `d::f` form a circle below the top level: the circles found are exactly
/// those two.
#[test]
fn circles_are_found_at_every_level_and_only_there() {
    let src = std::env::temp_dir().join(format!("lowp-layering-{}", std::process::id()));
    let files = [
        ("lib.rs", "mod a;\nmod b;\nmod c;\nmod d;\n"),
        ("a.rs", "use crate::{b::B, d};\npub struct A;\n"),
        (
            "b.rs",
            "pub struct B;\nfn f() -> super::a::A { super::a::A }\n",
        ),
        ("c.rs", "use crate::a::A;\npub struct C;\n"),
        ("d/mod.rs", "mod e;\nmod f;\n"),
        ("d/e.rs", "use super::f::F;\npub struct E;\n"),
        ("d/f.rs", "use crate::d::e::E;\npub struct F;\n"),
    ];
    for (name, text) in files {
        let path = src.join(name);
        std::fs::create_dir_all(path.parent().expect("a parent")).expect("a scratch folder");
        std::fs::write(&path, text).expect("a scratch file");
    }
    let mut found = circles(&module_graph(&src));
    std::fs::remove_dir_all(&src).expect("the scratch crate is removed");
    found.sort();
    assert_eq!(
        found,
        [vec!["a", "b"], vec!["d::e", "d::f"]],
        "the circles of the scratch crate"
    );
}

#[test]
fn the_modules_of_every_crate_form_layers() {
    let srcs = workspace_srcs();
    assert!(srcs.len() >= 6, "the walk found the crates: {srcs:?}");
    let own = module_graph(&own_src());
    assert!(own.edges.len() > 30, "the walk found the modules");
    // Modules below the top level are read: the vector kernels' own imports.
    assert!(
        own.edges.keys().any(|m| m.starts_with("simd::")),
        "nested modules are in the graph"
    );
    let mut found = BTreeSet::new();
    for src in srcs {
        let krate = src
            .parent()
            .and_then(Path::file_name)
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        for circle in circles(&module_graph(&src)) {
            found.insert((krate.clone(), circle.join(" <-> ")));
        }
    }
    assert!(found.is_empty(), "import circles: {found:?}");
}

/// For each top-level module under `src`, the other top-level modules it imports.
fn top_level_graph(src: &Path) -> BTreeMap<String, BTreeSet<String>> {
    let mut out: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    let top = |m: &str| m.split("::").next().unwrap_or_default().to_owned();
    for (from, to) in module_graph(src).edges {
        if from.is_empty() {
            continue;
        }
        let deps = out.entry(top(&from)).or_default();
        for t in to {
            if top(&t) != top(&from) {
                deps.insert(top(&t));
            }
        }
    }
    out
}

#[test]
fn the_bottom_layers_depend_on_nothing_above_them() {
    let graph = top_level_graph(&own_src());
    assert_eq!(graph["cpu"], BTreeSet::new(), "cpu must stand alone");
    assert_eq!(graph["format"], BTreeSet::new(), "format must stand alone");
    // The vector kernels sit below the slice API and know nothing of what is built on them
    // (they are generic over `LowpFloat`, so `traits` is below them).
    for above in ["bulk", "fit", "types"] {
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

/// The workspace crates each crate's `[dependencies]` names (lowp-half-parity, which names lowp
/// only among its dev-dependencies, names none).
fn crate_dependencies() -> BTreeMap<String, BTreeSet<String>> {
    let mut out = BTreeMap::new();
    for src in workspace_srcs() {
        let dir = src.parent().expect("a crate folder");
        let name = dir.file_name().map(|n| n.to_string_lossy().into_owned());
        let manifest =
            std::fs::read_to_string(dir.join("Cargo.toml")).expect("a readable Cargo.toml");
        let mut section = "";
        let mut deps = BTreeSet::new();
        for line in manifest.lines().map(str::trim) {
            if line.starts_with('[') {
                section = line;
            } else if section == "[dependencies]" && line.starts_with("lowp") {
                let dep = line.split(['=', ' ']).next().unwrap_or_default();
                deps.insert(dep.to_owned());
            }
        }
        out.insert(name.unwrap_or_default(), deps);
    }
    out
}

#[test]
fn the_crates_depend_only_on_the_crates_below_them() {
    let libraries = [
        "lowp",
        "lowp-fs",
        "lowp-tensor",
        "lowp-amp",
        "lowp-io",
        "lowp-analysis",
    ];
    // What each crate may depend on: the picture of ARCHITECTURE.md, bottom up. The
    // benchmarks are a library on the other libraries that only the command line uses.
    let allowed: BTreeMap<&str, &[&str]> = BTreeMap::from([
        ("lowp", &[][..]),
        ("lowp-fs", &[][..]),
        ("lowp-tensor", &["lowp"][..]),
        ("lowp-amp", &["lowp", "lowp-tensor"][..]),
        ("lowp-io", &["lowp", "lowp-tensor", "lowp-fs"][..]),
        ("lowp-analysis", &["lowp", "lowp-tensor", "lowp-fs"][..]),
        ("lowp-bench", &libraries[..]),
        ("lowp-py", &libraries[..]),
        ("lowp-half-parity", &[][..]),
    ]);
    let found = crate_dependencies();
    assert!(found.len() >= 9, "the walk found the crates: {found:?}");
    for (krate, deps) in &found {
        if krate == "lowp-cli" {
            // The front end may use every library, and nothing uses it.
            assert!(
                deps.iter().all(|d| d != "lowp-cli" && d != "lowp-py"),
                "{deps:?}"
            );
            continue;
        }
        let Some(may) = allowed.get(krate.as_str()) else {
            panic!("{krate} is not placed in the layers: add it to this test and ARCHITECTURE.md");
        };
        let wrong: Vec<&String> = deps.iter().filter(|d| !may.contains(&d.as_str())).collect();
        assert!(wrong.is_empty(), "{krate} depends on {wrong:?}, above it");
    }
    assert!(
        found["lowp-cli"].contains("lowp-bench"),
        "the dependencies are read: {found:?}"
    );
}
