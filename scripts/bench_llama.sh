#!/usr/bin/env bash
# Side-by-side generation throughput: our llama.cpp executor (`hrl bench-llama`) against
# llama.cpp's own `llama-batched-bench`, built from the SAME vendored llama.cpp source
# that llama-cpp-sys-2 compiles, with the same CMake CPU flags, at the same thread count,
# in the same run (alternating per batch size so machine noise hits both sides alike).
#
# usage: scripts/bench_llama.sh [MODEL...]        (default: smollm2-135m qwen2.5-coder-0.5b)
# env:   THREADS (default: nproc), NPP=128, NTG=128, NPL="1 4 8 16", REPS=1,
#        OUT=target/bench-llama/results.jsonl
# Each run is a separate process so the peak RSS (VmHWM) belongs to one model and batch
# size. Requires a release build (`cargo build --release`).
set -euo pipefail
cd "$(dirname "$0")/.."

THREADS=${THREADS:-$(nproc)}
NPP=${NPP:-128}
NTG=${NTG:-128}
NPL=${NPL:-"1 4 8 16"}
REPS=${REPS:-1}
OUT=${OUT:-target/bench-llama/results.jsonl}
MODELS=("$@")
[ ${#MODELS[@]} -eq 0 ] && MODELS=(smollm2-135m qwen2.5-coder-0.5b)
HRL=target/release/hrl
BUILD=target/bench-llama/llama.cpp-build

# 1. The vendored llama.cpp source and the CMake flags cargo built it with.
SRC=$(ls -d "${CARGO_HOME:-$HOME/.cargo}"/registry/src/*/llama-cpp-sys-2-0.1.161/llama.cpp | head -1)
CACHE=$(ls -t target/release/build/llama-cpp-sys-2-*/out/build/CMakeCache.txt | head -1)
[ -d "$SRC" ] || { echo "vendored llama.cpp source not found" >&2; exit 1; }
[ -f "$CACHE" ] || { echo "no llama-cpp-sys-2 build in target/release; run cargo build --release" >&2; exit 1; }
flags=()
while IFS= read -r line; do flags+=("-D$line"); done < <(
  grep -E '^(GGML_(NATIVE|AVX|AVX2|AVX512|AVX512_BF16|AVX512_VBMI|AVX512_VNNI|AVX_VNNI|BMI2|F16C|FMA|SSE42|OPENMP|CPU_REPACK|LLAMAFILE)):BOOL=' "$CACHE")
cflags=$(sed -n 's/^CMAKE_C_FLAGS:STRING=//p' "$CACHE")

# 2. Build llama-batched-bench once (cached under target/bench-llama).
if [ ! -x "$BUILD/bin/llama-batched-bench" ]; then
  echo "building llama-batched-bench from $SRC" >&2
  cmake -S "$SRC" -B "$BUILD" -DCMAKE_BUILD_TYPE=Release -DBUILD_SHARED_LIBS=OFF \
    -DLLAMA_CURL=OFF -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF \
    -DLLAMA_BUILD_SERVER=OFF -DLLAMA_BUILD_TOOLS=ON \
    -DCMAKE_C_FLAGS="$cflags" -DCMAKE_CXX_FLAGS="$cflags" "${flags[@]}" >/dev/null
  nice cmake --build "$BUILD" --target llama-batched-bench -j "$THREADS" >/dev/null
fi

mkdir -p "$(dirname "$OUT")"
: > "$OUT"
peak_kb() { grep -E '^VmHWM' "/proc/$1/status" 2>/dev/null | awk '{print $2}'; }
# Run a command, sampling its VmHWM until it exits; prints the peak in kB on fd 3.
run_peak() {
  "$@" & local pid=$! peak=0 p
  while kill -0 "$pid" 2>/dev/null; do
    p=$(peak_kb "$pid"); [ -n "$p" ] && [ "$p" -gt "$peak" ] && peak=$p
    sleep 0.05
  done
  wait "$pid"
  echo "$peak" >&3
}

for model in "${MODELS[@]}"; do
  path=$($HRL models list --json | python3 -c "import json,sys; print(next(m['path'] for m in json.load(sys.stdin) if m['name']=='$model'))")
  [ -f "$path" ] || $HRL models fetch "$model" -q
  for npl in $NPL; do
    ctx=$(( npl * (NPP + NTG + 8) ))
    # ours
    ours=$( { run_peak $HRL bench-llama --model "$model" --threads "$THREADS" --npp "$NPP" --ntg "$NTG" \
              --npl "$npl" --n-parallel "$npl" --reps "$REPS" 3>&2 2>/dev/null; } 3>&1 1>/tmp/hrl-bench-ours.$$ )
    ours_json=$(cat /tmp/hrl-bench-ours.$$)
    # llama.cpp's own
    theirs_peak=$( { run_peak "$BUILD/bin/llama-batched-bench" -m "$path" -c "$ctx" -b 512 -ub 512 \
              -npp "$NPP" -ntg "$NTG" -npl "$npl" -t "$THREADS" -tb "$THREADS" --output-format jsonl \
              3>&2 2>/dev/null; } 3>&1 1>/tmp/hrl-bench-theirs.$$ )
    theirs_json=$(grep '^{' /tmp/hrl-bench-theirs.$$ | tail -1)
    python3 - "$model" "$npl" "$THREADS" "$ours" "$theirs_peak" "$ours_json" "$theirs_json" >> "$OUT" <<'PY'
import json, sys
model, npl, threads, ours_peak, theirs_peak, ours, theirs = sys.argv[1:]
o, t = json.loads(ours), json.loads(theirs)
row = {
    "model": model, "npl": int(npl), "threads": int(threads),
    "ours_tg_tok_s": round(o["tg_tok_s"], 1), "llamacpp_tg_tok_s": round(t["speed_tg"], 1),
    "ratio_tg": round(o["tg_tok_s"] / t["speed_tg"], 3),
    "ours_pp_tok_s": round(o["pp_tok_s"], 1), "llamacpp_pp_tok_s": round(t["speed_pp"], 1),
    "ours_peak_rss_mb": round(int(ours_peak) / 1024, 1),
    "llamacpp_peak_rss_mb": round(int(theirs_peak) / 1024, 1),
}
print(json.dumps(row))
PY
    tail -1 "$OUT" >&2
  done
done
rm -f /tmp/hrl-bench-ours.$$ /tmp/hrl-bench-theirs.$$
echo "results in $OUT" >&2
