"""Search: alpha-beta Minimax and MCTS-N (the arena paper's privileged baseline), and the numba kernels they share.

``minimax`` and ``mcts`` are the agents. ``api`` is the Python entry to the alpha-beta kernels
(``negamax``, ``endgame``, ``ttable``, ``features``, ``stability``, ``primitives``) that other
families search with (Adaptive Minimax, interval, the strategist); ``mcts_kernel`` is UCT with
random rollouts scored by a reward table (paper Appendix E). One module per algorithm.
"""
