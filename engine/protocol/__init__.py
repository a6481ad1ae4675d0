"""The protocol types an agent sees: observations, policies, game records, the budgeted arena's interface, beliefs.

These sit in ``engine/`` so that ``agents/`` can know the protocol without importing
the harness that implements it (layers run engine <- agents <- harness <- cli).
Nothing here holds or computes the hidden threshold K: records carry terminal
rewards that a referee computed, and :class:`~engine.protocol.arena.AdaptationArena`
is only the interface of the harness's budgeted arena. May import: ``engine`` only.
"""
