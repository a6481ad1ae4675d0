"""A small AlphaZero-style agent (torch): a residual policy/value network guided by PUCT search.

``net``: the network, its input planes and the shipped weights (``data/az.pt``); ``search``: batched
PUCT over many games at once; ``train``: self-play rounds; ``agent``: the agent that plays with it.
Trained on the public rules only (the standard Othello outcome), never with a hidden condition.
"""
