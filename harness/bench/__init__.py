"""Benchmarks (``arena bench``): engine speed, agent speed, harness overhead, and the paper's benchmark.

May import: ``engine``, ``agents``, and every part of the harness but ``cli``.
"""
