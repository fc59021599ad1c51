#!/usr/bin/env bash
# The one command to run on a machine with an NVIDIA GPU (issue 34): the same binary on
# the CPU and on the GPU, and a Markdown table for docs/PERFORMANCE.md.
#
#   scripts/bench_gpu.sh                # builds target-cuda/release/hrl if missing
#   scripts/bench_gpu.sh --cpu-only     # the CPU half only (checks the plumbing anywhere)
#   scripts/bench_gpu.sh --quick        # small sizes (16 items, 8 HumanEval problems)
#
# What it measures, each on the CPU (the CUDA binary with CUDA_VISIBLE_DEVICES="" so
# that llama.cpp sees no GPU at all) and on the GPU (gpu_layers=$GPU_LAYERS):
#   1. `hrl run` of the zero-shot and the program harness over the workload of
#      scripts/bench_run_vs_python.sh: 8 families x N=8 instances, level 1, seed 0
#      (64 items), Qwen2.5-Coder-0.5B, greedy, --no-cache: wall time, items/s, score;
#   2. generation throughput at 1, 16 and 64 sequences (`hrl bench-llama`, the hidden
#      sibling of `hrl generate` that `scripts/bench_llama.sh` uses: NPP prompt and NTG
#      generated tokens per sequence): prompt and generation tokens/s;
#   3. HumanEval pass@1 (suites/harnesses/humaneval-maker.toml, all 164 problems,
#      greedy, --no-cache) on both, and how many of the GPU's completions differ from
#      the CPU's (GPU kernels sum in another order: some near-tied greedy tokens flip).
# The table (WORK/table.md, also printed) says which device and CUDA versions gave the
# numbers; every run directory's summary.json carries the executor identity, whose
# `device` names the GPU and the layers offloaded.
#
# Before anything runs, `hrl doctor --require-gpu` must find a GPU (unless --cpu-only),
# so no time is spent measuring the CPU twice. Expected device time after the build on
# an H100 machine with 16 cores: about 5-8 minutes, most of it the CPU half.
#
# env: HRL_CUDA (the CUDA binary; default target-cuda/release/hrl, built by
#      `make build-cuda` when missing unless NO_BUILD=1), MODEL (qwen2.5-coder-0.5b),
#      GPU_LAYERS (99 = every layer), THREADS (CPU threads, default nproc),
#      N_PARALLEL (16, both sides), N (8 per family), HE_N (164), NPL ("1 16 64"),
#      NPP (128), NTG (128), WORK (target/bench-gpu), SANDBOX (bwrap; `none` runs the
#      generated programs without isolation where bubblewrap is missing, trusted
#      throwaway machines only).
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"

CPU_ONLY=0
QUICK=0
for arg in "$@"; do
    case "$arg" in
        --cpu-only) CPU_ONLY=1 ;;
        --quick) QUICK=1 ;;
        -h | --help)
            sed -n '2,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'
            exit 0
            ;;
        *)
            echo "bench_gpu.sh: unknown argument \`$arg\` (--cpu-only, --quick, --help)" >&2
            exit 2
            ;;
    esac
done

MODEL=${MODEL:-qwen2.5-coder-0.5b}
GPU_LAYERS=${GPU_LAYERS:-99}
THREADS=${THREADS:-$(nproc)}
N_PARALLEL=${N_PARALLEL:-16}
FAMILIES=${FAMILIES:-gcd,count_primes,basic_arithmetic,chain_sum,spell_backward,letter_counting,number_sorting,base_conversion}
if [ "$QUICK" = 1 ]; then
    N=${N:-2}
    HE_N=${HE_N:-8}
    NPL=${NPL:-"1 4"}
    NPP=${NPP:-64}
    NTG=${NTG:-32}
else
    N=${N:-8}
    HE_N=${HE_N:-164}
    NPL=${NPL:-"1 16 64"}
    NPP=${NPP:-128}
    NTG=${NTG:-128}
fi
WORK=${WORK:-$ROOT/target/bench-gpu}
SANDBOX=${SANDBOX:-bwrap}
HRL_CUDA=${HRL_CUDA:-$ROOT/target-cuda/release/hrl}

for v in GPU_LAYERS THREADS N_PARALLEL N HE_N NPP NTG; do
    if ! [[ "${!v}" =~ ^[0-9]+$ ]] || [ "${!v}" -lt 1 ]; then
        echo "bench_gpu.sh: $v=${!v} is not a positive integer" >&2
        exit 2
    fi
done
for npl in $NPL; do
    if ! [[ "$npl" =~ ^[0-9]+$ ]] || [ "$npl" -lt 1 ]; then
        echo "bench_gpu.sh: NPL=\"$NPL\" must be positive integers" >&2
        exit 2
    fi
done
case "$SANDBOX" in
    bwrap) ISOLATION=() ;;
    none) ISOLATION=(--unsafe-no-isolation) ;;
    *) echo "bench_gpu.sh: SANDBOX=$SANDBOX (bwrap or none)" >&2; exit 2 ;;
esac

if [ ! -x "$HRL_CUDA" ]; then
    if [ "${NO_BUILD:-0}" = 1 ]; then
        echo "bench_gpu.sh: $HRL_CUDA does not exist and NO_BUILD=1" >&2
        exit 2
    fi
    echo "building the CUDA binary (make build-cuda; long on few cores)" >&2
    make build-cuda
fi
HRL=$HRL_CUDA

# A GPU must be there before anything is measured.
rm -rf "$WORK"
mkdir -p "$WORK/cpu" "$WORK/gpu"
"$HRL" doctor --json > "$WORK/doctor.json"
"$HRL" doctor
if [ "$CPU_ONLY" = 0 ]; then
    "$HRL" doctor --require-gpu > /dev/null
fi
"$HRL" models fetch "$MODEL" --quiet
"$HRL" humaneval fetch --quiet

now() { date +%s.%N; }
cat > "$WORK/meta.json" << EOF
{"date": "$(date -u +%FT%TZ)", "host": "$(hostname)", "cores": $(nproc),
 "cpu": "$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)",
 "load_start": "$(cut -d' ' -f1-3 /proc/loadavg)",
 "model": "$MODEL", "threads": $THREADS, "n_parallel": $N_PARALLEL, "gpu_layers": $GPU_LAYERS,
 "families": "$FAMILIES", "n": $N, "humaneval_n": $HE_N, "npl": "$NPL", "npp": $NPP, "ntg": $NTG,
 "sandbox": "$SANDBOX", "quick": $QUICK, "cpu_only": $CPU_ONLY}
EOF

# side DEVICE: every measurement on one device (cpu or gpu).
side() {
    local dev=$1 layers=0 hide=()
    if [ "$dev" = gpu ]; then
        layers=$GPU_LAYERS
    else
        # The CUDA binary with no visible device: llama.cpp computes on the CPU only
        # (with a device visible it may run large batched products there even at
        # gpu_layers=0).
        hide=(env CUDA_VISIBLE_DEVICES=)
    fi
    local exec="llama:$MODEL,n_parallel=$N_PARALLEL,threads=$THREADS,gpu_layers=$layers"
    local out="$WORK/$dev" t0 t1
    : > "$out/times.tsv"
    for h in zero-shot program; do
        t0=$(now)
        "${hide[@]}" "$HRL" run --harness "suites/harnesses/$h.toml" \
            --tasks "families:$FAMILIES:level=1:n=$N:seed=0" --executor "$exec" \
            --no-cache --no-progress "${ISOLATION[@]}" --out "$out/$h" > "$out/$h.txt"
        t1=$(now)
        printf '%s\t%s\n' "$h" "$(echo "$t1 - $t0" | bc -l)" >> "$out/times.tsv"
    done
    t0=$(now)
    "${hide[@]}" "$HRL" run --harness suites/harnesses/humaneval-maker.toml \
        --tasks "humaneval:n=$HE_N" --executor "$exec" \
        --no-cache --no-progress "${ISOLATION[@]}" --out "$out/humaneval" > "$out/humaneval.txt"
    t1=$(now)
    printf '%s\t%s\n' humaneval "$(echo "$t1 - $t0" | bc -l)" >> "$out/times.tsv"
    : > "$out/throughput.jsonl"
    for npl in $NPL; do
        "${hide[@]}" "$HRL" bench-llama --model "$MODEL" --threads "$THREADS" \
            --gpu-layers "$layers" --npp "$NPP" --ntg "$NTG" --npl "$npl" \
            --n-parallel "$npl" --ctx-per-seq $((NPP + NTG + 16)) >> "$out/throughput.jsonl"
    done
}

echo "== CPU ($THREADS threads)"
side cpu
if [ "$CPU_ONLY" = 0 ]; then
    echo "== GPU (gpu_layers=$GPU_LAYERS)"
    side gpu
fi
cut -d' ' -f1-3 /proc/loadavg > "$WORK/load_end.txt"
python3 scripts/bench_gpu_table.py "$WORK" | tee "$WORK/table.md"
