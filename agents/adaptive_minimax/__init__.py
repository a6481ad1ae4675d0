"""Adaptive Minimax (arena paper, section 4.3 and Appendix D): alpha-beta on a utility whose weights WeightNet sets.

WeightNet is evolved within the 2,000-game budget by survival-only selection (:mod:`agents.evolution`);
the search is :mod:`agents.search.api`. Everything is in ``agent``.
"""
