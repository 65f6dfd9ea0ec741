#!/usr/bin/env bash
# Runs lowp's cargo-fuzz targets for a bounded time each, on demand (not in CI: the corpus
# test crates/lowp-io/tests/fuzz_corpus.rs replays the seed corpus on stable in seconds).
#
#   fuzz/run.sh                  # every target, 60 s each
#   fuzz/run.sh 30 npy decimal   # these targets, 30 s each
#
# Needs a nightly toolchain and cargo-fuzz; installs whichever is missing (saying so) with
# rustup and cargo install. New inputs the fuzzer finds go to fuzz/corpus-found/TARGET/ (not
# committed; the seed corpus stays as tools/make_fuzz_corpus.py writes it); a crash or a
# timeout leaves its input in fuzz/artifacts/TARGET/ and makes this script fail. Add such an
# input to tools/make_fuzz_corpus.py once it is fixed, so the corpus test keeps it fixed.
set -euo pipefail
cd "$(dirname "$0")"

seconds="${1:-60}"
shift || true
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
    targets=(safetensors npy npz quant_fp8_block quant_mxfp8 quant_mxfp4 quant_nvfp4 decimal)
fi

if ! rustup toolchain list | grep -q '^nightly'; then
    echo "fuzz/run.sh: no nightly toolchain; installing it (rustup toolchain install nightly --profile minimal)"
    rustup toolchain install nightly --profile minimal
fi
if ! cargo +nightly fuzz --version >/dev/null 2>&1; then
    echo "fuzz/run.sh: cargo-fuzz is missing; installing it (cargo install cargo-fuzz --locked)"
    cargo install cargo-fuzz --locked
fi

failed=()
for target in "${targets[@]}"; do
    mkdir -p "corpus-found/$target"
    echo "== $target: ${seconds} s"
    # The first corpus directory receives new inputs; the seeds are only read.
    # -timeout: a single input taking over 10 s is a hang (the corpus test's limit too).
    # -rss_limit_mb: hostile files must be refused in bounded memory.
    if ! cargo +nightly fuzz run "$target" "corpus-found/$target" "corpus/$target" -- \
        -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1; then
        failed+=("$target")
    fi
done

if [ ${#failed[@]} -ne 0 ]; then
    echo "fuzz/run.sh: findings in: ${failed[*]} (inputs under fuzz/artifacts/)"
    exit 1
fi
echo "fuzz/run.sh: no findings in ${targets[*]} (${seconds} s each)"
