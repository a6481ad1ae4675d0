"""Agents that pick moves from the engine alone: one subpackage per family, shared pieces beside them.

Shared by every family: :mod:`agents.base` (the agent interface and the move helpers
``forced_move``, ``placements``, ``choose``), :mod:`agents.spec` (how a family declares
its spec names) and :mod:`agents.evolution` (survival-only evolution and the
(mu + lambda) strategy, which PosNet, Adaptive Minimax and the n-tuple networks train with).

Families: :mod:`agents.heuristic` (Random, Greedy, Corner, Positional),
:mod:`agents.search` (alpha-beta Minimax, MCTS and the numba search kernels),
:mod:`agents.posnet`, :mod:`agents.adaptive_minimax`, :mod:`agents.ntuple`,
:mod:`agents.az`, :mod:`agents.interval` and :mod:`agents.reference`.
"""
