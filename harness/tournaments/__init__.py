"""Frozen evaluation: matches, tournament plans and their runs over worker processes, results and statistics.

May import: ``engine``, ``agents``, and the parts below it (``play`` ... ``records``).
"""
