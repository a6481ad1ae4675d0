"""The reinforcement-learning faces of the arena: PettingZoo AEC, Gymnasium single-agent and batched vector environments.

Above :mod:`harness.play` (a budgeted environment counts its finished games through an
adaptation arena's ledger); PPO-2K trains through them. It may import ``engine``, ``agents``,
``harness.play`` and ``harness.sandbox`` (the parts below it).
"""
