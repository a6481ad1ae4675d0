"""The one-ply heuristic baselines of the arena paper: Random, Greedy, Corner and Positional.

``simple``: Random, Greedy (most flips) and Corner. ``positional``: the weighted piece counter
with the Standard WPC Heuristic table (Yoshioka et al.) on plain 8x8 and a table derived from
any other layout; its cell tables (corners, C/X-cells, rings) are shared with the search features,
PosNet and the n-tuple networks.
"""
