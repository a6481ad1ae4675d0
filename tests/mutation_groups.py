"""The mutation groups of `make mutation` (tests/mutation_run.py runs them; docs/testing.md lists them).

Each group names the modules it mutates, the tests that may kill their mutants and whether numba's JIT is off.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Group:
    """Modules mutated together, the tests that may kill their mutants and the JIT switch."""

    name: str
    modules: tuple[str, ...]
    tests: tuple[str, ...]
    jit_off: bool = False


# The hand-computed engine tests (positions, passes, word boundaries, replay), not the perft or the
# reference comparison: with the JIT off and a trampoline on every kernel call those take many minutes.
ENGINE_TESTS = (
    "tests/engine/test_kernel_edges.py",
    "tests/engine/test_rules.py",
    "tests/engine/test_playout_passes.py",
    "tests/engine/test_replay.py",
)

# The kernels and bits groups (JIT off: every kernel runs as Python, each call through mutmut's trampoline): the
# hand-computed kernel tests, not test_playout_passes (21,000 playouts) nor test_replay's random games (each a
# minute or more there); test_kernels_mutants.py checks the same kernels against the reference in seconds.
KERNEL_TESTS = (
    "tests/engine/test_kernels_mutants.py",
    "tests/engine/test_kernels_playouts_mutants.py",
    "tests/engine/test_kernel_edges.py",
    "tests/engine/test_rules.py",
    "tests/engine/test_replay.py::test_a_missing_last_move_and_a_move_after_the_end_are_refused",
    "tests/engine/test_replay.py::test_replay_refuses_moves_that_are_not_ints",
)

# The model layer's unit tests; not the stub-server fault runs (test_stub_faults.py: whole runs, 33 s of the
# 45 s each classification mutant would otherwise cost when it survives).
MODEL_TESTS = (
    "tests/harness/models/test_errors.py",
    "tests/harness/models/test_errors_mutants.py",
    "tests/harness/models/test_fail_fast.py",
    "tests/harness/models/test_model_client.py",
    "tests/harness/models/test_model_options.py",
    "tests/harness/models/test_mock_model.py",
)

GROUPS: tuple[Group, ...] = (
    Group(
        "interval_belief", ("agents/interval/belief.py",), ("tests/agents/test_interval.py", "tests/agents/test_interval_belief_mutants.py")
    ),
    Group(
        "rules",
        ("engine/rules.py", "engine/condition.py"),
        (*ENGINE_TESTS, "tests/engine/test_rules_mutants.py", "tests/engine/test_rules_grid_mutants.py"),
    ),
    Group("kernels", ("engine/kernels.py",), KERNEL_TESTS, jit_off=True),
    Group("bits", ("engine/bits.py",), ("tests/engine/test_bits.py", "tests/engine/test_bits_mutants.py", *KERNEL_TESTS), jit_off=True),
    # Not the test that lists the public attributes of EvaluationGrants: mutmut's mutant methods are attributes too.
    Group(
        "play",
        ("harness/play/game.py", "harness/play/grants.py", "harness/play/decisions.py"),
        (
            "tests/harness/play",
            "--deselect",
            "tests/harness/play/test_privileged_grants.py::test_evaluation_grants_do_not_show_the_condition",
        ),
    ),
    # The records' critical path: transcripts (writer, reader, resume), the hash chain, the integrity checks, the
    # commitment, the entries. Not interrupts.py, lock.py (its functions are decorated: no mutants) or provenance.py;
    # not the writer-lock test (a subprocess holder: 40 s for every mutant of the writer that survives the others).
    Group(
        "records",
        (
            "harness/records/transcript.py",
            "harness/records/chain.py",
            "harness/records/integrity.py",
            "harness/records/commitment.py",
            "harness/records/entries.py",
        ),
        (
            "tests/harness/records/test_transcript.py",
            "tests/harness/records/test_chain.py",
            "tests/harness/records/test_commitment.py",
            "tests/harness/records/test_transcript_mutants.py",
            "tests/harness/records/test_chain_mutants.py",
            "tests/harness/records/test_integrity_mutants.py",
            "tests/harness/records/test_entries_mutants.py",
        ),
    ),
    # Replay and rerun: the fast tests on a tiny in-process run and hand-written directories (about 5 s together), not
    # test_replay_records / test_replay_run / test_commitment_run (whole runs, several 20-85 s tests: hours for the group).
    Group(
        "replay",
        ("harness/runs/replay.py", "harness/runs/rerun.py"),
        (
            "tests/harness/runs/test_replay_mutants.py",
            "tests/harness/runs/test_replay_run_mutants.py",
            "tests/harness/runs/test_rerun_mutants.py",
        ),
    ),
    Group(
        "moves",
        ("harness/prompting/moves.py",),
        (
            "tests/harness/prompting/test_moves.py",
            "tests/harness/prompting/test_parse_spans.py",
            "tests/harness/prompting/test_moves_call_failures.py",
            "tests/harness/prompting/test_moves_mutants.py",
        ),
    ),
    Group("errors", ("harness/models/errors.py",), (*MODEL_TESTS, "tests/harness/models/test_errors_more_mutants.py")),
    Group(
        "client",
        ("harness/models/client.py",),
        (
            *MODEL_TESTS,
            "tests/harness/models/test_client_mutants.py",
            "tests/harness/models/test_client_failures_mutants.py",
            "tests/harness/models/test_client_setup_mutants.py",
            "tests/harness/models/test_client_more_mutants.py",
        ),
    ),
    # The search's Python parts (the roots in api.py, the endgame utilities, the layout features, the table's bookkeeping);
    # with the JIT on its @njit kernels are not mutated: negamax.py and mcts_kernel.py are, with the JIT off, in their own group.
    Group(
        "search",
        ("agents/search/api.py", "agents/search/endgame.py", "agents/search/features.py", "agents/search/ttable.py"),
        (
            "tests/agents/test_minimax.py",
            "tests/agents/test_endgame.py",
            "tests/agents/test_mcts.py",
            "tests/agents/test_search_features.py",
            "tests/agents/test_adaptive_minimax.py",
            "tests/agents/test_search_api_mutants.py",
            "tests/agents/test_endgame_mutants.py",
            "tests/agents/test_search_features_mutants.py",
            "tests/agents/test_ttable_mutants.py",
        ),
    ),
    # The alpha-beta and MCTS kernels with the JIT off (their @njit functions mutated): the fast tests against a plain
    # minimax over Rules and the Python UCT of test_mcts.py (docs/mutation_search_kernels.md has the figures).
    Group(
        "search_kernels",
        ("agents/search/negamax.py", "agents/search/mcts_kernel.py"),
        ("tests/agents/test_search_kernels_mutants.py", "tests/agents/test_mcts_kernel_mutants.py", "tests/agents/test_negamax_mutants.py"),
        jit_off=True,
    ),
)
GROUP_BY_NAME = {group.name: group for group in GROUPS}
