#!/usr/bin/env bash
# Side-by-side generation throughput: our llama.cpp executor (`hrl bench-llama`) against
# a reference that drives llama.cpp's C API directly the way `llama-batched-bench` does
# (scripts/llama_batched_bench.cpp; the crate's vendored llama.cpp ships without the
# tools' sources), linked with the very static libraries cargo built for llama-cpp-sys-2
# (same source, same flags), at the same thread count, in the same run, alternating per
# batch size so machine noise hits both sides alike.
#
# usage: scripts/bench_llama.sh [MODEL...]        (default: smollm2-135m qwen2.5-coder-0.5b)
# env:   THREADS (default: nproc), NPP=128, NTG=128, NPL="1 4 8 16", REPS=1, KVU=0
#        (1 = one unified KV buffer on both sides), OUT=target/bench-llama/results.jsonl
# Each run is a separate process so the peak RSS (VmHWM) belongs to one model and batch
# size. Requires a release build (`cargo build --release`).
set -euo pipefail
cd "$(dirname "$0")/.."

THREADS=${THREADS:-$(nproc)}
NPP=${NPP:-128}
NTG=${NTG:-128}
NPL=${NPL:-"1 4 8 16"}
REPS=${REPS:-1}
KVU=${KVU:-0}
OUT=${OUT:-target/bench-llama/results.jsonl}
MODELS=("$@")
[ ${#MODELS[@]} -eq 0 ] && MODELS=(smollm2-135m qwen2.5-coder-0.5b)
HRL=target/release/hrl
REF=target/bench-llama/llama_batched_bench

# The reference, built against the llama.cpp libraries of the current release build.
LIBDIR=$(dirname "$(ls -t target/release/build/llama-cpp-sys-2-*/out/lib/libllama.a | head -1)")
INC=$LIBDIR/../include
mkdir -p target/bench-llama
if [ ! -x "$REF" ] || [ "$LIBDIR/libllama.a" -nt "$REF" ] || [ scripts/llama_batched_bench.cpp -nt "$REF" ]; then
  echo "building $REF against $LIBDIR" >&2
  g++ -O2 -std=c++17 -I"$INC" scripts/llama_batched_bench.cpp -o "$REF" \
    "$LIBDIR/libllama.a" "$LIBDIR/libggml.a" "$LIBDIR/libggml-cpu.a" "$LIBDIR/libggml-base.a" \
    -fopenmp -lpthread -ldl
fi
ours_kvu=()
[ "$KVU" = 1 ] && ours_kvu=(--kv-unified)

mkdir -p "$(dirname "$OUT")"
: > "$OUT"
peak_kb() { grep -E '^VmHWM' "/proc/$1/status" 2>/dev/null | awk '{print $2}'; }
# run_peak PEAKFILE OUTFILE CMD...: run CMD (stdout to OUTFILE), sampling its VmHWM
# until it exits; writes the peak in kB to PEAKFILE.
run_peak() {
  local peakfile=$1 outfile=$2; shift 2
  "$@" > "$outfile" 2>/dev/null & local pid=$! peak=0 p
  while kill -0 "$pid" 2>/dev/null; do
    p=$(peak_kb "$pid" || true)
    if [ -n "$p" ] && [ "$p" -gt "$peak" ]; then peak=$p; fi
    sleep 0.05
  done
  wait "$pid"
  echo "$peak" > "$peakfile"
}

for model in "${MODELS[@]}"; do
  path=$($HRL models list --json | python3 -c "import json,sys; print(next(m['path'] for m in json.load(sys.stdin) if m['name']=='$model'))")
  [ -f "$path" ] || $HRL models fetch "$model" -q
  for npl in $NPL; do
    per_seq=$(( NPP + NTG + 16 )); ctx=$(( npl * per_seq ))
    tmp=target/bench-llama/tmp; mkdir -p "$tmp"
    # ours
    run_peak "$tmp/ours.peak" "$tmp/ours.out" $HRL bench-llama --model "$model" --threads "$THREADS" \
      --npp "$NPP" --ntg "$NTG" --npl "$npl" --n-parallel "$npl" --ctx-per-seq "$per_seq" \
      --reps "$REPS" "${ours_kvu[@]}"
    # llama.cpp through its C API, same libraries
    run_peak "$tmp/ref.peak" "$tmp/ref.out" "$REF" -m "$path" -c "$ctx" -b 512 \
      -npp "$NPP" -ntg "$NTG" -npl "$npl" -t "$THREADS" -kvu "$KVU"
    ours=$(cat "$tmp/ours.peak"); theirs_peak=$(cat "$tmp/ref.peak")
    ours_json=$(grep '^{' "$tmp/ours.out" | tail -1)
    theirs_json=$(grep '^{' "$tmp/ref.out" | tail -1)
    python3 - "$model" "$npl" "$THREADS" "$ours" "$theirs_peak" "$ours_json" "$theirs_json" >> "$OUT" <<'PY'
import json, sys
model, npl, threads, ours_peak, theirs_peak, ours, theirs = sys.argv[1:]
o, t = json.loads(ours), json.loads(theirs)
row = {
    "model": model, "npl": int(npl), "threads": int(threads), "kv_unified": t.get("kv_unified"),
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
echo "results in $OUT" >&2
