# Each target creates .venv on first use and installs the package into it (editable, with the
# [test] and [backends] extras).
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed-stamp
CLI := $(VENV)/bin/keras-simplicial

# `make train` defaults: an easy bridge BoxWorld (solution length 1) that shows learning on 2 CPU
# cores in about 15 minutes; override e.g. `make train AGENT=relational STOP_TIMESTEPS=2000000`.
AGENT ?= simplicial
ENV ?= BridgeBoxWorld-v0
ENV_CONFIG ?= {"min_solution_length": 1, "max_solution_length": 1}
STOP_TIMESTEPS ?= 1500000
OUT ?= runs/make-train-$(AGENT)

.PHONY: install test test-all train bench clean

install: $(STAMP)

$(STAMP): setup.py
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e ".[test,backends]"
	touch $(STAMP)

test: $(STAMP)
	$(PY) -m pytest -m "not slow" tests

test-all: $(STAMP)
	$(PY) -m pytest tests

train: $(STAMP)
	$(CLI) train --run IMPALA --env $(ENV) --agent $(AGENT) \
		--env-config '$(ENV_CONFIG)' --stop-timesteps $(STOP_TIMESTEPS) --out $(OUT) --evaluate 200

bench: $(STAMP)
	$(PY) benchmarks/env_throughput.py
	$(PY) benchmarks/block_cost.py
	$(PY) benchmarks/attention_scaling.py
	$(PY) benchmarks/train_throughput.py

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache
