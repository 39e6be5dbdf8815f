# `make main`: set up .venv, train an agent (`manni train`: the fast trainer) and evaluate it against the baselines.
# `make test`: set up .venv and run the test suite (it builds the documentation site too).
# `make docs`: build the documentation site into site/ (`mkdocs serve` shows it while you edit).
VENV ?= .venv
PY := $(VENV)/bin/python
PIP := $(PY) -m pip
TORCH ?= torch==2.13.0

.PHONY: setup main test bench docs

setup: $(VENV)/.installed

# what `make main` needs: the package with its train extra, on torch
$(VENV)/.installed-train: pyproject.toml
	python3 -m venv $(VENV)
	$(PIP) install -q --upgrade pip
	# keep a torch already in the venv (e.g. a CPU-only build you installed); else the pinned
	# release, else any torch the project accepts
	$(PY) -c "import torch" 2>/dev/null || $(PIP) install -q "$(TORCH)" || $(PIP) install -q "torch>=2.3"
	$(PIP) install -q -e ".[train]"
	touch $@

# everything: the tests, the docs, Ray, the web app, OpenSpiel
$(VENV)/.installed: $(VENV)/.installed-train
	$(PIP) install -q -e ".[train,dev,rllib,web,openspiel,docs]"
	touch $@

main: $(VENV)/.installed-train
	$(VENV)/bin/manni train

test: setup
	$(PY) -m pytest -n 2 -q

docs: setup
	$(VENV)/bin/mkdocs build --strict

bench: setup
	$(PIP) install -q -e ".[peers]"
	$(PY) benchmarks/bench_speed.py
