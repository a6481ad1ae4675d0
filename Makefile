# Everything runs from the project's own virtual environment in .venv, installed from
# requirements.lock (exact pins) plus the project itself in editable mode.

PYTHON ?= python3.11
VENV   := .venv
STAMP  := $(VENV)/.installed

export LITELLM_LOCAL_MODEL_COST_MAP := True
export NUMBA_CACHE_DIR := $(CURDIR)/.numba_cache

.PHONY: venv numba-cache sandbox-tools browser-tools demo docs test coverage coverage-floor mutation bench clean

venv: $(STAMP)

$(STAMP): requirements.lock pyproject.toml
	test -x $(VENV)/bin/python || $(PYTHON) -m venv $(VENV)
	$(VENV)/bin/python -m pip install -r requirements.lock
	$(VENV)/bin/python -m pip install --no-deps -e .
	touch $(STAMP)

# Generated code (code-world-model agents) runs only under bubblewrap (docs/sandbox.md): installed here when it
# is missing and we are root; otherwise say how. Without it the sandbox tests skip and generated code is refused.
sandbox-tools:
	@command -v bwrap >/dev/null 2>&1 || { if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
		apt-get install -y -q bubblewrap >/dev/null 2>&1 || { apt-get update -q >/dev/null 2>&1 && apt-get install -y -q bubblewrap >/dev/null 2>&1; } \
		|| echo "note: could not install bubblewrap (apt-get install -y bubblewrap); sandbox tests will skip"; \
	else echo "note: bubblewrap is missing: sudo apt-get install -y bubblewrap (generated code runs only sandboxed, or with --unsandboxed)"; fi; }

# The viewer's tests (tests/harness/view) and `arena bench view` drive Debian's headless chromium over the DevTools
# protocol: installed here when it is missing and we are root; otherwise say how. Without it those tests skip.
browser-tools:
	@command -v chromium >/dev/null 2>&1 || { if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
		apt-get install -y -q chromium >/dev/null 2>&1 || { apt-get update -q >/dev/null 2>&1 && apt-get install -y -q chromium >/dev/null 2>&1; } \
		|| echo "note: could not install chromium (apt-get install -y chromium); the viewer's browser tests will skip"; \
	else echo "note: chromium is missing: sudo apt-get install -y chromium (the viewer's browser tests skip without it)"; fi; }

# numba's on-disk cache does not notice when a kernel that another module calls changes (agents/ntuple/
# negamax.py calls agents/ntuple/kernel.py's), so it is dropped whenever any numba source changes.
NUMBA_SOURCES := $(wildcard engine/*.py agents/search/*.py agents/*/kernel.py agents/*/negamax.py)
NUMBA_STAMP   := .numba_cache/.sources

$(NUMBA_STAMP): $(NUMBA_SOURCES)
	rm -rf .numba_cache
	mkdir -p .numba_cache
	touch $(NUMBA_STAMP)

numba-cache: $(NUMBA_STAMP)

demo: venv numba-cache sandbox-tools
	$(VENV)/bin/arena demo

# The documentation site (mkdocs.yml, docs/) into site/, offline; `make test` builds it with --strict (a broken link,
# a page missing from the navigation or a missing anchor fails). The CLI reference and the file formats' schemas are
# generated while it builds (docs/hooks/).
MKDOCS := NO_MKDOCS_2_WARNING=1 $(VENV)/bin/mkdocs build --site-dir site
docs: venv
	$(MKDOCS)

# lint-imports checks the layer contracts in pyproject.toml (engine <- agents <- harness <- cli, no cycles);
# ruff lints, `ruff format --check` fails on unformatted code (run `ruff format .`), and mypy checks types (both configured in pyproject.toml: mypy is strict on engine/,
# harness/records/ and harness/models/).
# The suite runs in two parts, every test once. First the engine's and the agents' tests: they compile the numba
# kernels into .numba_cache (empty on a fresh clone: about two minutes of compiling), with mypy beside them on the
# second core. Then the rest, whose worker and `arena` processes find the kernels compiled instead of each compiling
# them again, on three workers: these tests spend much of their time waiting on the processes, servers and timeouts
# they test, so a third worker fills the two cores (measured: 1.26 -> 1.47 cores busy on tests/harness/runs and cli).
# Tests marked `long` start first in each part (tests/conftest.py).
KERNELS_FIRST := tests/engine tests/agents
test: venv numba-cache sandbox-tools browser-tools
	$(VENV)/bin/lint-imports
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(MKDOCS) --strict
	@types=$$(mktemp); ($(VENV)/bin/mypy > $$types 2>&1) & mypy=$$!; \
	echo "$(VENV)/bin/mypy (beside the first part)"; \
	echo "$(VENV)/bin/python -m pytest -n 2 $(KERNELS_FIRST)"; \
	$(VENV)/bin/python -m pytest -n 2 $(KERNELS_FIRST); tests=$$?; \
	wait $$mypy; typed=$$?; cat $$types; rm -f $$types; \
	test $$tests = 0 && test $$typed = 0
	$(VENV)/bin/python -m pytest -n 3 $(addprefix --ignore=,$(KERNELS_FIRST))
	$(MAKE) --no-print-directory coverage-floor

# The kernel tests with numba's JIT off (the kernels run as Python, so their lines are traced): the hand-computed
# positions and the comparisons with the pure-Python reference written for the kernels' mutants (about 10 s; the
# playout-distribution, perft and random-game tests stay in the suite, with the JIT on).
KERNEL_TESTS := tests/engine/test_bits.py tests/engine/test_bits_mutants.py tests/engine/test_kernels_mutants.py \
	tests/engine/test_kernels_playouts_mutants.py tests/engine/test_kernel_edges.py tests/engine/test_rules.py \
	"tests/engine/test_replay.py::test_a_missing_last_move_and_a_move_after_the_end_are_refused" \
	"tests/engine/test_replay.py::test_replay_refuses_moves_that_are_not_ints"
JIT_OFF := NUMBA_DISABLE_JIT=1 $(VENV)/bin/coverage run -m pytest -q -p no:cacheprovider -W "ignore:overflow encountered:RuntimeWarning"
# The other critical modules' targeted tests (most written to kill their mutants), once with the JIT on: about 30 s.
FLOOR_TESTS := tests/engine/test_rules_mutants.py tests/engine/test_rules_grid_mutants.py tests/agents/test_interval.py tests/agents/test_interval_belief_mutants.py tests/agents/test_search_api_mutants.py \
	tests/agents/test_endgame_mutants.py tests/agents/test_search_kernels_mutants.py tests/harness/play \
	tests/harness/records/test_transcript.py tests/harness/records/test_chain.py tests/harness/records/test_commitment.py \
	tests/harness/records/test_transcript_mutants.py tests/harness/records/test_chain_mutants.py \
	tests/harness/records/test_integrity_mutants.py tests/harness/records/test_entries_mutants.py \
	tests/harness/records/test_provenance_coverage.py tests/harness/runs/test_replay_mutants.py \
	tests/harness/runs/test_replay_run_mutants.py tests/harness/runs/test_rerun_mutants.py tests/harness/prompting/test_moves.py \
	tests/harness/prompting/test_parse_spans.py tests/harness/prompting/test_moves_mutants.py tests/harness/models/test_errors.py \
	tests/harness/models/test_errors_mutants.py tests/harness/models/test_errors_more_mutants.py \
	tests/harness/models/test_model_client.py tests/harness/models/test_client_mutants.py \
	tests/harness/models/test_client_failures_mutants.py tests/harness/models/test_client_setup_mutants.py \
	tests/harness/models/test_client_more_mutants.py

# The floor `make test` enforces: lines >= 95% and branches >= 90% of every critical module (tests/coverage_floor.py's
# CRITICAL: the rules, condition, kernels and bits from the JIT-off kernel run; the ledger, game loop, records, replay
# and rerun, move parsing, model errors and client, the search roots and the interval belief from FLOOR_TESTS).
coverage-floor: venv
	rm -rf .coverage .coverage.*
	$(JIT_OFF) $(KERNEL_TESTS)
	$(VENV)/bin/coverage run -m pytest -q -p no:cacheprovider -p no:xdist $(FLOOR_TESTS)
	$(VENV)/bin/coverage combine -q
	$(VENV)/bin/coverage json -q -o .coverage.json
	$(VENV)/bin/python tests/coverage_floor.py .coverage.json --floor

# The whole suite under coverage (branches on, xdist workers and subprocesses included), plus the
# kernel tests once more with the JIT off; per-module figures of the critical modules (issue 20).
coverage: venv numba-cache
	rm -rf .coverage .coverage.*
	-$(VENV)/bin/coverage run -m pytest -n 2 -q -p no:cacheprovider
	$(JIT_OFF) $(KERNEL_TESTS)
	$(VENV)/bin/coverage combine -q
	$(VENV)/bin/coverage json -q -o .coverage.json
	$(VENV)/bin/coverage report --include="engine/*,harness/records/*,harness/runs/replay.py,harness/runs/rerun.py,harness/play/game.py,harness/prompting/moves.py,harness/models/errors.py,harness/models/client.py,agents/search/*,agents/interval/belief.py"
	$(VENV)/bin/python tests/coverage_floor.py .coverage.json

# Mutation testing (docs/testing.md): mutmut (pinned in requirements.lock) on the critical modules, group by group
# (tests/mutation_groups.py: each group's modules, the tests that may kill them, the JIT switch; tests/mutation_run.py
# runs them), two groups at once with 2 workers each; each mutant runs only the tests that reached the mutated function.
# MODULES picks groups (default all): interval_belief rules kernels bits play records replay moves errors client search.
# `make mutation MODULES=moves`. Incremental: only mutants of functions changed since the group's last run are tested;
# FULL=1 tests them all.
MODULES ?=
FULL ?=
mutation: venv
	nice -n 15 $(VENV)/bin/python tests/mutation_run.py --max-children 2 $(if $(FULL),--fresh) $(MODULES)

bench: venv numba-cache
	$(VENV)/bin/arena bench engine

clean:
	rm -rf $(VENV) .numba_cache .pytest_cache .hypothesis .mypy_cache .coverage .coverage.* htmlcov mutants build dist site *.egg-info
	find . -name __pycache__ -type d -prune -exec rm -rf {} +
