"""Systematic n-tuple networks (Jaskowski 2014, "Systematic n-tuple networks for Othello position evaluation").

``network``: the network on any layout (symmetric tuples, shipped weights per layout under ``data/``);
``kernel``: numba evaluation, play and TD(0) training; ``negamax``: alpha-beta with the network at the
leaves; ``nes``: a natural evolution strategy on the League score; ``train``: the training loops
(TD, (mu + lambda), NES); ``agent``: the 1-ply and alpha-beta agents.
"""
