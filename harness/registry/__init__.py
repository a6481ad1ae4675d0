"""The agent registry (``specs``): every agent a spec string can name, classical and model-driven.

May import: ``engine``, ``agents``, ``harness.play``, ``harness.models``, ``harness.prompting``.
"""
