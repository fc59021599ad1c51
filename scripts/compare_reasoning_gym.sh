#!/usr/bin/env bash
# Side-by-side generation throughput: harness-rl vs the Python reasoning-gym, for every
# family name that exists in both (intersection computed at run time).
#
#   scripts/compare_reasoning_gym.sh            # defaults below
#   N=5000 LEVEL=3 SEED=0 OUT=target/compare_reasoning_gym.md scripts/compare_reasoning_gym.sh
#   ONLY="count_bits graph_color" scripts/compare_reasoning_gym.sh   # a subset
#
# reasoning-gym: a private venv (.venv-rg, gitignored) with reasoning-gym pinned to
# RG_VERSION; per family, build a dataset of N items (default config) and materialise
# every item, in-process (scripts/rg_throughput.py). harness-rl: `hrl tasks bench-gen`
# generates N instances in-process at LEVEL (default 3, the middle level and the one
# the criterion bench uses; its sizes are comparable to reasoning-gym's default
# configurations — see docs/PERFORMANCE.md). Neither side includes process start-up.
# The two sides alternate family by family so machine noise hits both alike, and each
# side is measured REPEAT times (default 3) keeping its best rate, which filters out
# slow-downs caused by other load on a shared machine. A very slow reasoning-gym family
# stops after RG_MAX_SECONDS (default 10) and is rated on the items it produced.
# Prints a Markdown table (family, rg items/s, hrl items/s, ratio) and the geometric
# mean of the ratios, and writes the same Markdown to OUT.
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
OUT=${OUT:-target/compare_reasoning_gym.md}
VENV=${VENV:-$ROOT/.venv-rg}
PY="$VENV/bin/python"
HELPER="$ROOT/scripts/rg_throughput.py"

if [ ! -x "$PY" ]; then
    python3 -m venv "$VENV"
fi
if [ "$("$PY" "$HELPER" --version 2>/dev/null || true)" != "$RG_VERSION" ]; then
    "$PY" -m pip install --quiet "reasoning-gym==$RG_VERSION"
fi
RG_INSTALLED=$("$PY" "$HELPER" --version)

cargo build --release --quiet
HRL="$ROOT/target/release/hrl"

mapfile -t FAMILIES < <(
    "$HRL" tasks list --json | "$PY" -c '
import json, subprocess, sys
hrl = {f["name"] for f in json.load(sys.stdin)}
rg = set(json.loads(subprocess.check_output([sys.argv[1], sys.argv[2], "--registry"])))
print("\n".join(sorted(hrl & rg)))
' "$PY" "$HELPER"
)
if [ -n "${ONLY:-}" ]; then
    WANT=" $ONLY "
    KEEP=()
    for fam in "${FAMILIES[@]}"; do
        case "$WANT" in *" $fam "*) KEEP+=("$fam") ;; esac
    done
    for fam in $ONLY; do
        case " ${KEEP[*]} " in
            *" $fam "*) ;;
            *) echo "ONLY: $fam is not a family of both harness-rl and reasoning-gym" >&2; exit 1 ;;
        esac
    done
    FAMILIES=("${KEEP[@]}")
fi
if [ "${#FAMILIES[@]}" -eq 0 ]; then
    echo "no family exists in both harness-rl and reasoning-gym" >&2
    exit 1
fi

ROWS=$(mktemp)
trap 'rm -f "$ROWS"' EXIT
for fam in "${FAMILIES[@]}"; do
    for _ in $(seq "$REPEAT"); do
        printf 'rg\t%s\n' "$("$PY" "$HELPER" "$fam" "$N" "$SEED" "$RG_MAX_SECONDS")" >> "$ROWS"
        printf 'hrl\t%s\n' "$("$HRL" tasks bench-gen "$fam" --n "$HRL_N" --level "$LEVEL" --seed "$SEED")" >> "$ROWS"
    done
    echo "measured $fam" >&2
done

mkdir -p "$(dirname "$OUT")"
"$PY" - "$ROWS" "$RG_INSTALLED" "$N" "$HRL_N" "$LEVEL" "$SEED" "$REPEAT" > "$OUT" <<'PYEOF'
import json, math, platform, os, sys, datetime
rows_path, rg_version, n, hrl_n, level, seed, repeat = sys.argv[1:]
best = {}
for line in open(rows_path):
    side, row = line.rstrip("\n").split("\t", 1)
    row = json.loads(row)
    key = (row["family"], side)
    old = best.get(key)
    if old is None or "error" in old or row.get("items_per_sec", -1) > old.get("items_per_sec", -1):
        best[key] = row
lines = []
ratios = []
for fam in sorted({f for f, _ in best}):
    rg, hrl = best[(fam, "rg")], best[(fam, "hrl")]
    if "error" in rg:
        lines.append(f"| {rg['family']} | error: {rg['error'][:60]} | {hrl['items_per_sec']:,.0f} | n/a |")
        continue
    r = hrl["items_per_sec"] / rg["items_per_sec"]
    ratios.append(r)
    lines.append(f"| {rg['family']} | {rg['items_per_sec']:,.0f} | {hrl['items_per_sec']:,.0f} | {r:,.1f}x |")
geo = math.exp(sum(math.log(r) for r in ratios) / len(ratios)) if ratios else float("nan")
slower = sum(1 for r in ratios if r < 1)
date = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
print(f"Generation throughput, harness-rl level {level} vs reasoning-gym {rg_version} default config "
      f"({date}; {os.cpu_count()} CPUs, {platform.machine()}; rg N={n}, hrl N={hrl_n}, seed {seed}; "
      f"best of {repeat} per side; in-process, no start-up):")
print()
print("| family | reasoning-gym items/s | harness-rl items/s | ratio |")
print("| --- | ---: | ---: | ---: |")
print("\n".join(lines))
print()
print(f"Geometric-mean speed-up over {len(ratios)} families: **{geo:,.1f}x**; families slower than reasoning-gym: {slower}.")
PYEOF
cat "$OUT"
echo "(written to $OUT)" >&2
