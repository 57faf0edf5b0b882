# Each target creates .venv on first use and installs the package into it (editable, with the
# [agents], [test], [backends] and [docs] extras: everything, and Triton beside it: TRITON_SITE),
# again when setup.py, pyproject.toml or this file changes.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed-stamp
CLI := $(VENV)/bin/keras-simplicial

# `make train`: the `easy` preset (BoxWorld on a 3 x 6 board, one key and the Gem, at most 30
# steps; see agents/training/presets.py) for 1M environment steps or 15 minutes, whichever comes
# first, then an evaluation of the last and the best checkpoint. The relational agent by default
# (`make train AGENT=simplicial` for the other); how long it takes and how well both agents learn
# the preset: docs/benchmarks.md.
AGENT ?= relational
TIMESTEPS ?= 1000000
STOP_SECONDS ?= 900
EVALUATE ?= 1000

LEARNING_TIMESTEPS ?= 600000
LEARNING_BUDGETS ?= 300000 500000

.PHONY: install test test-integration test-all docs train bench bench-learning bench-parity reproduce-small \
	simplicial-tasks simplicial-tasks-report sequence-tasks fault-injection clean

install: $(STAMP)

# Triton (the [triton] extra of setup.py, `fused="triton"`) goes into a folder of its own, off the
# virtual environment's path: a process that imports TensorFlow and then Triton aborts (their
# LLVM builds clash), so only the Triton kernels' test subprocesses put it on theirs
# (tests/layers/triton_site.py). Linux x86-64 only, as Triton's wheels; elsewhere those tests skip.
TRITON_SITE := $(VENV)/triton-site
TRITON ?= triton>=3.6,<4

$(STAMP): setup.py pyproject.toml Makefile
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e ".[agents,test,backends,docs]"
	if [ "$$(uname -s)-$$(uname -m)" = "Linux-x86_64" ]; then \
		$(PY) -m pip install --quiet --no-deps --upgrade --target $(TRITON_SITE) "$(TRITON)"; fi
	touch $(STAMP)

test: $(STAMP)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(MAKE) docs
	$(PY) -m pytest -m "not slow and not integration" tests

# The checks that start fresh interpreters (other Keras backends, Ray, scripts as processes): the
# default suite stays within the project's 12 minutes on every machine of ours; CI runs both.
test-integration: $(STAMP)
	$(PY) -m pytest -m "integration and not slow" tests

test-all: $(STAMP)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(MAKE) docs
	$(PY) -m pytest tests

# The documentation site (mkdocs.yml: the pages in docs/, the API reference from the docstrings,
# the command-line reference from the argument parser) into site/; open site/index.html. Strict:
# a broken link, reference or docstring fails the build (no --quiet: it drops the warnings that
# --strict counts). NO_MKDOCS_2_WARNING silences the theme's banner about its successor.
docs: $(STAMP)
	NO_MKDOCS_2_WARNING=1 $(VENV)/bin/mkdocs build --strict --site-dir site

train: $(STAMP)
	$(CLI) train --run IMPALA --preset easy --agent $(AGENT) --stop-seconds $(STOP_SECONDS) \
		--stop-timesteps $(TIMESTEPS) --evaluate $(EVALUATE)

bench: $(STAMP)
	$(PY) benchmarks/env_throughput.py
	$(PY) benchmarks/block_cost.py
	$(PY) benchmarks/attention_scaling.py
	$(PY) benchmarks/simplicial_saturation.py
	$(PY) benchmarks/train_throughput.py

# Both agents x 5 seeds on the `easy` preset, as docs/benchmarks.md records them: curves (mean, std,
# one line per seed) and greedy and sampled evaluations (1,000 episodes) of the best checkpoint
# within 300,000 and 500,000 steps and of every best and final checkpoint, in
# benchmarks/runs/learning-easy/. Hours on 2 cores; resumable: run it again to continue where it
# stopped. With the model the recorded runs trained (`pre-front-end`, the presets' model before
# the front end); `LEARNING_MODEL=front-end` gives the front end's (studies/trainability/defaults-plan.md).
LEARNING_MODEL ?= pre-front-end
bench-learning: $(STAMP)
	$(CLI) sweep --preset easy --agents relational simplicial --seeds 1 2 3 4 5 \
		--model-config $(LEARNING_MODEL) \
		--stop-timesteps $(LEARNING_TIMESTEPS) --budget $(LEARNING_BUDGETS) \
		--out benchmarks/runs/learning-easy --markdown benchmarks/runs/learning-easy/table.md

# Learning per step of the previous and the new default sampler, same seeds (studies/easy-recipe/README.md).
bench-parity: $(STAMP)
	$(PY) studies/easy-recipe/sampler_parity.py --seeds 1 2 3 --stop-timesteps 300000

# The paper's comparison at small scale: both agents x REPRODUCE_SEEDS on the `bridge-small`
# preset with the model its committed runs trained (`pre-front-end`, the presets' model before the
# front end), then studies/bridge-small-reproduction/README.md and studies/bridge-small-reproduction/figures/ from the run directories in
# benchmarks/results/bridge-small/ (`keras-simplicial reproduce` with the repository's paths, which
# the installed command does not default to; committed with the report).
# Hours on 2 cores; resumable: run it again to continue where it stopped.
# `REPRODUCE_FLAGS=--report-only` redraws without training, from the runs' cached evaluations and
# probes and their best policies exported as Keras weights (their checkpoints are not committed).
REPRODUCE_SEEDS ?= 1 2 3
REPRODUCE_TIMESTEPS ?= 3000000
reproduce-small: $(STAMP)
	$(CLI) reproduce --preset bridge-small --seeds $(REPRODUCE_SEEDS) --model-config pre-front-end \
		--stop-timesteps $(REPRODUCE_TIMESTEPS) --out benchmarks/results/bridge-small \
		--doc studies/bridge-small-reproduction/README.md --figures studies/bridge-small-reproduction/figures $(REPRODUCE_FLAGS)

# When 2-simplicial attention helps: every task x model x seed that
# studies/simplicial-attention-tasks/preregistration.md fixes (136 one-block trainings, one at a time,
# about 2.3 hours on 2 cores), one JSON per run in studies/simplicial-attention-tasks/results/, and
# the secondary that length-16-preregistration.md fixes (Match3 at length 16: 32 runs, about half an
# hour, into length-16/results/), then studies/simplicial-attention-tasks/README.md and its figures.
# Resumable: run it again to continue where it stopped. `make simplicial-tasks-report` redraws the
# page without training.
simplicial-tasks: $(STAMP)
	$(PY) studies/simplicial-attention-tasks/run.py
	$(PY) studies/simplicial-attention-tasks/run.py --tasks match3-16
	$(PY) studies/simplicial-attention-tasks/report.py

simplicial-tasks-report: $(STAMP)
	$(PY) studies/simplicial-attention-tasks/report.py

# 2-simplicial attention in a decoder, on tasks where order matters: every run the pre-registration
# (studies/sequence-tasks/preregistration.md) fixes, resumably, then its page.
sequence-tasks: $(STAMP)
	nice -n 19 $(PY) studies/sequence-tasks/run.py
	$(PY) studies/sequence-tasks/report.py

# Every file of a run damaged in every way, and every command that reads it (docs/benchmarks.md,
# "Reliability", with how long it takes); the counts go to benchmarks/results/fault-injection.json.
fault-injection: $(STAMP)
	FAULT_INJECTION_REPORT=benchmarks/results/fault-injection.json \
		$(PY) -m pytest -m slow tests/agents/training/test_fault_injection.py

clean:
	rm -rf $(VENV) build site *.egg-info .pytest_cache
