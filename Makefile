# Everything runs from the project's own virtual environment in .venv, installed from
# requirements.lock (exact pins) plus the project itself in editable mode.

PYTHON ?= python3.11
VENV   := .venv
STAMP  := $(VENV)/.installed

export LITELLM_LOCAL_MODEL_COST_MAP := True
export NUMBA_CACHE_DIR := $(CURDIR)/.numba_cache

.PHONY: venv numba-cache demo test bench clean

venv: $(STAMP)

$(STAMP): requirements.lock pyproject.toml
	test -x $(VENV)/bin/python || $(PYTHON) -m venv $(VENV)
	$(VENV)/bin/python -m pip install -r requirements.lock
	$(VENV)/bin/python -m pip install --no-deps -e .
	touch $(STAMP)

# numba's on-disk cache does not notice when a kernel that another module calls changes,
# so it is dropped whenever any numba source changes.
NUMBA_SOURCES := $(wildcard engine/*.py agents/search/*.py)
NUMBA_STAMP   := .numba_cache/.sources

$(NUMBA_STAMP): $(NUMBA_SOURCES)
	rm -rf .numba_cache
	mkdir -p .numba_cache
	touch $(NUMBA_STAMP)

numba-cache: $(NUMBA_STAMP)

demo: venv numba-cache
	$(VENV)/bin/arena demo

# lint-imports checks the layer contracts in pyproject.toml (engine <- agents <- harness <- cli, no cycles);
# ruff lints and mypy checks types (both configured in pyproject.toml: mypy is strict on engine/,
# harness/records/ and harness/models/).
test: venv numba-cache
	$(VENV)/bin/lint-imports
	$(VENV)/bin/ruff check .
	$(VENV)/bin/mypy
	$(VENV)/bin/python -m pytest -n 2

bench: venv numba-cache
	$(VENV)/bin/arena bench engine

clean:
	rm -rf $(VENV) .numba_cache .pytest_cache .hypothesis build dist *.egg-info
	find . -name __pycache__ -type d -prune -exec rm -rf {} +
