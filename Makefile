# troupe — make (setup + build), make test, make demo, make bench, make shim.
# `scripts/setup.sh` installs what is missing (apt, as root or via sudo), builds
# the libtorch shim and fetches fixtures; it is idempotent and cheap when done.

# Go: go.mod's version, from PATH or troupe's cache (scripts/go/go; setup
# installs it there when PATH has none or an older one).
GO       ?= $(CURDIR)/scripts/go/go
NPROC    := $(shell nproc)
VERSION  := $(shell git describe --always --dirty 2>/dev/null || echo dev)
LDFLAGS  := -X main.version=$(VERSION)
# TROUPE_THREADS is left to the user: unset, troupe uses half the CPUs
# (torch.DefaultThreads, docs/performance.md).
# Go's caches do not hash libtshim.so; a stamp of it in CGO_CFLAGS makes a
# rebuilt shim rebuild (and retest) the packages that link it.
SHIM_STAMP = $(shell sha256sum build/libtshim.so 2>/dev/null | cut -c1-12)
export CGO_CFLAGS = -O2 -g -Wno-deprecated-declarations -DTSHIM_STAMP=$(SHIM_STAMP)

.PHONY: all gpu setup shim build test check-gpu-build vet bench demo demo-warmup magrpo-demo lora-demo search-demo math-demo planpath-demo sokoban-demo coding-demo magrpo-baselines stability experiment-magrpo-cooperation experiment-drmas-stability experiment-atgrpo-roles experiment-math-placevalue clean

all: setup build

# The demos use no test fixtures: their setup skips the npm downloads.
SETUP_FLAGS ?=
DEMOS := demo demo-warmup magrpo-demo lora-demo math-demo search-demo planpath-demo sokoban-demo coding-demo
$(DEMOS): SETUP_FLAGS = --no-fixtures

setup:
	@bash scripts/setup.sh $(SETUP_FLAGS)

# On a GPU node: bin/train over a shim built against the node's CUDA PyTorch
# (python3's; PYTHON= another; else the pinned reference environment's),
# Go installed as setup does; no environment variable to set afterwards
# (scripts/gpu/make-gpu.sh). It does not need `make` (the CPU build) first.
gpu:
	@GO="$(GO)" VERSION="$(VERSION)" bash scripts/gpu/make-gpu.sh

shim:
	@cmake -S torch/csrc -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
	@cmake --build build -j$(NPROC)

# go build, saying how far a long first build is every few seconds
# (scripts/build.sh).
build:
	@GO="$(GO)" LDFLAGS="$(LDFLAGS)" TRAIN_OUT="$(TRAIN_OUT)" bash scripts/build.sh

vet:
	$(GO) vet ./...

# The tests (scripts/test.sh), after compiling the shim's CUDA build paths
# against Debian's torch 2.6 (CUDA 12.4) headers and torch 2.11's
# (check-gpu-build; a machine that cannot reach Debian's mirror skips it,
# saying so) and installing the pinned Python reference environment
# (scripts/pyref, docs/references.md). Where it installs,
# TROUPE_PYREF_REQUIRED=1 makes a reference test that cannot find it fail
# instead of skipping, and afterwards the shim's CUDA build is linked
# against PyPI's torch and the packages that use it are tested again on it,
# and the GPU window scripts are rehearsed on the CPU (check-window.sh).
# Each phase prints its time, and the last line all of them (T0: when make
# read this file).
test: T0 := $(shell date +%s)
test: setup vet
	@GO=$(GO) MAKE_TEST_T0=$(T0) bash scripts/test.sh

# The shim's CUDA build paths, compiled (not linked) without a GPU against
# torch 2.6; `make test` also links them against PyPI's torch (test-shim.sh).
check-gpu-build:
	@bash scripts/gpu/check-builds.sh

bench: setup
	$(GO) test -run '^$$' -bench . -benchtime 2s ./...

# The learning demo, on CPU (about a minute on 2 busy cores once set up; a fresh
# clone adds ~7 min for the shim and ~3 for the first Go build, docs/usage.md):
# Dr. MAS's two-agent math team (configs/drmas-math-demo-tiny.yaml), a Solver
# and a Verifier each training its own copy of a tiny model, 30 RL steps
# from the shipped warm-up demo/warmup (made from nothing by `make
# demo-warmup`), held-out accuracy on 200 questions before RL and every 10
# steps; it ends printing accuracy before and after RL and what that
# accuracy measures. It starts over: an earlier demo's runs/demo is
# deleted, saying so. SEED=N (default 1) seeds the run; scripts/demo-figures.sh
# runs seeds 1 to 10.
SEED ?= 1
demo: all
	@if [ -e runs/demo ]; then echo "demo: deleting runs/demo, the previous demo's output (make demo starts over; copy it elsewhere first to keep it)"; fi
	rm -rf runs/demo
	bin/train -c configs/drmas-math-demo-tiny.yaml -q --seed $(SEED)
	@echo
	@echo "demo: accuracy is the share of the 200 held-out questions (\"What is the tens digit of 472?\") whose final answer,"
	@echo "      the Solver's after the Verifier's verdicts, is right. The warm-up taught the model to read the asked digit"
	@echo "      and to slip to another in about 60 % of its answers: RL unlearns the slip (docs/usage.md, \"What the demo measures\")."
	@echo "demo: metrics    runs/demo/drmas/metrics.jsonl (plot: runs/demo/drmas/metrics.png)"
	@echo "demo: samples    runs/demo/drmas/samples.jsonl"
	@echo "demo: checkpoint $$(ls -d runs/demo/drmas/checkpoints/step-* | tail -1)"
	@echo "demo: export     runs/demo/drmas/export/{solver,verifier}"
	@echo "demo: next       docs/usage.md, \"Using it\": each of its commands runs as written from here"

# The demo's warm-up made again from nothing (scripts/demo-warmup.sh: train
# init and two train sft stages, 5–10 min on 2 cores), into runs/demo-warmup; it says
# whether the weights are the shipped demo/warmup's. It replaces nothing.
demo-warmup: all
	bash scripts/demo-warmup.sh

# MAGRPO on cooperative writing from nothing (configs/magrpo-writing-tiny.yaml):
# a tiny random model (train init), a supervised warm-up on demonstrations of
# both roles (train sft), then 30 RL steps; output in runs/magrpo-demo/. Its
# held-out accuracy does not yet rise on most seeds (README).
magrpo-demo: all
	rm -rf runs/magrpo-demo
	bin/train init runs/magrpo-demo/base --text writing
	bin/train sft -c configs/magrpo-writing-tiny.yaml --set models.tiny.path=runs/magrpo-demo/base --out runs/magrpo-demo/sft --steps 150 --log-every 15
	bin/train -c configs/magrpo-writing-tiny.yaml -q --seed $(SEED)

# The demo's task with a LoRA adapter per agent on one frozen base
# (configs/lora-magrpo-writing-tiny.yaml); output in runs/lora-demo/.
lora-demo: all
	rm -rf runs/lora-demo
	bin/train init runs/lora-demo/base --text writing
	bin/train sft -c configs/lora-magrpo-writing-tiny.yaml --set models.tiny.path=runs/lora-demo/base --out runs/lora-demo/sft --steps 150 --log-every 50
	bin/train -c configs/lora-magrpo-writing-tiny.yaml -q

# A short multi-agent Dr. MAS math run on CPU, from nothing: a tiny random
# model, a warm-up on demonstrations of the workflow, then RL
# (configs/drmas-math-tiny.yaml). Output in runs/math-demo/. It shows the
# machinery; the tiny model does not learn arithmetic (README).
math-demo: all
	rm -rf runs/math-demo
	bin/train init runs/math-demo/base
	bin/train sft -c configs/drmas-math-tiny.yaml --set models.tiny.path=runs/math-demo/base --out runs/math-demo/sft --steps 200 --log-every 50
	bin/train -c configs/drmas-math-tiny.yaml -q

# Dr. MAS's search system on CPU, from nothing: a tiny model whose tokenizer
# learned the search prompts (train init --text search), a warm-up on oracle
# demonstrations (train sft), then RL over an embedded BM25 index of a
# synthetic multi-hop corpus (configs/drmas-search-tiny.yaml). Output in
# runs/search-demo/.
search-demo: all
	rm -rf runs/search-demo
	bin/train init runs/search-demo/base --text search
	bin/train sft -c configs/drmas-search-tiny.yaml --set models.tiny.path=runs/search-demo/base --out runs/search-demo/sft --steps 1200 --log-every 200
	bin/train -c configs/drmas-search-tiny.yaml -q
	@echo
	@echo "search-demo: metrics runs/search-demo/drmas/metrics.jsonl, samples runs/search-demo/drmas/samples.jsonl"

# AT-GRPO on a grid game on CPU, from nothing: a tiny model whose tokenizer
# learned the game's prompts, a warm-up on solver demonstrations (1500 steps
# for plan-path: 150 leave its actions unparseable), then RL with tree
# sampling (configs/atgrpo-planpath-tiny.yaml, atgrpo-sokoban-tiny.yaml).
planpath-demo sokoban-demo: all
	rm -rf runs/$(@:-demo=)-demo
	bin/train init runs/$(@:-demo=)-demo/base --text $(subst planpath,plan-path,$(@:-demo=))
	bin/train sft -c configs/atgrpo-$(@:-demo=)-tiny.yaml --set models.tiny.path=runs/$(@:-demo=)-demo/base --out runs/$(@:-demo=)-demo/sft --steps $(if $(filter planpath-demo,$@),1500,150) --log-every 250
	bin/train -c configs/atgrpo-$(@:-demo=)-tiny.yaml -q

# MAGRPO on cooperative coding on CPU, from nothing
# (configs/magrpo-coding-tiny.yaml; writing is `make demo`).
coding-demo: all
	rm -rf runs/$(@:-demo=)-demo
	bin/train init runs/$(@:-demo=)-demo/base --text $(@:-demo=)
	bin/train sft -c configs/magrpo-$(@:-demo=)-tiny.yaml --set models.tiny.path=runs/$(@:-demo=)-demo/base --out runs/$(@:-demo=)-demo/sft --steps 150 --log-every 50
	bin/train -c configs/magrpo-$(@:-demo=)-tiny.yaml -q

# MAGRPO's prompt-only baselines on CPU (writing and coding): the untrained
# team under the parallel, sequential and discussion protocols and the
# untrained single agent, each `train eval` of a warmed-up tiny model over
# SEEDS (default 1 2 3); TASKS= picks writing or coding. Table in
# runs/magrpo-baselines/report.md.
magrpo-baselines: all
	rm -rf runs/magrpo-baselines
	bash scripts/experiments/magrpo-baselines.sh

# The Dr. MAS stability experiment (drmas, grpo, grpo-step × 3 seeds) on CPU;
# report in runs/stability/report/report.md.
stability: all
	rm -rf runs/stability
	scripts/stability.sh

# The MAGRPO cooperation experiment on CPU: the two-agent writing team against
# one agent on the same reward and samples, and the untrained team, over
# seeds 1-10 (SEEDS=, STEPS= override); runs in runs/exp-magrpo/, report and
# charts in docs/magrpo-cooperation/.
experiment-magrpo-cooperation: all
	rm -rf runs/exp-magrpo
	bash scripts/experiments/magrpo-cooperation.sh

# Dr. MAS vs GRPO: gradient norms against the amplification factor, sweeping
# the Verifier's reward_scale and reward_offset (scripts/experiments/
# drmas-stability.sh; ESTIMATORS, SEEDS, SCALES, OFFSETS, STEPS, JOBS override
# the design). Runs in runs/exp-stability/, summary in
# docs/drmas-stability/report.md. The target runs the design the report was
# measured with: drmas, grpo and grpo-step × scale 1, scale 16, offset 2 × 5
# seeds × 100 steps, 45 runs, about an hour on 2 cores (SEEDS="1 2 3": about
# 35 min); the script's own defaults add scale 4.
experiment-drmas-stability: all
	rm -rf runs/exp-stability
	SCALES="$${SCALES:-1 16}" OFFSETS="$${OFFSETS-2}" SEEDS="$${SEEDS:-1 2 3 4 5}" STEPS="$${STEPS:-100}" \
		scripts/experiments/drmas-stability.sh

# The AT-GRPO role-split experiment on CPU: Plan-Path from one warm start,
# the plan agent alone vs tool + plan sharing a model vs each its own, then
# the trained roles swapped (scripts/experiments/atgrpo-roles.sh; SEEDS,
# STEPS, SFT_STEPS override; ~25 min); report in docs/atgrpo-roles/.
experiment-atgrpo-roles: all
	rm -rf runs/exp-atgrpo
	nice -n 5 bash scripts/experiments/atgrpo-roles.sh

# A math demo on CPU: Dr. MAS on place-value questions from a warm start
# that reads the asked place but slips to the next one about two times in
# three, over seeds (scripts/experiments/math-placevalue.sh; SEEDS, STEPS,
# SFT_STEPS, SLIP_STEPS, P_CORRECT override; ~25 min); report in
# docs/math-placevalue/.
experiment-math-placevalue: all
	rm -rf runs/exp-math
	nice -n 5 bash scripts/experiments/math-placevalue.sh

clean:
	rm -rf bin build
