#!/usr/bin/env bash
# lowp's scalar f16 and bf16 operations timed beside the half crate's, built as crates are
# tested: overflow checks and debug assertions on, at opt-level 0 (cargo's `dev` profile) and 3
# (`dev-o3`), without `std` (both crates convert in software) and with it (half then takes
# F16C for f16 where the CPU has it). About 3 minutes on two cores, most of it building.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
export CARGO_TARGET_DIR="${HALF_SPEED_TARGET_DIR:-$repo/target/half_speed}"
for profile in dev dev-o3; do
    for features in "" "--features=std"; do
        HALF_SPEED_PROFILE=$profile cargo run --quiet --manifest-path "$here/Cargo.toml" \
            --profile "$profile" $features
        echo
    done
done
