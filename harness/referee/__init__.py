"""The referee: the condition (K), the budget ledger and privileged opponents in a process no agent runs in.

An agent under test runs in its own *agent process*, spawned with public
information only (the rules, the budget, its spec and seed). It plays each
adaptation game locally (the transition rules are public) and submits the moves:
one message per game. The referee, in the trusted process, re-plays them through
the engine, rejects an illegal or unfinished game, charges the ledger, and
answers with the terminal rewards. Evaluation games are played by the referee,
with the opponent on its side and a frozen copy of the agent answering move
requests. Messages are JSON (never pickle), so a message cannot run code in the
referee.

May import ``engine``, ``agents`` and the harness parts below ``runs``.
"""
