#!/usr/bin/env bash
# What the wave scheduler costs (issue 31): the same `hrl run` with --no-waves (batches
# formed by timing) and with waves (the default), one after the other in one run, on the
# workload of scripts/bench_run_vs_python.sh (Qwen2.5-Coder-0.5B, greedy, --no-cache, 8
# families at level 1, N instances each), and how many first completions differ between
# the two (the order of requests in a batch alone can change greedy text).
#
#   scripts/bench_waves.sh                                  # program harness, N=2
#   HARNESS=suites/harnesses/python-tool.toml N=8 THREADS=2 scripts/bench_waves.sh
#   HRL=path/to/hrl scripts/bench_waves.sh                  # a built binary (no cargo build)
#
# Needs the model (`hrl models fetch qwen2.5-coder-0.5b`), bubblewrap and cgroups like
# every `hrl run`, and python3 for the summary.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
MODEL=${MODEL:-qwen2.5-coder-0.5b}
GGUF=${GGUF:-${HRL_HOME:-$HOME/.cache/harness-rl}/models/$MODEL.gguf}
HARNESS=${HARNESS:-suites/harnesses/program.toml}
FAMILIES=${FAMILIES:-gcd,count_primes,basic_arithmetic,chain_sum,spell_backward,letter_counting,number_sorting,base_conversion}
N=${N:-2}
THREADS=${THREADS:-1}
N_PARALLEL=${N_PARALLEL:-16}
WORK=${WORK:-$ROOT/target/bench_waves}
if [ -z "${HRL:-}" ]; then
    cargo build --release --quiet
    HRL="$ROOT/target/release/hrl"
fi
TASKS="families:$FAMILIES:level=1:n=$N:seed=0"
EXEC="llama:$GGUF,n_parallel=$N_PARALLEL,threads=$THREADS"
rm -rf "$WORK"
mkdir -p "$WORK"
echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)"
echo "harness: $HARNESS; tasks: $TASKS; executor: $EXEC"
for mode in no-waves waves; do
    flag=()
    [ "$mode" = no-waves ] && flag=(--no-waves)
    t0=$(date +%s.%N)
    "$HRL" run --harness "$HARNESS" --tasks "$TASKS" --executor "$EXEC" --no-cache \
        --no-progress "${flag[@]}" --out "$WORK/$mode" --json > "$WORK/$mode.json"
    t1=$(date +%s.%N)
    python3 - "$WORK/$mode.json" "$t0" "$t1" "$mode" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
s = float(sys.argv[3]) - float(sys.argv[2])
n = d["items"]
b = d["batching"]
load = open("/proc/loadavg").read().split()[:3]
print(f"{sys.argv[4]}: {n} items, {s:.1f} s, {n / s:.3f} items/s, score {d['aggregates']['score']['mean']:.4f}, "
      f"{b['batches']} batches of mean {b['requests'] / max(b['batches'], 1):.1f}, load {' '.join(load)}")
PY
done
python3 - "$WORK" <<'PY'
import json, sys
rows = lambda m: [json.loads(l) for l in open(f"{sys.argv[1]}/{m}/rollouts.jsonl")]
a, b = rows("no-waves"), rows("waves")
first = lambda r: r["calls"][0]["completion"] if r["calls"] else None
print(f"first completions that differ between the two: {sum(first(x) != first(y) for x, y in zip(a, b))} of {len(a)}")
PY
