# Each target creates .venv on first use and installs the package into it (editable, with the
# [test] and [backends] extras).
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed-stamp
CLI := $(VENV)/bin/keras-simplicial

# `make train`: the `easy` preset (BoxWorld on a 3 x 6 board, one key and the Gem, at most 30
# steps; see agents/training/impala.py) for 15 minutes on 2 CPU cores (about 8M steps of the relational
# agent with the batched sampler), then an evaluation of the last and the best checkpoint. The
# relational agent by default (docs/benchmarks.md: seed 1 passed 0.9 at 2.9M steps); override e.g.
# `make train AGENT=simplicial STOP_SECONDS=1800`.
AGENT ?= relational
STOP_SECONDS ?= 900
EVALUATE ?= 500

LEARNING_TIMESTEPS ?= 1500000

.PHONY: install test test-all train bench bench-learning bench-parity clean

install: $(STAMP)

$(STAMP): setup.py
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e ".[test,backends]"
	touch $(STAMP)

test: $(STAMP)
	$(VENV)/bin/ruff check .
	$(PY) -m pytest -m "not slow" tests

test-all: $(STAMP)
	$(VENV)/bin/ruff check .
	$(PY) -m pytest tests

train: $(STAMP)
	$(CLI) train --run IMPALA --preset easy --agent $(AGENT) --stop-seconds $(STOP_SECONDS) \
		--stop-timesteps 100000000 --evaluate $(EVALUATE)

bench: $(STAMP)
	$(PY) benchmarks/env_throughput.py
	$(PY) benchmarks/block_cost.py
	$(PY) benchmarks/attention_scaling.py
	$(PY) benchmarks/simplicial_saturation.py
	$(PY) benchmarks/train_throughput.py

# Both agents x 5 seeds on the `easy` preset, as docs/benchmarks.md records them: curves (mean, std,
# one line per seed) and greedy and sampled evaluations of every best and final checkpoint in
# benchmarks/runs/learning-easy/. Resumable: run it again to continue where it stopped.
bench-learning: $(STAMP)
	$(PY) benchmarks/learning_curve.py --agents relational simplicial --seeds 1 2 3 4 5 \
		--stop-timesteps $(LEARNING_TIMESTEPS) --out benchmarks/runs/learning-easy

# Learning per step of the previous and the new default sampler, same seeds (docs/benchmarks.md).
bench-parity: $(STAMP)
	$(PY) benchmarks/sampler_parity.py --seeds 1 2 3 --stop-timesteps 300000

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache
