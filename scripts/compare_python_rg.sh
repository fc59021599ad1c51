#!/usr/bin/env bash
# The Python package harness_rl against reasoning-gym, both imported into one Python
# process (scripts/python_vs_rg.py): per family name both have, instances/s of
# `create_dataset(...)` plus iteration and scores/s of `dataset.score_answer`, with
# the ratios and their geometric means.
#
#   scripts/compare_python_rg.sh
#   ONLY="count_bits gcd" N=2000 HRL_N=20000 REPEAT=3 OUT=target/compare_python_rg.md \
#     scripts/compare_python_rg.sh
#
# reasoning-gym comes from the same private venv as compare_reasoning_gym.sh (.venv-rg,
# pinned to RG_VERSION); the wheel `make python` builds is installed there beside it.
# First the reasoning-gym script of the shim test (python/tests/rg_script.py) runs
# unchanged against reasoning-gym itself, which shows it is written against
# reasoning-gym's API. LEVEL (default 3) is harness_rl's level, SEED the seed of both.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
RG_VERSION=${RG_VERSION:-0.1.25}
N=${N:-2000}
HRL_N=${HRL_N:-$((N * 10))}
LEVEL=${LEVEL:-3}
SEED=${SEED:-0}
REPEAT=${REPEAT:-3}
RG_MAX_SECONDS=${RG_MAX_SECONDS:-10}
OUT=${OUT:-target/compare_python_rg.md}
VENV=${VENV:-$ROOT/.venv-rg}
PY="$VENV/bin/python"

if [ ! -x "$PY" ]; then
    python3 -m venv "$VENV"
fi
if [ "$("$PY" scripts/rg_throughput.py --version 2>/dev/null || true)" != "$RG_VERSION" ]; then
    "$PY" -m pip install --quiet "reasoning-gym==$RG_VERSION"
fi

make --no-print-directory python
"$PY" -m pip install --quiet --force-reinstall --no-deps target/wheels/harness_rl-*.whl

"$PY" python/tests/rg_script.py > /dev/null
echo "python/tests/rg_script.py runs against reasoning-gym $RG_VERSION" >&2

mkdir -p "$(dirname "$OUT")"
"$PY" scripts/python_vs_rg.py --families "${ONLY:-}" --n "$N" --hrl-n "$HRL_N" \
    --level "$LEVEL" --seed "$SEED" --repeat "$REPEAT" --max-seconds "$RG_MAX_SECONDS" --out "$OUT"
echo "(written to $OUT)" >&2
