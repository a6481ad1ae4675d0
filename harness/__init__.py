"""The evaluation harness: named parts, one folder each, importing only downwards.

From the bottom up (a part may import ``engine``, ``agents`` and the parts listed
before it, never one after it; checked by the import-linter contracts in
``pyproject.toml``):

- ``installation``: the version, the data read at run time, the import names this distribution owns.
- ``play``: the budgeted arena, privileged simulator grants, the one game loop.
- ``models``: the model client, response cache, error taxonomy, mock models.
- ``prompting``: prompt rendering, episode memory, beliefs, move parsing, the model-driven agents.
- ``registry``: every agent a spec string can name, classical and model-driven.
- ``records``: transcript records (manifest, games, calls), writer and reader, provenance.
- ``tournaments``: matches, tournament plans and runs, results and statistics.
- ``runs``: ``arena run`` for model agents, replay, rerun and compare of run directories.
- ``bench``: ``arena bench`` (engine, agents, harness) and the paper's benchmark.
- ``testing``: the public testing API and pytest plugin: scripted model, stub server, run helper.
- ``cli``: the ``arena`` command, one module per subcommand.

Importing it first checks that ``engine``, ``agents`` and ``harness`` are this distribution's (one line on stderr
when another package provides one of them too: :mod:`harness.installation.names`).
"""

from harness.installation.names import checked as _check_import_names

_check_import_names()
