#!/usr/bin/env bash
# Builds the lowp crate with its minimum Rust, the `rust-version` of crates/lowp/Cargo.toml
# (the `half` crate's, 1.81), as a crate of its own (the workspace's manifest needs a newer
# cargo): with the default features, with none, and with every feature whose dependencies
# build on that Rust (all but `rand`: rand 0.10 needs 1.85). Needs the toolchain:
# `rustup toolchain install 1.81.0 --profile minimal`. About 2 minutes on two cores.
#
# The lock is resolved for that Rust, and rkyv is held at 0.8.10: later 0.8 releases depend on
# hashbrown 0.17, whose manifest needs edition 2024 (a 1.81 user of half's `rkyv` feature holds
# it back the same way).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
version="$(sed -n 's/^rust-version = "\(.*\)"/\1/p' "$here/../crates/lowp/Cargo.toml")"
toolchain="${MSRV_TOOLCHAIN:-$version.0}"
if [ -n "${MSRV_DIR:-}" ]; then
    work="$MSRV_DIR"
else
    # A build directory of our own (about 500 MB): removed on exit.
    work="$(mktemp -d)"
    trap 'rm -rf "$work"' EXIT
fi
python3 "$here/lowp_crate.py" "$work/lowp"
cd "$work/lowp"
export CARGO_TARGET_DIR="$work/target"
CARGO_RESOLVER_INCOMPATIBLE_RUST_VERSIONS=fallback cargo generate-lockfile --quiet
cargo update --quiet -p rkyv --precise 0.8.10
features="serde,bytemuck,num-traits,rand_distr,rkyv,arbitrary,rayon,zerocopy,use-intrinsics,nightly,half"
for args in "" "--no-default-features" "--features=$features"; do
    echo "== cargo +$toolchain build $args"
    cargo "+$toolchain" build --quiet $args
done
echo "lowp builds with Rust $toolchain"
