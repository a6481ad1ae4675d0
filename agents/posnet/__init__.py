"""PosNet (arena paper, Appendix C): a convolutional net that turns a layout into a positional value table.

``network``: the net in numpy, the D4 symmetries, the agent and the shipped weights
(``data/posnet.npz``). ``kernel``: the numba games a generation plays. ``train``: survival-only
neuroevolution (paper Appendix B, :mod:`agents.evolution`) over many layouts.
"""
