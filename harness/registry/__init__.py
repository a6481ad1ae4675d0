"""The agent registry (``specs``): every agent a spec string can name, classical and model-driven, and the
users' own agents from outside the project (``plugins``: ``--plugin`` files and modules, installed entry
points; ``importing`` imports them).

May import: ``engine``, ``agents``, ``harness.play``, ``harness.models``, ``harness.prompting``, ``harness.cwm``.
"""
