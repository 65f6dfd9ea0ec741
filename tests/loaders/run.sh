#!/usr/bin/env bash
# The loader suite: lowp's quantized checkpoints loaded by transformers and compressed-tensors
# on CPU (tests/loaders/test_loaders.py says what is checked).
#
#   bash tests/loaders/run.sh [VENV]
#
# VENV: a virtualenv to install the loaders into (default: a new one under $TMPDIR, removed on
# exit). Where it already holds lowp's Python module (as .ci/run's does), the module is not
# built again.
# torch's Linux wheel on PyPI is the CUDA build, about 5.6 GB installed: with less than 10 GB
# free the suite says, loudly, that it skipped, and exits 0 (set LOWP_LOADERS_REQUIRED=1 to
# make that an error).
set -euo pipefail
cd "$(dirname "$0")/../.."
if [ $# -ge 1 ]; then
    VENV="$1"
else
    # A virtualenv of our own holds torch (~5.6 GB): removed on exit so runs do not fill the disk.
    VENV_PARENT="$(mktemp -d)"
    trap 'rm -rf "$VENV_PARENT"' EXIT
    VENV="$VENV_PARENT/venv"
fi
free_kb=$(df -Pk "$(dirname "$VENV")" | awk 'NR == 2 {print $4}')
if [ "$free_kb" -lt $((10 * 1024 * 1024)) ]; then
    echo "################################################################################"
    echo "# LOADER SUITE SKIPPED: $((free_kb / 1024 / 1024)) GB free beside $VENV, 10 GB needed"
    echo "# (torch from PyPI is ~5.6 GB). Run it by hand where there is room:"
    echo "#     bash tests/loaders/run.sh"
    echo "################################################################################"
    [ "${LOWP_LOADERS_REQUIRED:-0}" = 1 ] && exit 1
    exit 0
fi
[ -x "$VENV/bin/python" ] || python3 -m venv "$VENV"
PIP=("$VENV/bin/pip" install --quiet --disable-pip-version-check)
"${PIP[@]}" -r tests/loaders/requirements.txt
"$VENV/bin/python" -c "import lowp" 2>/dev/null || "${PIP[@]}" ./crates/lowp-py
cargo build --quiet -p lowp-cli
LOWP_BIN="$PWD/target/debug/lowp" "$VENV/bin/python" -m pytest tests/loaders -q -p no:cacheprovider -rs
