"""Writes the `lowp` crate as it would be published: its sources and a manifest of its own, with
the workspace's inherited fields written in and no dev-dependencies, benches or tests (nothing
that builds the library needs them). Two uses:

* `python3 tools/lowp_crate.py OUT` builds with an older toolchain (`cargo +1.81.0 build` in
  OUT), which cannot read the workspace's manifest;
* `python3 tools/lowp_crate.py OUT --as-half` is lowp renamed to `half` 2.7.1, for
  `[patch.crates-io]` in the crates that depend on half (`tools/half_dependents/run.sh`). Its
  feature and dependency `half` (lowp's `From` between the two crates) are left out, since the
  crate would depend on itself.

usage: python3 tools/lowp_crate.py OUT [--as-half]
"""

import pathlib
import shutil
import sys
import tomllib

HALF_VERSION = "2.7.1"

REPO = pathlib.Path(__file__).resolve().parent.parent
CRATE = REPO / "crates" / "lowp"


def toml_value(v) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, float)):
        return str(v)
    if isinstance(v, str):
        return '"' + v.replace("\\", "\\\\").replace('"', '\\"') + '"'
    if isinstance(v, list):
        return "[" + ", ".join(toml_value(x) for x in v) + "]"
    if isinstance(v, dict):
        return "{ " + ", ".join(f"{toml_key(k)} = {toml_value(x)}" for k, x in v.items()) + " }"
    raise TypeError(f"cannot write {v!r}")


def toml_key(k: str) -> str:
    return k if all(c.isalnum() or c in "-_" for c in k) else toml_value(k)


def table(name: str, entries: dict) -> str:
    lines = [f"[{name}]"]
    lines += [f"{toml_key(k)} = {toml_value(v)}" for k, v in entries.items()]
    return "\n".join(lines) + "\n"


def manifest(as_half: bool) -> str:
    workspace = tomllib.loads((REPO / "Cargo.toml").read_text())
    inherited = workspace["workspace"]["package"]
    own = tomllib.loads((CRATE / "Cargo.toml").read_text())
    package = {}
    for key, value in own["package"].items():
        if isinstance(value, dict) and value.get("workspace"):
            value = inherited[key]
        package[key] = value
    if as_half:
        package["name"] = "half"
        package["version"] = HALF_VERSION
    features = dict(own["features"])
    dependencies = dict(own["dependencies"])
    if as_half:
        features.pop("half")
        dependencies.pop("half")
    lints = workspace["workspace"]["lints"] if own.get("lints", {}).get("workspace") else {}
    if as_half:
        # The code still asks `cfg(feature = "half")`, which is never set here.
        lints = {tool: dict(rules) for tool, rules in lints.items()}
        lints.setdefault("rust", {})["unexpected_cfgs"] = {
            "level": "warn",
            "check-cfg": ['cfg(feature, values("half"))'],
        }
    out = [table("package", package), table("features", features)]
    out.append(table("dependencies", dependencies))
    for tool, rules in lints.items():
        out.append(table(f"lints.{tool}", rules))
    # A crate of its own, wherever OUT is.
    out.append("[workspace]\n")
    return "\n".join(out)


def main() -> None:
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    if len(args) != 1:
        sys.exit(__doc__)
    out = pathlib.Path(args[0])
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    shutil.copytree(CRATE / "src", out / "src")
    if (CRATE / "build.rs").exists():
        shutil.copy(CRATE / "build.rs", out / "build.rs")
    (out / "Cargo.toml").write_text(manifest("--as-half" in sys.argv))


if __name__ == "__main__":
    main()
