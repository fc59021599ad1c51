#!/usr/bin/env bash
# Calibration of the families (issues 7 and 8): the seed harnesses zero-shot, program,
# python-tool and reason on every family at levels 1 and 2, Qwen2.5-Coder-0.5B, greedy,
# N instances per (family, level) (default 24), seed 0: the same instances for every
# harness (paired).
#
#   scripts/calibrate.sh                      # the whole grid, in order
#   ONLY="zero-shot-L1 program-L1" scripts/calibrate.sh
#   FAMILIES=maze,gcd ONLY=program-L1 scripts/calibrate.sh   # some families first
#   RUNS=/work/runs/calib N=24 SEED=0 NICE=10 THREADS=1 scripts/calibrate.sh
#   HRL=/path/to/hrl scripts/calibrate.sh     # a built binary (no cargo build)
#
# One `hrl run` per (harness, level) over all families, so the executor's continuous
# batch stays full; order: zero-shot L1, program L1, python-tool L1, reason L1, then
# the L2s. Each writes RUNS/<harness>-L<level>/ (rollouts.jsonl, summary.json, log);
# a rerun into the same directory resumes (finished rollouts are reused), so the grid
# can be run in several sittings; FAMILIES (a comma list, default all) runs some
# families of a cell first (their instances are the same as in the `all` run, so the
# full run later reuses them). Runs go under `nice -n NICE` (other measurements have
# priority).
# At the end the table is printed by scripts/calibration_table.py (also runnable alone
# on a grid still going; `--json` writes a pass's table); scripts/calibration_merge.py
# merges the passes' JSON tables into the whole grid (docs/RESULTS.md).
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
RUNS=${RUNS:-/work/runs/calib}
N=${N:-24}
SEED=${SEED:-0}
NICE=${NICE:-10}
THREADS=${THREADS:-1}
# threads=1: on the shared 2-core machine several model runs go at once. The thread
# count is part of the executor identity (greedy outputs can differ with it; see
# docs/RESULTS.md on HumanEval), so a grid must be resumed with the same THREADS;
# slots and context size are not part of it.
EXECUTOR=${EXECUTOR:-llama:qwen2.5-coder-0.5b,n_parallel=16,ctx=4096,threads=$THREADS}
HRL=${HRL:-$ROOT/target/release/hrl}
ORDER="zero-shot-L1 program-L1 python-tool-L1 reason-L1 zero-shot-L2 program-L2 python-tool-L2 reason-L2"
ONLY=${ONLY:-$ORDER}
FAMILIES=${FAMILIES:-all}

if [ "$HRL" = "$ROOT/target/release/hrl" ]; then
    cargo build --release --quiet
fi
mkdir -p "$RUNS"

for cell in $ORDER; do
    case " $ONLY " in *" $cell "*) ;; *) continue ;; esac
    harness=${cell%-L*}
    level=${cell##*-L}
    dir="$RUNS/$cell"
    mkdir -p "$dir"
    cmd=(nice -n "$NICE" "$HRL" run
        --harness "suites/harnesses/$harness.toml"
        --tasks "families:$FAMILIES:level=$level:n=$N:seed=$SEED"
        --executor "$EXECUTOR"
        --cache "$RUNS/completions.sqlite"
        --no-progress
        --out "$dir")
    {
        echo "# $(date -u +%FT%TZ) start: ${cmd[*]}"
        echo "# load average: $(cut -d' ' -f1-3 /proc/loadavg)"
    } >> "$dir/log"
    start=$(date +%s)
    "${cmd[@]}" >> "$dir/log" 2>&1
    echo "# $(date -u +%FT%TZ) done in $(( $(date +%s) - start )) s" >> "$dir/log"
done

python3 "$ROOT/scripts/calibration_table.py" --runs "$RUNS"
