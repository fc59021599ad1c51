#!/usr/bin/env bash
# Smoke test of the CUDA binary (`make check-cuda`), on any machine, GPU or not:
#
#   scripts/check_cuda.sh [HRL]        # default target-cuda/release/hrl
#
# 1. it starts with no LD_LIBRARY_PATH and nothing of it links the driver's libcuda
#    (so it also starts where no NVIDIA driver is installed);
# 2. `hrl doctor` reports a CUDA build, its CUDA runtime and kernel architectures;
# 3. without a GPU: doctor says none was found and why, `--gpu-layers 99` is refused
#    with exit status 2 and the reason, and generation runs on the CPU, with the
#    executor identity of a run saying "no device: CPU";
#    with a GPU: generation with every layer offloaded, and the identity names the GPU.
# Uses the default model (SmolLM2-135M; `make models` installs it).
set -euo pipefail
cd "$(dirname "$0")/.."

HRL=${1:-target-cuda/release/hrl}
MODEL=${MODEL:-smollm2-135m}
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
fail() { echo "check_cuda: FAILED: $*" >&2; exit 1; }
ok() { echo "check_cuda: ok: $*"; }
field() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(eval(sys.argv[2], {}, {'d': d}))" "$@"; }

[ -x "$HRL" ] || fail "$HRL does not exist (make build-cuda)"

# 1. Starts without help from the environment; no libcuda anywhere in its link chain.
env -u LD_LIBRARY_PATH "$HRL" --version > /dev/null || fail "$HRL does not start"
ldd "$HRL" > "$WORK/ldd.txt"
if grep -q "not found" "$WORK/ldd.txt"; then
    cat "$WORK/ldd.txt" >&2
    fail "libraries of $HRL are not found"
fi
if grep -q "libcuda\.so" "$WORK/ldd.txt"; then
    fail "$HRL links libcuda.so (the driver): it would not start without one"
fi
for lib in libggml-cuda libcudart libcublas; do
    grep -q "$lib" "$WORK/ldd.txt" || fail "$HRL does not load $lib (not a CUDA build?)"
done
ok "starts without LD_LIBRARY_PATH; loads $(grep -o 'libcudart[^ ]*\|libcublas\.[^ ]*\|libggml-cuda[^ ]*' "$WORK/ldd.txt" | sort -u | xargs), no libcuda"

# 2. The build.
env -u LD_LIBRARY_PATH "$HRL" doctor --json > "$WORK/doctor.json"
env -u LD_LIBRARY_PATH "$HRL" doctor | tee "$WORK/doctor.txt"
[ "$(field "$WORK/doctor.json" 'd["cuda_build"]')" = True ] || fail "doctor: not a CUDA build"
runtime=$(field "$WORK/doctor.json" 'd["cuda"]["runtime"]')
archs=$(field "$WORK/doctor.json" '" ".join(d["cuda"]["architectures"])')
[ -n "$archs" ] || fail "doctor: no CUDA architectures reported"
grep -q "CUDA build: yes, CUDA runtime $runtime" "$WORK/doctor.txt" || fail "doctor's text"
ok "CUDA build, runtime $runtime, kernels for $archs"

"$HRL" models fetch "$MODEL" --quiet
gpus=$(field "$WORK/doctor.json" 'len(d["gpus"])')
gen() { env -u LD_LIBRARY_PATH "$HRL" generate --model "$MODEL" --threads 1 --no-cache \
    --max-tokens 16 --prompt "What is 2 + 2? Answer with one number." "$@"; }

if [ "$gpus" = 0 ]; then
    # 3a. No GPU: said so, gpu_layers refused, CPU generation works.
    grep -q "GPUs: none: this CUDA build found no CUDA device" "$WORK/doctor.txt" \
        || fail "doctor does not say that no CUDA device was found"
    ok "no GPU here: $(grep 'GPUs: none' "$WORK/doctor.txt")"
    set +e
    gen --gpu-layers 99 > "$WORK/refused.out" 2> "$WORK/refused.err"
    rc=$?
    set -e
    [ "$rc" = 2 ] || fail "--gpu-layers 99 without a GPU exited $rc, expected 2: $(cat "$WORK/refused.err")"
    grep -q "gpu_layers=99 asks for a GPU, but this CUDA build found no CUDA device" "$WORK/refused.err" \
        || fail "--gpu-layers 99: unclear refusal: $(cat "$WORK/refused.err")"
    ok "--gpu-layers 99 refused (exit 2): $(tail -n 1 "$WORK/refused.err")"
    gen > "$WORK/cpu.txt" || fail "generation on the CPU failed"
    [ -s "$WORK/cpu.txt" ] || fail "generation on the CPU gave no text"
    ok "generates on the CPU: $(head -c 80 "$WORK/cpu.txt" | tr '\n' ' ')"
    if [ -x target/release/hrl ]; then
        target/release/hrl generate --model "$MODEL" --threads 1 --no-cache --max-tokens 16 \
            --prompt "What is 2 + 2? Answer with one number." > "$WORK/cpu-build.txt"
        if cmp -s "$WORK/cpu.txt" "$WORK/cpu-build.txt"; then
            ok "same greedy text as the CPU build (target/release/hrl)"
        else
            echo "check_cuda: note: greedy text differs from the CPU build's"
        fi
    fi
    layers=0
    expect="no device: CPU"
else
    # 3b. A GPU: every layer offloaded.
    gen --gpu-layers 99 > "$WORK/gpu.txt" || fail "generation on the GPU failed"
    [ -s "$WORK/gpu.txt" ] || fail "generation on the GPU gave no text"
    ok "generates on the GPU: $(head -c 80 "$WORK/gpu.txt" | tr '\n' ' ')"
    layers=99
    expect="$(field "$WORK/doctor.json" 'd["gpus"][0]["name"]')"
fi

# The identity a run records.
env -u LD_LIBRARY_PATH "$HRL" run --harness suites/harnesses/zero-shot.toml \
    --tasks families:gcd:level=1:n=2:seed=0 \
    --executor "llama:$MODEL,n_parallel=2,threads=1,gpu_layers=$layers" \
    --no-cache --no-progress --out "$WORK/run" > /dev/null || fail "hrl run failed"
device=$(field "$WORK/run/summary.json" 'd["executor"]["device"]')
ref=$(python3 -c "import json; print(json.loads(open('$WORK/run/rollouts.jsonl').readline())['executor'].get('device'))")
case "$ref" in
    *"$expect"*) ok "a run's identity records the device: $ref" ;;
    *) fail "a run's rollouts record device \`$ref\` (expected \`$expect\`); summary: $device" ;;
esac
echo "check_cuda: all checks passed"
