#!/usr/bin/env bash
# Differential test of `hrl lcb grade` (judge and reference semantics) against
# LiveCodeBench's own runner, over the corpus in scripts/lcb_differential_corpus.py.
#
#   scripts/lcb_differential.sh                     # defaults below
#   TIMEOUT=6 JOBS=2 OUT=target/lcb_differential scripts/lcb_differential.sh
#
# The reference is the `nvidia-livecodebench` wheel (LCB_VERSION, default 26.3) with
# numpy and tqdm, installed with pip into a private venv (.venv-lcb, gitignored; reused
# when it already holds that version). scripts/lcb_differential.py does the rest and
# writes OUT/report.md (printed) and OUT/details.json. Exit status 0 only when reference
# semantics agree with the reference runner on every solution and every judge-semantics
# disagreement is a declared difference. Not part of `make test` (it needs the package
# index once and takes a few minutes).
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
LCB_VERSION=${LCB_VERSION:-26.3}
NUMPY_VERSION=${NUMPY_VERSION:-2.4.6}
TQDM_VERSION=${TQDM_VERSION:-4.70.1}
TIMEOUT=${TIMEOUT:-6}
JOBS=${JOBS:-2}
OUT=${OUT:-target/lcb_differential}
VENV=${VENV:-$ROOT/.venv-lcb}
PY="$VENV/bin/python"
HELPER="$ROOT/scripts/lcb_differential.py"

if [ ! -x "$PY" ]; then
    python3 -m venv "$VENV"
fi
if ! "$PY" "$HELPER" --check-install "$LCB_VERSION"; then
    "$PY" -m pip install --quiet --no-deps "nvidia-livecodebench==$LCB_VERSION"
    "$PY" -m pip install --quiet "numpy==$NUMPY_VERSION" "tqdm==$TQDM_VERSION"
    "$PY" "$HELPER" --check-install "$LCB_VERSION"
fi

cargo build --release --quiet
"$PY" "$HELPER" --hrl "$ROOT/target/release/hrl" --timeout "$TIMEOUT" --jobs "$JOBS" --out "$OUT"
