#!/usr/bin/env bash
# On demand: crates that depend on `half`, fetched from the package registry through cargo, run
# their own tests twice, once on the real half and once with lowp renamed to `half` 2.7.1 and
# patched in (`[patch.crates-io]`), each from the crate's own Cargo.lock where it publishes one.
# The lowp run starts from the real run's lock and moves to lowp with `cargo update -p half`
# alone, as a user would; `cargo tree -i half` must then show lowp's path, since cargo only
# warns when a patch goes unused.
#
#   bash tools/half_dependents/run.sh [NAME...]     (default: every crate of crates.txt)
#
# Prints one line per crate: tests passed/failed on half, then on lowp. Exits non-zero if a
# test fails on lowp that passes on half, or the patch did not take. Long: it builds every
# crate's tests twice (candle-core alone takes most of an hour on two cores). Set
# HALF_DEPENDENTS_DIR to keep the sources and builds between runs.
set -uo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
work="${HALF_DEPENDENTS_DIR:-$(mktemp -d)}"
mkdir -p "$work"
# One target folder for every crate and both runs: the dependencies that do not depend on half
# are built once.
export CARGO_TARGET_DIR="$work/target"
log="$work/logs"
mkdir -p "$log"

python3 "$repo/tools/lowp_crate.py" "$work/half-lowp" --as-half

# Every feature name of the real half must be one of lowp's (cargo refuses a feature the
# package lacks), read from the manifests cargo sees.
features_of() { # MANIFEST_DIR
    (cd "$1" && cargo metadata --no-deps --format-version 1 --offline 2>/dev/null || cargo metadata --no-deps --format-version 1) |
        python3 -c 'import json,sys; print(" ".join(sorted(json.load(sys.stdin)["packages"][0]["features"])))'
}

# The source of NAME VERSION, fetched through a scratch project.
fetch() { # NAME VERSION -> prints the source folder
    local scratch="$work/fetch-$1-$2"
    mkdir -p "$scratch/src"
    touch "$scratch/src/lib.rs"
    printf '[package]\nname = "fetch"\nversion = "0.0.0"\nedition = "2021"\n[workspace]\n[dependencies]\n%s = "=%s"\n' \
        "$1" "$2" >"$scratch/Cargo.toml"
    (cd "$scratch" && cargo fetch --quiet) || return 1
    (cd "$scratch" && cargo metadata --format-version 1) | python3 -c '
import json, os, sys
name = sys.argv[1]
for p in json.load(sys.stdin)["packages"]:
    if p["name"] == name and p["source"]:
        print(os.path.dirname(p["manifest_path"]))
' "$1"
}

# "passed failed" summed over the `test result:` lines of a log; "build-failed" if none.
count() { # LOG
    python3 - "$1" <<'EOF'
import re, sys
text = open(sys.argv[1], errors="replace").read()
results = re.findall(r"test result: \w+\. (\d+) passed; (\d+) failed", text)
if not results:
    print("build-failed")
else:
    print(sum(int(p) for p, _ in results), sum(int(f) for _, f in results))
EOF
}

half_src="$(fetch half 2.7.1)" || { echo "cannot fetch half"; exit 1; }
ours="$(features_of "$work/half-lowp")"
missing=""
for f in $(features_of "$half_src"); do
    [[ " $ours " == *" $f "* ]] || missing="$missing $f"
done
if [ -n "$missing" ]; then
    echo "half's features missing from lowp:$missing"
    status=1
else
    echo "every feature of half 2.7.1 is one of lowp's"
    status=0
fi

names=("$@")
printf '%-24s %-16s %-16s %s\n' crate "real half" "lowp as half" "patch"
while read -r name version args; do
    [[ -z "$name" || "$name" == \#* ]] && continue
    if [ ${#names[@]} -gt 0 ] && [[ ! " ${names[*]} " == *" $name "* ]]; then
        continue
    fi
    src="$(fetch "$name" "$version")" || {
        echo "$name $version: cannot fetch"
        status=1
        continue
    }
    for side in half lowp; do
        rm -rf "$work/$name-$side"
        cp -r "$src" "$work/$name-$side"
        chmod -R u+w "$work/$name-$side"
    done
    # The crate's own lock, or one made now (published libraries seldom ship theirs).
    (cd "$work/$name-half" && { [ -f Cargo.lock ] || cargo generate-lockfile --quiet; })
    cp "$work/$name-half/Cargo.lock" "$work/$name-lowp/Cargo.lock"
    printf '\n[patch.crates-io]\nhalf = { path = "%s" }\n' "$work/half-lowp" >>"$work/$name-lowp/Cargo.toml"
    (cd "$work/$name-lowp" && cargo update --quiet -p half 2>"$log/$name-update.txt")
    # The patch took if the tree's half is lowp's folder.
    if (cd "$work/$name-lowp" && cargo tree -e all -i half 2>/dev/null | head -1) | grep -q "$work/half-lowp"; then
        patch=taken
    else
        patch="NOT TAKEN (see $log/$name-update.txt)"
        status=1
    fi
    # shellcheck disable=SC2086
    (cd "$work/$name-half" && cargo test --no-fail-fast $args >"$log/$name-half.txt" 2>&1)
    # shellcheck disable=SC2086
    (cd "$work/$name-lowp" && cargo test --no-fail-fast $args >"$log/$name-lowp.txt" 2>&1)
    on_half="$(count "$log/$name-half.txt")"
    on_lowp="$(count "$log/$name-lowp.txt")"
    # A test that fails on lowp must fail on half too (published crates often lack the data
    # files some of their tests read).
    for side in half lowp; do
        grep -oE '^test .* \.\.\. FAILED$' "$log/$name-$side.txt" | sort -u >"$log/$name-$side.failed"
    done
    only_lowp="$(comm -13 "$log/$name-half.failed" "$log/$name-lowp.failed" | wc -l)"
    printf '%-24s %-16s %-16s %s\n' "$name $version" "${on_half/ //}" "${on_lowp/ //}" "$patch"
    if [ "$on_lowp" = "build-failed" ] || [ "$only_lowp" -gt 0 ]; then
        echo "  fails only on lowp: $(comm -13 "$log/$name-half.failed" "$log/$name-lowp.failed" | tr '\n' ' ')"
        status=1
    fi
done <"$here/crates.txt"
echo "(passed/failed; logs in $log)"
exit $status
