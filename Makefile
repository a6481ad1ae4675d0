# Everything runs from the project's own virtual environment in .venv, installed from
# requirements.lock (exact pins) plus the project itself in editable mode.

PYTHON ?= python3.11
VENV   := .venv
STAMP  := $(VENV)/.installed

export LITELLM_LOCAL_MODEL_COST_MAP := True
export NUMBA_CACHE_DIR := $(CURDIR)/.numba_cache

.PHONY: venv demo test bench clean

venv: $(STAMP)

$(STAMP): requirements.lock pyproject.toml
	test -x $(VENV)/bin/python || $(PYTHON) -m venv $(VENV)
	$(VENV)/bin/python -m pip install -r requirements.lock
	$(VENV)/bin/python -m pip install --no-deps -e .
	touch $(STAMP)

demo: venv
	$(VENV)/bin/arena demo

test: venv
	$(VENV)/bin/python -m pytest -n 2

bench: venv
	$(VENV)/bin/arena bench engine

clean:
	rm -rf $(VENV) .numba_cache .pytest_cache .hypothesis build dist *.egg-info
	find . -name __pycache__ -type d -prune -exec rm -rf {} +
