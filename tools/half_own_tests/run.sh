#!/usr/bin/env bash
# On demand: half 2.7.1's own unit tests and doc examples, renamed to lowp, built and run.
# About 8 minutes on two cores. Prints each suite's result line; exits non-zero on a failure.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
work="${HALF_OWN_TESTS_DIR:-$(mktemp -d)}"
(cd "$repo" && cargo fetch --quiet)
python3 "$here/generate.py" "$work/crate" lowp
sed "s|@LOWP@|$repo/crates/lowp|" "$here/Cargo.toml.in" > "$work/crate/Cargo.toml"
cd "$work/crate"
export CARGO_TARGET_DIR="$work/target"
status=0
for suite in binary16 bfloat slice vec rand_distr; do
    echo "== half's $suite tests, against lowp"
    cargo test --quiet --test "$suite" 2>&1 | grep -E "^test result|FAILED|^error" || status=1
done
echo "== half's doc examples, against lowp"
cargo test --quiet --doc 2>&1 | grep -E "^test result|FAILED|^error" || status=1
exit $status
