"""Code-world-model agents: the model writes the game as code, checked against the agent's games, refined, planned on.

``world`` (JSON views of layouts, states and finished games for the CWM API),
``tests_from_games`` (unit tests from the agent's own transcripts, run in the
sandbox in batches), ``probe`` (the K interval a reward function implies),
``coder`` (``mock/coder``, an offline model that writes programs), ``refine``
(synthesis, conversation and REx tree-search refinement) and ``agent`` (the
``cwm`` agent). Generated code is never imported: it runs in
:mod:`harness.sandbox`. May import: ``engine``, ``agents``, ``harness.sandbox``,
``harness.play``, ``harness.models``, ``harness.prompting``.
"""
