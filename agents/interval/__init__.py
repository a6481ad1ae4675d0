"""The interval agent: infer K from terminal rewards by keeping the feasible interval of K, and probe to halve it.

``belief``: the interval of K that every observed outcome allows, and the disc share worth probing
next; ``agent``: the adaptive agent that plays probe games within the budget, then searches with the
utility its interval implies. This project's own adaptive baseline (not from a paper).
"""
