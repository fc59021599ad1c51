#!/usr/bin/env bash
# End-to-end harness throughput, side by side in one run (issue 7, "Performance"):
#
#   1. `hrl run` of the zero-shot harness over 64 family instances (8 families x 8,
#      level 1, seed 0) with Qwen2.5-Coder-0.5B, greedy, --no-cache: items/s;
#   2. the same protocol in Python with llama-cpp-python on the same GGUF, on the very
#      prompts hrl sent (read from hrl's rollouts.jsonl), greedy, same max_tokens:
#      items/s, and the ratio hrl / Python;
#   3. the program harness on the same instances (cold, a fresh private completion
#      cache): items/s and the executor batch sizes;
#   4. the same program run again on the now warm cache: its wall time is the runtime's
#      own time (every executor call is a cache hit), as a share of the cold run's.
#   5. the program protocol in Python: every executor call of hrl's cold program
#      rollouts replayed with llama-cpp-python, one at a time, and every program run
#      with python3: items/s and the ratio hrl (cold) / Python.
#   (Run in the order 1, 3, 4, 2, 5: the Python side goes last so that a first-time
#   install of llama-cpp-python, which compiles llama.cpp, delays nothing else.)
#
#   scripts/bench_run_vs_python.sh
#   PY_MAX_SECONDS=300 THREADS=1 N_PARALLEL=16 scripts/bench_run_vs_python.sh
#   HRL=path/to/hrl scripts/bench_run_vs_python.sh    # a built binary (no cargo build)
#
# llama-cpp-python goes into a private venv (.venv-llamacpp, gitignored), installed by
# pip by package name (PIP_FIND_LINKS is honoured, e.g. a local wheel directory). The
# Python side runs one sequence at a time (its high-level API does not batch requests);
# when it would take longer than PY_MAX_SECONDS it stops and is rated per item done (the
# report says how many). Both sides use THREADS CPU threads (default 1: on a shared,
# oversubscribed machine 2 OpenMP threads were 3.4x slower, docs/PERFORMANCE.md); hrl's wall time is that of
# the whole process (model load included), Python's excludes its model load, so the
# ratio is conservative for hrl.
#
# Build flags are part of the comparison: pip compiles llama.cpp for the CPU it runs on
# (GGML_NATIVE; AVX-512 and VNNI on this machine), hrl's default build targets baseline
# x86-64 with AVX2. The report prints both sides' CPU features. Like for like:
#   RUSTFLAGS="-C target-cpu=native" CARGO_TARGET_DIR=target/native cargo build --release --bin hrl
#   HRL=target/native/release/hrl scripts/bench_run_vs_python.sh          # both native
#   python3 -m venv .venv-llamacpp-avx2 && CMAKE_ARGS="-DGGML_NATIVE=OFF -DGGML_AVX=ON \
#     -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_BMI2=ON -DGGML_AVX512=OFF" \
#     .venv-llamacpp-avx2/bin/python -m pip install --no-cache-dir llama-cpp-python
#   VENV=.venv-llamacpp-avx2 scripts/bench_run_vs_python.sh               # both AVX2
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
MODEL=${MODEL:-qwen2.5-coder-0.5b}
GGUF=${GGUF:-${HRL_HOME:-$HOME/.cache/harness-rl}/models/$MODEL.gguf}
FAMILIES=${FAMILIES:-gcd,count_primes,basic_arithmetic,chain_sum,spell_backward,letter_counting,number_sorting,base_conversion}
N=${N:-8}
SEED=${SEED:-0}
THREADS=${THREADS:-1}
N_PARALLEL=${N_PARALLEL:-16}
PY_MAX_SECONDS=${PY_MAX_SECONDS:-900}
WORK=${WORK:-$ROOT/target/bench_run_vs_python}
VENV=${VENV:-$ROOT/.venv-llamacpp}
PY="$VENV/bin/python"
HELPER="$ROOT/scripts/bench_run_vs_python.py"

if [ -z "${HRL:-}" ]; then
    cargo build --release --quiet
    HRL="$ROOT/target/release/hrl"
fi
rm -rf "$WORK"
mkdir -p "$WORK"
TASKS="families:$FAMILIES:level=1:n=$N:seed=$SEED"
EXEC="llama:$GGUF,n_parallel=$N_PARALLEL,threads=$THREADS"

now() { date +%s.%N; }
elapsed() { echo "$2 - $1" | bc -l; }
field() { "$PY" -c "import json,sys; d=json.load(open(sys.argv[1])); print(eval(sys.argv[2], {}, {'d': d}))" "$@"; }

echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)"
echo "load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "tasks: $TASKS"
echo "executor: $EXEC"

# 1. hrl, zero-shot, no cache.
t0=$(now)
"$HRL" run --harness suites/harnesses/zero-shot.toml --tasks "$TASKS" --executor "$EXEC" \
    --no-cache --no-progress --out "$WORK/zero-shot" > "$WORK/zero-shot.txt"
t1=$(now)
HRL_S=$(elapsed "$t0" "$t1")
ITEMS=$(wc -l < "$WORK/zero-shot/rollouts.jsonl")

# 2. Program harness, cold (fresh private cache), then 3. warm.
CACHE="$WORK/cache.sqlite"
t0=$(now)
"$HRL" run --harness suites/harnesses/program.toml --tasks "$TASKS" --executor "$EXEC" \
    --cache "$CACHE" --no-progress --out "$WORK/program-cold" > "$WORK/program-cold.txt"
t1=$(now)
COLD_S=$(elapsed "$t0" "$t1")
t0=$(now)
"$HRL" run --harness suites/harnesses/program.toml --tasks "$TASKS" --executor "$EXEC" \
    --cache "$CACHE" --no-progress --out "$WORK/program-warm" > "$WORK/program-warm.txt"
t1=$(now)
WARM_S=$(elapsed "$t0" "$t1")
if [ ! -x "$PY" ]; then
    python3 -m venv "$VENV"
fi
if ! "$PY" -c 'import llama_cpp' 2>/dev/null; then
    echo "installing llama-cpp-python into $VENV (PIP_FIND_LINKS=${PIP_FIND_LINKS:-unset})" >&2
    "$PY" -m pip install --quiet llama-cpp-python
fi

# 4. Python, same prompts (last, so that its one-time install does not delay the rest).
echo "load average before the Python side: $(cut -d' ' -f1-3 /proc/loadavg)"
"$PY" "$HELPER" --rollouts "$WORK/zero-shot/rollouts.jsonl" --model "$GGUF" \
    --threads "$THREADS" --max-seconds "$PY_MAX_SECONDS" > "$WORK/python.json"
"$PY" "$HELPER" --rollouts "$WORK/program-cold/rollouts.jsonl" --model "$GGUF" --all-calls \
    --threads "$THREADS" --max-seconds "$PY_MAX_SECONDS" > "$WORK/python-program.json"
PY_ITEMS=$(field "$WORK/python.json" 'd["items"]')
PY_RATE=$(field "$WORK/python.json" 'd["items_per_s"]')
HRL_RATE=$(echo "$ITEMS / $HRL_S" | bc -l)

echo "load average at end: $(cut -d' ' -f1-3 /proc/loadavg)"

echo
echo "## zero-shot, hrl run --no-cache"
cat "$WORK/zero-shot.txt"
echo
echo "## program, cold"
cat "$WORK/program-cold.txt"
echo
echo "## program, warm cache"
cat "$WORK/program-warm.txt"
echo
echo "## Python (llama-cpp-python $(field "$WORK/python.json" 'd["llama_cpp_python"]'))"
cat "$WORK/python.json"
echo
echo "## Python, program protocol (all calls replayed, programs run)"
cat "$WORK/python-program.json"
echo
PYP_RATE=$(field "$WORK/python-program.json" 'd["items_per_s"]')
COLD_RATE=$(echo "$ITEMS / $COLD_S" | bc -l)
printf '| side | items | seconds | items/s |\n| --- | --- | --- | --- |\n'
printf '| hrl run, zero-shot (whole process) | %d | %.1f | %.3f |\n' "$ITEMS" "$HRL_S" "$HRL_RATE"
printf '| llama-cpp-python, same prompts (generation only) | %d | %.1f | %.3f |\n' \
    "$PY_ITEMS" "$(field "$WORK/python.json" 'd["seconds"]')" "$PY_RATE"
printf '| hrl run, program, cold cache | %d | %.1f | %.3f |\n' \
    "$ITEMS" "$COLD_S" "$COLD_RATE"
printf '| hrl run, program, warm cache | %d | %.1f | %.3f |\n' \
    "$ITEMS" "$WARM_S" "$(echo "$ITEMS / $WARM_S" | bc -l)"
printf '| llama-cpp-python, program protocol (generation and programs) | %d | %.1f | %.3f |\n' \
    "$(field "$WORK/python-program.json" 'd["items"]')" "$(field "$WORK/python-program.json" 'd["seconds"]')" "$PYP_RATE"
printf 'ratio hrl / Python (zero-shot): %.2fx (goal >= 2.5x)\n' "$(echo "$HRL_RATE / $PY_RATE" | bc -l)"
printf 'ratio hrl / Python (program, hrl cold): %.2fx (goal >= 2.5x)\n' "$(echo "$COLD_RATE / $PYP_RATE" | bc -l)"
printf 'warm-cache wall time / cold wall time (program): %.1f%% (goal <= 10%%)\n' \
    "$(echo "100 * $WARM_S / $COLD_S" | bc -l)"
echo "hrl llama.cpp build: $(field "$WORK/zero-shot/summary.json" '" ".join(d["executor"]["build"]["llama_features"]) + " (target features: " + (" ".join(d["executor"]["build"]["target_features"]) or "baseline") + ")"')"
echo "llama-cpp-python build: $(field "$WORK/python.json" 'd["system_info"]')"
for run in zero-shot program-cold; do
    echo "$run, executor batches: $(field "$WORK/$run/summary.json" '"batches=%d requests=%d max=%d mean=%.1f sizes=%s" % (d["batching"]["batches"], d["batching"]["requests"], d["batching"]["max_size"], d["batching"]["requests"] / max(1, d["batching"]["batches"]), d["batching"]["sizes"])')"
done
