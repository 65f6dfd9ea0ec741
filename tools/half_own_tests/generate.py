"""Writes a scratch crate that runs the `half` crate's own unit tests and doc examples against
lowp, renamed: `half::` becomes `lowp::` and nothing else changes, except three kinds of access
that no test outside half could have (the tuple field `.0`, the `f16(bits)` constructor, and an
impl of `quickcheck::Arbitrary` for half's type, which the orphan rule forbids elsewhere); those
become `to_bits`/`from_bits` and a `u16` argument.

half's source is read from the cargo registry (it is a dev-dependency of lowp, so `cargo
fetch` has put it there); nothing of it is stored in this repository.

usage: python3 generate.py OUT_DIR [CRATE]   (CRATE defaults to lowp; `half` checks the harness)
"""

import glob
import pathlib
import re
import sys

HALF_VERSION = "2.7.1"

# The files of half whose `#[cfg(test)]` module is a unit-test suite, and how the module starts.
SUITES = {
    "binary16": "#[cfg(test)]\nmod test",
    "bfloat": "#[cfg(test)]\nmod test",
    "slice": "#[cfg(test)]\nmod test",
    "vec": "#[cfg(test)]\nmod test",
    "rand_distr": "#[cfg(test)]\nmod tests",
}


def half_source() -> pathlib.Path:
    found = glob.glob(
        str(pathlib.Path.home() / f".cargo/registry/src/*/half-{HALF_VERSION}/src")
    )
    if not found:
        sys.exit(f"half {HALF_VERSION} is not in the cargo registry: run `cargo fetch` in lowp")
    return pathlib.Path(found[0])


def module_body(text: str, start: str) -> str:
    """The text between the braces of the module that begins with `start`."""
    open_brace = text.index("{", text.index(start))
    depth = 0
    for k in range(open_brace, len(text)):
        if text[k] == "{":
            depth += 1
        elif text[k] == "}":
            depth -= 1
            if depth == 0:
                return text[open_brace + 1 : k]
    raise ValueError(f"unbalanced module {start!r}")


def renamed_suite(name: str, body: str, crate: str) -> str:
    # `use super::*` gave the test module half's private scope; a renamed test gets the crate's
    # public items, the prelude and the std names half's module had imported.
    header = (
        "#![allow(unused_imports, clippy::all)]\n"
        f"use {crate}::*;\n"
        f"use {crate}::prelude::*;\n"
        "mod ambient { pub use core::cmp::Ordering; pub use core::num::FpCategory; "
        "pub use core::str::FromStr; }\n"
        "use ambient::*;\n"
    )
    body = body.replace("use super::*;", "").replace(f"use crate::{{bf16, f16}};", "")
    module = "slice" if name == "slice" else "vec"
    body = body.replace("use super::{", f"use {crate}::{module}::{{")
    body = body.replace("crate::", f"{crate}::").replace("half::", f"{crate}::")
    # The private access no outside test can have.
    body = re.sub(
        r"impl quickcheck::Arbitrary for (b?f16) \{.*?\n    \}\n", "", body, flags=re.S
    )
    body = re.sub(
        r"fn (qc_\w+)\(f: (b?f16)\) -> bool \{",
        r"fn \1(bits: u16) -> bool {\n        let f = \2::from_bits(bits);",
        body,
    )
    body = re.sub(r"(\w+)\.0 == (\w+)\.0", r"\1.to_bits() == \2.to_bits()", body)
    return header + body


def doc_examples(src: pathlib.Path, crate: str) -> str:
    """Every fenced code block of half's doc comments, renamed, as one Markdown page."""
    blocks = []
    for path in sorted(src.rglob("*.rs")):
        current = None
        for line in path.read_text().splitlines():
            m = re.match(r"^(///|//!) ?(.*)$", line.strip())
            if not m:
                current = None
                continue
            text = m.group(2)
            if text.startswith("```"):
                if current is None:
                    current = [text]
                else:
                    blocks.append((path.name, current))
                    current = None
            elif current is not None:
                current.append(text)
    pages = []
    for name, (fence, *code) in blocks:
        body = "\n".join(code).replace("half::", f"{crate}::").replace("use half", f"use {crate}")
        pages.append(f"From {name}:\n\n{fence}\n{body}\n```\n")
    return "\n".join(pages)


def main() -> None:
    out = pathlib.Path(sys.argv[1])
    crate = sys.argv[2] if len(sys.argv) > 2 else "lowp"
    src = half_source()
    (out / "tests").mkdir(parents=True, exist_ok=True)
    (out / "src").mkdir(exist_ok=True)
    for name, start in SUITES.items():
        body = module_body((src / f"{name}.rs").read_text(), start)
        (out / "tests" / f"{name}.rs").write_text(renamed_suite(name, body, crate))
    (out / "src" / "examples.md").write_text(doc_examples(src, crate))
    # Each block of the page runs as a doctest of the scratch crate.
    (out / "src" / "lib.rs").write_text('#![doc = include_str!("examples.md")]\n')


if __name__ == "__main__":
    main()
