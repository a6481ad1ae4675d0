"""The arena as an Inspect AI task (the optional extra ``pip install '.[inspect]'``): see :mod:`arena_inspect.task`.

This package imports Inspect and the harness; the harness, the agents and the engine never import it
(an import-linter contract in ``pyproject.toml``), so the core runs without Inspect installed.
"""
