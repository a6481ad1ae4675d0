"""The installed distribution (othello-arena): its version, the data it reads at run time, the import names it owns.

- ``data``: the version, and where the prompt templates are (the package's copy in an installed wheel, the
  repository's ``prompts/`` in a clone).
- ``names``: whether another distribution, or a folder on ``sys.path``, also provides ``engine``, ``agents`` or
  ``harness``; ``import harness`` says so in one line on stderr, and the ``arena`` command stops when the names
  resolve to the other one.

The bottom part of the harness: imports only the standard library (``import harness`` runs ``names`` first).
"""
