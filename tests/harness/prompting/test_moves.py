"""Model replies to verified moves: the tolerant parser, re-asking, fallback policies, failure counts, forfeits."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from engine import BLACK, PASS, WHITE
from engine.notation import format_move, parse_move
from engine.protocol.policy import RandomPolicy
from harness.play.decisions import FailureCounts, FailureKind, MoveDecision, ParsedMove, ParseFailure
from harness.play.game import IllegalProposalError, from_policy, play_game_sync
from harness.prompting.moves import ModelCallFailed, MoveAsker, parse_reply
from tests.harness.prompting.moves_helpers import ENV, LAYOUT, OBS, PROMPT, decide, scripted

LEGAL = [format_move(m, LAYOUT) for m in OBS.legal_moves]


@pytest.mark.parametrize(
    ("text", "notation", "source"),
    [
        ("d3", "d3", "bare"),
        ("D3", "d3", "bare"),
        ("  d3.  ", "d3", "bare"),
        ("I play D3", "d3", "bare"),
        ("pass", "pass", "bare"),
        ("PASS", "pass", "bare"),
        ("MOVE: d3", "d3", "final_line"),
        ("Final answer: D3", "d3", "final_line"),
        ("Answer - d3", "d3", "final_line"),
        ("**Move:** e6", "e6", "final_line"),
        ("Final answer: **F5**", "f5", "final_line"),
        ("The answer is c4.", "c4", "final_line"),
        ("'move': 'c4'", "c4", "final_line"),
        ('{"move": "d3"}', "d3", "json"),
        ('{"Move": " D3 "}', "d3", "json"),
        ('```json\n{"move": "F5", "reason": {"corner": false}}\n```', "f5", "json"),
        ('I considered several moves. My pick: {"move": "c4"} because it is safe.', "c4", "json"),
        # precedence: JSON beats a final-answer line beats bare coordinates
        ('MOVE: d3\n{"move": "e6"}\nalso c4', "e6", "json"),
        ('{"move": "d3"} ... actually {"move": "f5"}', "f5", "json"),
        ("c4 looks good\nMOVE: e6\nFinal answer: d3\nmaybe f5", "d3", "final_line"),
        ("c4 or e6?\nI will go with f5, not d3", "d3", "bare"),
        ('{"move": 19}\nMOVE: c4', "c4", "final_line"),  # a non-string JSON move is not a candidate
        ("z9", "z9", "bare"),
        ("MOVE: a12", "a12", "final_line"),
    ],
)
def test_parser_reads_many_reply_shapes(text, notation, source):
    parsed = parse_reply(text, LAYOUT)
    assert isinstance(parsed, ParsedMove), parsed
    assert (parsed.notation, parsed.source) == (notation, source)
    expected = None if notation in ("z9", "a12") else parse_move(notation, LAYOUT)
    assert parsed.move == expected
    assert parsed.on_board == (expected is not None)


@pytest.mark.parametrize(
    ("text", "finish_reason", "kind"),
    [
        ("", None, FailureKind.EMPTY_OR_REFUSAL),
        ("   \n ", "stop", FailureKind.EMPTY_OR_REFUSAL),
        (None, None, FailureKind.EMPTY_OR_REFUSAL),
        ("I can't help with that.", None, FailureKind.EMPTY_OR_REFUSAL),
        ("I cannot play games.", "stop", FailureKind.EMPTY_OR_REFUSAL),
        ("Sorry, I am unable to help.", None, FailureKind.EMPTY_OR_REFUSAL),
        ("Let me think about the position", None, FailureKind.PARSE_ERROR),
        ("I play d3.\n\nGood luck!", None, FailureKind.PARSE_ERROR),  # only the last non-empty line is read for bare moves
        ("Moves: ", None, FailureKind.PARSE_ERROR),
        ("Let me compare b2 and", "length", FailureKind.TRUNCATED),  # a cut-off last line is not an answer
        ("", "length", FailureKind.TRUNCATED),
    ],
)
def test_parser_failures_by_kind(text, finish_reason, kind):
    parsed = parse_reply(text, LAYOUT, finish_reason)
    assert isinstance(parsed, ParseFailure)
    assert parsed.kind is kind


def test_truncated_reply_still_counts_an_explicit_answer():
    assert parse_reply("MOVE: d3\nbecause it", LAYOUT, "length").notation == "d3"
    assert parse_reply("d3", LAYOUT, "length").notation == "d3"


# ---------------------------------------------------------------- MoveAsker


def test_legal_first_time():
    ask = scripted("MOVE: e3")
    decision = decide(MoveAsker(ask))
    assert decision == MoveDecision(parse_move("e3", LAYOUT), False, decision.attempts, False)
    assert len(decision.attempts) == 1 and decision.retries == 0
    assert decision.attempts[0].verdict == "legal" and decision.attempts[0].failure_kind is None
    assert decision.failure_counts == FailureCounts()
    assert ask.sent == [PROMPT]


def test_illegal_then_legal_reasks_with_the_reason_and_the_legal_moves():
    ask = scripted("MOVE: e9", "f4")
    decision = decide(MoveAsker(ask))
    assert decision.move == parse_move("f4", LAYOUT) and not decision.forfeited and not decision.fallback_used
    assert [a.verdict for a in decision.attempts] == ["illegal", "legal"]
    second = ask.sent[1]
    assert second[:1] == PROMPT
    assert second[1] == {"role": "assistant", "content": "MOVE: e9"}
    feedback = second[2]
    assert feedback["role"] == "user"
    assert "e9" in feedback["content"] and "not on the board" in feedback["content"]
    assert all(move in feedback["content"] for move in LEGAL)
    assert decision.failure_counts == FailureCounts(illegal_move=1)


def test_on_board_illegal_move_reason():
    ask = scripted("a1", "c5")
    decision = decide(MoveAsker(ask))
    assert "Your move a1 is not legal here. Legal moves: " + ", ".join(LEGAL) in ask.sent[1][2]["content"]
    assert decision.move == parse_move("c5", LAYOUT)


def test_parse_failures_exhaust_retries_then_forfeit():
    ask = scripted("hmm", "", ("still thinking about", "length"))
    decision = decide(MoveAsker(ask, max_retries=2, policy="forfeit"))
    assert decision.move is None and decision.forfeited and not decision.fallback_used
    assert len(ask.sent) == 3
    assert [a.failure_kind for a in decision.attempts] == [FailureKind.PARSE_ERROR, FailureKind.EMPTY_OR_REFUSAL, FailureKind.TRUNCATED]
    assert decision.failure_counts == FailureCounts(parse_error=1, empty_or_refusal=1, truncated=1, forfeits=1)
    # an empty reply adds no empty assistant message, only the feedback
    assert ask.sent[2][-2:] == [{"role": "user", "content": ask.sent[2][-2]["content"]}, ask.sent[2][-1]]
    assert ask.sent[2][-1]["role"] == "user" and ask.sent[2][-2]["role"] == "user"


def test_random_fallback_plays_a_legal_move_from_the_generator():
    moves = set()
    for seed in range(30):
        decision = decide(MoveAsker(scripted("no idea", "nope"), max_retries=1, policy="random", rng=np.random.default_rng(seed)))
        assert decision.fallback_used and not decision.forfeited and decision.move in OBS.legal_moves
        assert decision.failure_counts == FailureCounts(parse_error=2, fallbacks=1)
        moves.add(decision.move)
    assert moves == set(OBS.legal_moves)
    again = [decide(MoveAsker(scripted("x", "y"), max_retries=1, policy="random", rng=np.random.default_rng(7))).move for _ in range(2)]
    assert again[0] == again[1]


def test_zero_retries_means_one_call():
    ask = scripted("e9")
    assert decide(MoveAsker(ask, max_retries=0)).forfeited and len(ask.sent) == 1


def test_timeout_and_api_error_are_classified_and_retried_with_the_same_messages():
    ask = scripted(ModelCallFailed("timeout", "60 s"), ModelCallFailed(FailureKind.API_ERROR, "HTTP 500"), "d6")
    decision = decide(MoveAsker(ask))
    assert decision.move == parse_move("d6", LAYOUT)
    assert [a.verdict for a in decision.attempts] == ["call_failed", "call_failed", "legal"]
    assert decision.failure_counts == FailureCounts(timeout=1, api_error=1)
    assert ask.sent == [PROMPT, PROMPT, PROMPT]


def test_model_call_failed_accepts_only_call_kinds():
    with pytest.raises(ValueError, match="timeout or api_error"):
        ModelCallFailed(FailureKind.PARSE_ERROR)


def test_bad_configuration_is_refused():
    with pytest.raises(TypeError, match="numpy Generator"):
        MoveAsker(scripted(), policy="random")
    with pytest.raises(ValueError, match="forfeit, random"):
        MoveAsker(scripted(), policy="resign")
    with pytest.raises(ValueError, match="max_retries"):
        MoveAsker(scripted(), max_retries=-1)


def test_pass_is_legal_only_when_the_mover_must_pass():
    decision = decide(MoveAsker(scripted("pass", "pass", "pass")))
    assert decision.forfeited and decision.failure_counts.illegal_move == 3


REPLY = st.one_of(
    st.sampled_from(["d3", "c4", "f5", "e6", "a1", "h8", "z9", "pass", "", "I can't", "MOVE: e9", '{"move": "c4"}']),
    st.text(max_size=30),
    st.builds(lambda c, r: f"{c}{r}", st.sampled_from("abcdefghxyz"), st.integers(0, 12)),
)


@given(
    replies=st.lists(st.tuples(REPLY, st.sampled_from(["stop", "length"])), min_size=3, max_size=3),
    policy=st.sampled_from(["forfeit", "random"]),
    seed=st.integers(0, 2**32 - 1),
)
def test_never_plays_an_illegal_move(replies, policy, seed):
    decision = decide(MoveAsker(scripted(*replies), policy=policy, rng=np.random.default_rng(seed)))
    if decision.move is None:
        assert decision.forfeited and policy == "forfeit"
    else:
        assert decision.move in OBS.legal_moves
    counts = decision.failure_counts
    failed = [a for a in decision.attempts if a.verdict != "legal"]
    assert counts.total == len(failed)
    assert counts.forfeits + counts.fallbacks == (1 if len(failed) == 3 else 0)


def test_failure_counts_add_and_serialise():
    a = FailureCounts(parse_error=1, timeout=2, forfeits=1)
    b = FailureCounts(parse_error=3, illegal_move=1, fallbacks=2)
    total = a + b
    assert total == FailureCounts(parse_error=4, illegal_move=1, timeout=2, forfeits=1, fallbacks=2)
    assert total.total == 7 and total.of(FailureKind.TIMEOUT) == 2
    assert FailureCounts.model_validate_json(total.model_dump_json()) == total
    assert set(total.model_dump()) == {k.value for k in FailureKind} | {"forfeits", "fallbacks"}
    assert sum([a, b], FailureCounts()) == total


# ---------------------------------------------------------------- whole games


def test_game_with_verified_deciders_without_failures_matches_the_rules():
    rng_b, rng_w = np.random.default_rng(1), np.random.default_rng(2)
    game, decisions = play_game_sync(
        ENV.rules, ENV.condition, from_policy(RandomPolicy(rng_b)), from_policy(RandomPolicy(rng_w)), names=("a", "b")
    )
    record = game.record
    state = ENV.rules.initial_state()
    for move in record.moves:
        state = ENV.rules.play(state, move)
    assert ENV.rules.is_over(state) and game.forfeit is None and game.forfeit_by is None
    assert record.rewards == ENV.condition.rewards(record.black, record.white)
    assert len(decisions) == len(record.trajectory) == sum(1 for m in record.moves if m != PASS)
    assert game.failure_counts == FailureCounts()


def test_forfeit_ends_the_game_as_a_loss_for_the_forfeiting_colour():
    async def white_model(messages):
        return "I cannot help with games.", "stop"

    white = MoveAsker(white_model, max_retries=2, policy="forfeit")
    black = from_policy(RandomPolicy(np.random.default_rng(0)))
    game, decisions = play_game_sync(ENV.rules, ENV.condition, black, lambda obs: white.decide(obs, PROMPT), names=("random", "llm"))
    assert game.forfeit_by == WHITE and game.forfeit.ply == 1 and game.forfeit.kind is FailureKind.EMPTY_OR_REFUSAL
    assert game.record.rewards == (1, -1)
    assert game.record.moves == (decisions[0].decision.move,) and game.record.plies == 1
    assert (game.record.black, game.record.white) == (4, 1)  # counts as they stand after black's first move
    assert game.failures[WHITE] == FailureCounts(empty_or_refusal=3, forfeits=1)
    assert game.failures[BLACK] == FailureCounts()
    assert [d.colour for d in decisions] == [BLACK, WHITE]


def test_black_forfeit_at_the_first_ply():
    async def black_model(messages):
        return "e9", "stop"

    black = MoveAsker(black_model, max_retries=1)
    game, _ = play_game_sync(
        ENV.rules, ENV.condition, lambda obs: black.decide(obs, PROMPT), from_policy(RandomPolicy(np.random.default_rng(0)))
    )
    assert game.forfeit_by == BLACK and game.record.rewards == (-1, 1) and game.record.moves == ()
    assert (game.record.black, game.record.white) == (2, 2)


def test_a_decider_returning_an_illegal_move_is_stopped():
    with pytest.raises(IllegalProposalError):
        play_game_sync(
            ENV.rules, ENV.condition, lambda obs: MoveDecision(0, False, []), from_policy(RandomPolicy(np.random.default_rng(0)))
        )


def test_model_driven_self_play_with_random_fallback_never_plays_illegal_moves():
    rng = np.random.default_rng(3)

    async def model(messages):  # legal, illegal, garbage or a refusal, at random
        choice = rng.integers(4)
        if choice == 0:
            return "MOVE: z9", "stop"
        if choice == 1:
            return "", "length"
        if choice == 2:
            raise ModelCallFailed("timeout")
        return '{"move": "' + messages[0]["content"] + '"}', "stop"

    asker = MoveAsker(model, policy="random", rng=np.random.default_rng(4))

    async def decide_move(obs):
        legal = format_move(obs.legal_moves[0], obs.rules.layout)
        return await asker.decide(obs, [{"role": "user", "content": legal}])

    game, decisions = play_game_sync(ENV.rules, ENV.condition, decide_move, decide_move)
    state = ENV.rules.initial_state()
    for move in game.record.moves:
        state = ENV.rules.play(state, move)  # raises on an illegal move
    assert ENV.rules.is_over(state)
    total = game.failure_counts
    assert total.total == sum(len(d.decision.attempts) - (not d.decision.fallback_used) for d in decisions)
    assert total.fallbacks == sum(d.decision.fallback_used for d in decisions) > 0
