#!/usr/bin/env bash
# The CUDA toolkit that `make build-cuda` compiles llama.cpp's CUDA backend with,
# installed from NVIDIA's Python wheels into a private prefix (no system CUDA needed,
# no driver needed to build).
#
#   scripts/cuda_toolkit.sh install   # idempotent: download (sha256-pinned), unpack, link
#   scripts/cuda_toolkit.sh root      # print the toolkit root (bin/nvcc, include/, lib/)
#   scripts/cuda_toolkit.sh env       # print the `export` lines a CUDA cargo build needs
#   scripts/cuda_toolkit.sh check     # nvcc compiles and links a tiny kernel for $HRL_CUDA_ARCHS
#
# Why CUDA 13 and not the cu12 wheels: `nvidia-cuda-nvcc-cu12` (every 12.x version,
# 12.9.86 included) ships only ptxas and libnvvm, no `nvcc`, so no CUDA 12 toolkit can
# be assembled from wheels. The CUDA 13 wheels (`nvidia-cuda-nvcc` and its siblings)
# are a whole toolkit under `nvidia/cu13/`. The pinned set is CUDA 13.0 Update 2; a
# binary built with it needs an NVIDIA driver of the R580 branch or newer (580.65.06+)
# at run time.
#
# Where: $HRL_CUDA_PREFIX, else $HRL_HOME/cuda/13.0.2 ($HRL_HOME resolved as src/home.rs
# does: $HRL_HOME, $XDG_CACHE_HOME/harness-rl, ~/.cache/harness-rl). Nothing is written
# elsewhere: pip runs with --no-cache-dir and downloads into the prefix, the wheels are
# unpacked there and deleted: 530 MB downloaded once, 840 MB unpacked (libcublasLt
# alone is 540 MB).
#
# Architectures: $HRL_CUDA_ARCHS (CMake's CMAKE_CUDA_ARCHITECTURES syntax), default
# "80;90" (A100 and H100/H200, the data-centre cards people rent). "80;86;89;90" adds
# consumer Ampere and Ada; each extra architecture adds build time.
set -euo pipefail

CUDA_SET=13.0.2
# package==version --hash=sha256 (Linux x86-64 wheels); the prefix is rebuilt when
# this list changes.
WHEELS=(
    "nvidia-cuda-nvcc==13.0.88 --hash=sha256:56fe502eb77625a12f25172caa3cdddb4e4c8ba2c8c17dba44b164761b380f03"
    "nvidia-cuda-crt==13.0.88 --hash=sha256:2c8043c7c9e02492716426e9919fc78d2c5b3b2a7a768a88e952676b08aa55a4"
    "nvidia-nvvm==13.0.88 --hash=sha256:c5f41ffeb6466944a026dfa5317d7d85355c119bbec279205d22f1869d1054e0"
    "nvidia-cuda-runtime==13.0.96 --hash=sha256:7f82250d7782aa23b6cfe765ecc7db554bd3c2870c43f3d1821f1d18aebf0548"
    "nvidia-cuda-cccl==13.0.85 --hash=sha256:e0da7ad981f3a8aff08241b5bfc1af868742a63e2762f53a5171c492ef242649"
    "nvidia-cublas==13.1.0.3 --hash=sha256:ee8722c1f0145ab246bccb9e452153b5e0515fd094c3678df50b2a0888b8b171"
)

die() { echo "cuda_toolkit.sh: $*" >&2; exit 1; }

hrl_home() {
    if [ -n "${HRL_HOME:-}" ]; then echo "$HRL_HOME"
    elif [ -n "${XDG_CACHE_HOME:-}" ]; then echo "$XDG_CACHE_HOME/harness-rl"
    elif [ -n "${HOME:-}" ]; then echo "$HOME/.cache/harness-rl"
    else echo ".cache/harness-rl"; fi
}

PREFIX=${HRL_CUDA_PREFIX:-$(hrl_home)/cuda/$CUDA_SET}
ROOT="$PREFIX/nvidia/cu13"
STAMP="$PREFIX/.installed"
ARCHS=${HRL_CUDA_ARCHS:-80;90}

want_stamp() { printf '%s\n' "$CUDA_SET" "${WHEELS[@]}"; }

installed() { [ -f "$STAMP" ] && [ "$(cat "$STAMP")" = "$(want_stamp)" ] && [ -x "$ROOT/bin/nvcc" ]; }

install() {
    if installed; then
        echo "CUDA $CUDA_SET toolkit already installed in $ROOT"
        return
    fi
    case "$(uname -sm)" in
        "Linux x86_64") ;;
        *) die "the pinned CUDA wheels are for Linux x86-64; this is $(uname -sm)" ;;
    esac
    command -v unzip > /dev/null || die "unzip is needed (make deps installs it)"
    echo "installing the CUDA $CUDA_SET toolkit from pip wheels into $PREFIX (530 MB to download)"
    rm -rf "$PREFIX"
    mkdir -p "$PREFIX/wheels"
    printf '%s\n' "${WHEELS[@]}" > "$PREFIX/wheels/requirements.txt"
    python3 -m pip download --no-deps --only-binary=:all: --no-cache-dir --require-hashes \
        --progress-bar off --dest "$PREFIX/wheels" -r "$PREFIX/wheels/requirements.txt" \
        || die "pip download of the CUDA wheels failed (see above)"
    for w in "$PREFIX"/wheels/*.whl; do
        unzip -q -o "$w" 'nvidia/*' -d "$PREFIX" || die "unpacking $w failed"
    done
    rm -rf "$PREFIX/wheels"
    [ -x "$ROOT/bin/nvcc" ] || die "no executable nvcc at $ROOT/bin/nvcc after unpacking"
    # Link-time names (the wheels ship only the sonames) for CMake's FindCUDAToolkit.
    for lib in cudart cublas cublasLt; do
        ln -sfn "lib$lib.so.13" "$ROOT/lib/lib$lib.so"
    done
    ln -sfn libnvvm.so.4 "$ROOT/lib/libnvvm.so"
    # nvcc.profile searches lib64 (the layout of NVIDIA's installers); the wheels use lib.
    ln -sfn lib "$ROOT/lib64"
    want_stamp > "$STAMP"
    echo "CUDA toolkit installed: $("$ROOT/bin/nvcc" --version | tail -n 2 | head -n 1)"
}

env_lines() {
    installed || die "the toolkit is not installed yet (scripts/cuda_toolkit.sh install)"
    # llama-cpp-sys-2's build script forwards every CMAKE_* and GGML_* variable to CMake;
    # FindCUDAToolkit reads CUDAToolkit_ROOT from the environment.
    cat << EOF
export PATH="$ROOT/bin:\$PATH"
export CUDA_PATH="$ROOT"
export CUDAToolkit_ROOT="$ROOT"
export CMAKE_CUDA_COMPILER="$ROOT/bin/nvcc"
export CMAKE_CUDA_ARCHITECTURES="$ARCHS"
export CMAKE_INSTALL_RPATH='\$ORIGIN;$ROOT/lib'
export HRL_CUDA_ROOT="$ROOT"
EOF
}

check() {
    installed || die "the toolkit is not installed yet (scripts/cuda_toolkit.sh install)"
    local dir
    dir=$(mktemp -d)
    trap 'rm -rf "$dir"' RETURN
    cat > "$dir/probe.cu" << 'EOF'
#include <cstdio>
#include <cuda_runtime.h>
__global__ void add(int *x) { x[threadIdx.x] += 1; }
int main() {
    int n = -1;
    cudaError_t e = cudaGetDeviceCount(&n);
    printf("cudaGetDeviceCount: %s, %d device(s)\n", cudaGetErrorString(e), e == cudaSuccess ? n : 0);
    return 0;
}
EOF
    local gencode=()
    IFS=';' read -ra list <<< "$ARCHS"
    for a in "${list[@]}"; do
        a=${a%-real}; a=${a%-virtual}
        gencode+=("-gencode=arch=compute_$a,code=sm_$a")
    done
    "$ROOT/bin/nvcc" "${gencode[@]}" -cudart shared -o "$dir/probe" "$dir/probe.cu" \
        -Xlinker -rpath -Xlinker "$ROOT/lib" || die "nvcc could not compile the probe kernel"
    echo "nvcc compiled a kernel for $ARCHS; running it:"
    "$dir/probe"
}

case "${1:-}" in
    install) install ;;
    root) echo "$ROOT" ;;
    env) env_lines ;;
    check) check ;;
    *) die "usage: scripts/cuda_toolkit.sh install|root|env|check" ;;
esac
