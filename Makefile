# `make main`: set up .venv, train a small agent and evaluate it against the baselines.
# `make test`: set up .venv and run the test suite.
VENV ?= .venv
PY := $(VENV)/bin/python
PIP := $(PY) -m pip

.PHONY: setup main test bench

setup: $(VENV)/.installed

$(VENV)/.installed: pyproject.toml
	python3 -m venv $(VENV)
	$(PIP) install -q --upgrade pip
	# a pinned CPU-friendly torch first; any torch the project range accepts otherwise
	$(PIP) install -q "torch==2.13.0" || $(PIP) install -q "torch>=2.3"
	$(PIP) install -q -e ".[train,dev,rllib,fast]"
	touch $@

main: setup
	$(VENV)/bin/manni train

test: setup
	$(PY) -m pytest -n 2 -q

bench: setup
	$(PIP) install -q -e ".[peers]"
	$(PY) benchmarks/bench_speed.py
