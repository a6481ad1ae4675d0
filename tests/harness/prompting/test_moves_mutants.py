"""What the move parser and the asker left free (survivors of `make mutation MODULES=moves`).

The texts a model is re-asked with, the place a move was read from (``span``, recorded in
calls.jsonl), JSON objects after a brace that does not parse, and what an attempt records (the
messages sent, the finish reason, the ask callable's third element) are pinned here whole.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from harness.play.decisions import Attempt, FailureKind, ParsedMove, ParseFailure
from harness.prompting.moves import ModelCallFailed, MoveAsker, default_feedback, legal_list, parse_reply, verify
from tests.harness.prompting.moves_helpers import LAYOUT, OBS, PROMPT, decide, scripted

# ---------------------------------------------------------------- ModelCallFailed


def test_model_call_failed_text_is_the_kind_then_the_detail():
    bare = ModelCallFailed("timeout")
    assert (str(bare), bare.detail, bare.kind) == ("timeout", "", FailureKind.TIMEOUT)
    detailed = ModelCallFailed("api_error", "HTTP 503")
    assert (str(detailed), detailed.detail) == ("api_error: HTTP 503", "HTTP 503")


# ---------------------------------------------------------------- parse failures and verification


@pytest.mark.parametrize(
    ("text", "finish_reason", "failure"),
    [
        (
            "Let me compare b2 and",
            "length",
            ParseFailure(FailureKind.TRUNCATED, "the reply was cut off (length limit) before a move was given"),
        ),
        (" \n", None, ParseFailure(FailureKind.EMPTY_OR_REFUSAL, "the reply was empty")),
        ("I can't help with that.", None, ParseFailure(FailureKind.EMPTY_OR_REFUSAL, "the reply declined to give a move")),
        ("Let me think", None, ParseFailure(FailureKind.PARSE_ERROR, "no move found in the reply")),
    ],
)
def test_each_parse_failure_says_why_in_words(text, finish_reason, failure):
    assert parse_reply(text, LAYOUT, finish_reason) == failure


@pytest.mark.parametrize(
    ("text", "finish_reason", "kind"),
    [
        ("MOVE: d3X", None, FailureKind.PARSE_ERROR),  # a coordinate glued to a letter is no move, at a line's end too
        ("I play d3X", None, FailureKind.PARSE_ERROR),
        ("d3X", "length", FailureKind.TRUNCATED),  # the whole-reply check strips markdown and dots, not letters
    ],
)
def test_a_coordinate_followed_by_a_letter_is_not_read(text, finish_reason, kind):
    parsed = parse_reply(text, LAYOUT, finish_reason)
    assert isinstance(parsed, ParseFailure) and parsed.kind == kind


def test_verify_verdicts_and_reasons():
    assert verify(parse_reply("hmm", LAYOUT), OBS.legal_moves, LAYOUT) == (
        "unparsed",
        FailureKind.PARSE_ERROR,
        "no move found in the reply",
    )
    assert verify(parse_reply("z9", LAYOUT), OBS.legal_moves, LAYOUT) == (
        "illegal",
        FailureKind.ILLEGAL_MOVE,
        "Your move z9 is not on the board. Legal moves: e3, f4, c5, d6.",
    )


def test_an_empty_legal_list_reads_none():
    assert legal_list([], LAYOUT) == "none"


# ---------------------------------------------------------------- JSON: spans and broken braces


def test_an_escaped_json_move_is_placed_on_its_whole_object_not_on_earlier_prose():
    reply = 'I like d3. {"move": "\\u0064\\u0033"}'  # the value's text is not "d3", so the object is the place
    parsed = parse_reply(reply, LAYOUT)
    assert (parsed.notation, parsed.source) == ("d3", "json")
    assert parsed.span == (reply.index("{"), len(reply))


def test_the_json_span_is_the_value_inside_the_object():
    reply = '{"move": "d3"} then d3'
    parsed = parse_reply(reply, LAYOUT)
    assert parsed.source == "json" and parsed.span == (10, 12)
    assert parsed.candidates == (("d3", "bare", (20, 22)),)


def test_the_json_span_is_the_last_occurrence_inside_the_object():
    reply = '{"why": "d3 or e6", "move": "d3"}'
    parsed = parse_reply(reply, LAYOUT)
    assert parsed.span == (reply.rindex("d3"), reply.rindex("d3") + 2)


@pytest.mark.parametrize(
    "reply",
    [
        'a {b} {"move": "d3"} {"note": 1}\nMOVE: e6',  # a brace that does not parse; the next one does; a later object without a move
        '{{"move": "d3"}\nMOVE: e6',  # the next brace is the very next character
    ],
)
def test_json_after_a_brace_that_does_not_parse_is_still_found(reply):
    parsed = parse_reply(reply, LAYOUT)
    assert (parsed.notation, parsed.source) == ("d3", "json")


def test_an_object_without_a_move_key_is_no_candidate():
    parsed = parse_reply('{"note": "x"}\nMOVE: e6', LAYOUT)
    assert (parsed.notation, parsed.source) == ("e6", "final_line")


def test_every_object_is_read_in_order_and_the_last_move_wins():
    parsed = parse_reply('{"move": "d3"} {"move": "e6"} {"note": 1}', LAYOUT)
    assert (parsed.notation, parsed.source) == ("e6", "json")
    assert [(move, source) for move, source, _ in parsed.candidates] == [("d3", "json")]


def test_a_token_seen_by_two_later_stages_is_one_other_candidate():
    reply = '{"move": "e6"}\nMOVE: d3'  # the final-line and the bare stages both see d3, at one place
    parsed = parse_reply(reply, LAYOUT)
    assert parsed.notation == "e6"
    assert parsed.candidates == (("d3", "final_line", (21, 23)),)


# ---------------------------------------------------------------- re-ask messages


def test_the_feedback_texts_whole():
    ask = scripted("hmm", "a1", "z9", "c5")
    decision = decide(MoveAsker(ask, max_retries=3))
    assert ask.sent[1][-1]["content"] == (
        "I could not read a move from your reply (no move found in the reply). Legal moves: e3, f4, c5, d6. "
        "Reply with one legal move, e.g. MOVE: e3."
    )
    assert ask.sent[2][-1]["content"] == ("Your move a1 is not legal here. Legal moves: e3, f4, c5, d6. Reply with one legal move.")
    assert ask.sent[3][-1]["content"] == ("Your move z9 is not on the board. Legal moves: e3, f4, c5, d6. Reply with one legal move.")
    assert [a.verdict for a in decision.attempts] == ["unparsed", "illegal", "illegal", "legal"]


def test_default_feedback_for_an_unparsed_attempt_with_one_legal_move():
    obs = dataclasses.replace(OBS, legal_moves=OBS.legal_moves[:1])
    attempt = Attempt(
        (),
        "",
        "stop",
        ParseFailure(FailureKind.EMPTY_OR_REFUSAL, "the reply was empty"),
        "unparsed",
        FailureKind.EMPTY_OR_REFUSAL,
        "the reply was empty",
    )
    assert default_feedback(attempt, obs) == (
        "I could not read a move from your reply (the reply was empty). Legal moves: e3. Reply with one legal move, e.g. MOVE: e3."
    )


# ---------------------------------------------------------------- MoveAsker: configuration and records


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"max_retries": -1}, "max_retries=-1: give a whole number 0 or more"),
        ({"max_retries": True}, "max_retries=True: give a whole number 0 or more"),
        ({"free_call_failures": 1.5}, "free_call_failures=1.5: give a whole number 0 or more"),
    ],
)
def test_counts_must_be_whole_numbers(options, message):
    with pytest.raises(ValueError) as refused:
        MoveAsker(scripted(), **options)
    assert str(refused.value) == message


def test_random_policy_without_a_generator_says_how_to_give_one():
    with pytest.raises(TypeError) as refused:
        MoveAsker(scripted(), policy="random")
    assert str(refused.value) == "policy='random' needs a numpy Generator: MoveAsker(..., rng=np.random.default_rng(seed))"


def test_asking_with_no_legal_moves_is_refused_in_words():
    with pytest.raises(ValueError) as refused:
        decide(MoveAsker(scripted()), dataclasses.replace(OBS, legal_moves=()))
    assert str(refused.value) == "no legal moves: the game is over, there is nothing to ask"


def test_a_random_fallback_is_not_a_forfeit():
    decision = decide(MoveAsker(scripted("x"), max_retries=0, policy="random", rng=np.random.default_rng(1)))
    assert decision.forfeited is False and decision.fallback_used is True


def test_a_failed_call_records_the_messages_sent_and_its_reason():
    ask = scripted(ModelCallFailed("api_error", "HTTP 503"), ModelCallFailed("timeout"), "e3")
    first, second, _ = decide(MoveAsker(ask)).attempts
    assert (first.messages, first.verdict, first.reason) == (tuple(PROMPT), "call_failed", "HTTP 503")
    assert (second.messages, second.reason, second.failure_kind) == (tuple(PROMPT), "timeout", FailureKind.TIMEOUT)


def test_an_answered_attempt_records_the_messages_the_finish_reason_and_the_meta():
    usage = {"tokens_in": 12}
    attempt = decide(MoveAsker(scripted(("e3", "stop", usage)))).attempts[0]
    assert (attempt.messages, attempt.text, attempt.finish_reason, attempt.meta) == (tuple(PROMPT), "e3", "stop", usage)
    assert isinstance(attempt.parsed, ParsedMove) and attempt.verdict == "legal"
    plain = decide(MoveAsker(scripted(("e3", "length")))).attempts[0]
    assert (plain.finish_reason, plain.meta) == ("length", None)
