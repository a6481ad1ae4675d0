"""Model-agent runs: ``arena run`` (adapt, evaluate, record), replay, rerun from the cache, and compare.

May import: ``engine``, ``agents``, and the parts below it (``play`` ... ``tournaments``).
"""
