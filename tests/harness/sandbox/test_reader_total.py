"""The host's reader is total: whatever bytes a worker sends, a call answers a value of its declared type or a failure.

Two halves. The properties drive ``SandboxWorker.call``, ``call_many`` and ``plan``
over a fake worker (a pipe the test writes the reply into: arbitrary bytes, arbitrary
payloads in a well-formed frame, arbitrary and hostile JSON in a well-formed reply) and
check every result against an oracle of the declared types (``reader_oracle``, written
apart from ``harness.sandbox.answers``). The sandboxed tests run real workers whose
programs return hostile values through the worker's encoder, or write their own frames
on the reply descriptor (found in the worker's memory, the current request's id read
from its stack), without the guard, as a program that got past it would.
"""

from __future__ import annotations

import dataclasses
import json
import os
import time
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from reader_oracle import (
    FAKE_LIMITS,
    HOSTILE_JSON,
    KINDS,
    METHODS,
    PLANNERS,
    PROPERTY,
    VALUE_DEPTH,
    ask,
    assert_declared,
    attach,
    deep,
    frame,
    ok_reply,
    plan_fields,
)
from sandbox_limits import TEST_LIMITS

from harness.sandbox import answers
from harness.sandbox.client import SandboxWorker
from harness.sandbox.failures import FailureKind

# -- properties -------------------------------------------------------------------------------------------------------


@PROPERTY
@given(kind=KINDS, data=st.binary(max_size=300))
def test_any_bytes_as_the_reply_are_a_value_or_a_classified_failure(kind, data):
    worker = attach(lambda request: data)
    assert_declared(kind, ask(worker, kind))


@PROPERTY
@given(kind=KINDS, payload=st.binary(max_size=300), tail=st.binary(max_size=20))
def test_any_payload_in_a_well_formed_frame_is_a_value_or_a_classified_failure(kind, payload, tail):
    worker = attach(lambda request: frame(request["id"], payload) + tail)
    assert_declared(kind, ask(worker, kind))


@PROPERTY
@given(kind=KINDS, text=HOSTILE_JSON)
def test_any_json_answer_is_a_value_of_the_declared_type_or_a_classified_failure(kind, text):
    worker = attach(lambda request: frame(request["id"], ok_reply(text)))
    assert_declared(kind, ask(worker, kind))


@PROPERTY
@given(kind=KINDS, text=HOSTILE_JSON)
def test_any_json_envelope_is_a_value_or_a_classified_failure(kind, text):
    worker = attach(lambda request: frame(request["id"], text.encode("utf-8", "surrogatepass")))
    assert_declared(kind, ask(worker, kind))


@PROPERTY
@given(data=st.data(), name=st.sampled_from(PLANNERS))
def test_planner_answers_near_the_declared_shape(data, name):
    text = data.draw(plan_fields(name))
    worker = attach(lambda request: frame(request["id"], ok_reply(text)))
    assert_declared(f"plan:{name}", ask(worker, f"plan:{name}"))


@PROPERTY
@given(answers_=st.lists(st.tuples(st.sampled_from(METHODS), HOSTILE_JSON), min_size=1, max_size=4), extra=st.integers(-1, 1))
def test_call_many_answers_each_of_its_declared_type_or_a_classified_failure(answers_, extra):
    body = ",".join(ok_reply(text).decode("utf-8", "surrogatepass") for _, text in answers_[: max(0, len(answers_) + extra)])
    payload = ('{"results":[' + body + "]}").encode("utf-8", "surrogatepass")
    worker = attach(lambda request: frame(request["id"], payload))
    results = worker.call_many([(method, [{"n": 0}]) for method, _ in answers_])
    assert isinstance(results, list) and len(results) == len(answers_)
    for (method, _), result in zip(answers_, results):
        assert_declared(method, result)


BOUNDED_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(-(10**63), 10**63) | st.floats(allow_nan=False, allow_infinity=False) | st.text(),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4),
    max_leaves=20,
)


@PROPERTY
@given(value=BOUNDED_VALUES, ascii_only=st.booleans())
def test_every_bounded_value_is_read_back_as_itself(value, ascii_only):
    """No false alarm: strings holding brackets, quotes, escapes and digits, any bounded number, come back unchanged."""
    payload = json.dumps({"ok": True, "value": value}, ensure_ascii=ascii_only).encode()
    worker = attach(lambda request: frame(request["id"], payload))
    assert worker.call("apply_action", [{}, 0]).value == value


@pytest.mark.parametrize(
    "value",
    [[["x"]] * 100, ['[[{"\\'] * 100, [[]] * 100 + ["]" * 100], ["]]]]" * 30, [[[[[0]]]]] * 30], {"9" * 100: "1" * 100}],
    ids=["many-flat-lists", "brackets-and-escapes-in-strings", "closers-in-a-string", "mixed", "digits-in-strings"],
)
def test_brackets_and_digits_inside_strings_are_not_counted(value):
    payload = json.dumps({"ok": True, "value": value}).encode()
    worker = attach(lambda request: frame(request["id"], payload))
    assert worker.call("apply_action", [{}, 0]).value == value


@pytest.mark.parametrize(
    "text",
    ["9" * 5000, deep(100_000), "[NaN,0]", "[1e999,0]", "[-Infinity,0]", '"\\ud800"', deep(VALUE_DEPTH + 1)],
    ids=["huge-int", "deep", "nan", "overflow", "infinity", "lone-surrogate", "one-too-deep"],
)
def test_each_hostile_answer_is_bad_output_and_stops_the_worker(text):
    worker = attach(lambda request: frame(request["id"], ok_reply(text)))
    result = worker.call("initial_state", [None])
    assert result.failure is not None and result.failure.kind is FailureKind.BAD_OUTPUT
    assert worker._process is None  # out of bounds: only a forged frame carries it, so the worker is stopped


def test_a_value_at_the_depth_bound_is_accepted():
    text = deep(VALUE_DEPTH)
    worker = attach(lambda request: frame(request["id"], ok_reply(text)))
    assert worker.call("initial_state", [None]).value == json.loads(text)


@pytest.mark.parametrize(
    ("kind", "text"),
    [
        ("legal_actions", "5"),
        ("legal_actions", "[true,1]"),
        ("legal_actions", "[1.0]"),
        ("legal_actions", str([10**30])),
        ("current_player", "2"),
        ("current_player", "true"),
        ("is_terminal", "1"),
        ("returns", "[2,-1]"),
        ("returns", "[1,-1,0]"),
        ("value", '["x",1]'),
        ("plan:mcts", "5"),
        ("plan:minimax", '{"action":[1]}'),
        ("plan:returns_table", '{"returns":[[1]]}'),
    ],
)
def test_a_well_formed_answer_of_the_wrong_type_is_bad_output_and_the_worker_stays(kind, text):
    worker = attach(lambda request: frame(request["id"], ok_reply(text)))
    result = ask(worker, kind)
    assert result.failure is not None and result.failure.kind is FailureKind.BAD_OUTPUT
    assert worker.failures["bad_output"] == 1


# -- frames -------------------------------------------------------------------------------------------------------


def test_a_frame_for_another_request_is_bad_output():
    worker = attach(lambda request: frame(request["id"] + 1, ok_reply("[1,2]")))
    result = worker.call("legal_actions", [{}])
    assert result.failure is not None and result.failure.kind is FailureKind.BAD_OUTPUT


def test_a_frame_longer_than_the_cap_is_bad_output_at_once():
    worker = attach(lambda request: answers.FRAME.pack(answers.FRAME_MAGIC, request["id"], 1 << 31), close_after=False)
    started = time.monotonic()
    result = worker.call("legal_actions", [{}])
    assert result.failure is not None and result.failure.kind is FailureKind.BAD_OUTPUT
    assert time.monotonic() - started < FAKE_LIMITS.call_s  # refused on the header, not waited for


def test_two_replies_to_one_request_are_bad_output():
    worker = attach(lambda request: frame(request["id"], ok_reply("[1]")) * 2)
    result = worker.call("legal_actions", [{}])
    assert result.failure is not None and result.failure.kind is FailureKind.BAD_OUTPUT


def test_bytes_between_requests_are_bad_output_and_the_next_request_is_not_sent():
    def respond(request: dict[str, Any]) -> bytes:
        return frame(request["id"], ok_reply("[1]"))

    worker = attach(respond, close_after=False)
    assert worker.call("legal_actions", [{}]).value == [1]
    os.write(worker.fake.write_fd, frame(0, ok_reply("[7]")))  # type: ignore[attr-defined]
    result = worker.call("legal_actions", [{}])
    assert result.failure is not None and result.failure.kind is FailureKind.BAD_OUTPUT
    assert "no request" in result.failure.message
    assert len(worker.fake.requests) == 1  # type: ignore[attr-defined]


def test_request_ids_cannot_be_guessed():
    worker = attach(lambda request: frame(request["id"], ok_reply("[1]")), close_after=False)
    for _ in range(4):
        worker.call("legal_actions", [{}]).unwrap()
    ids = [request["id"] for request in worker.fake.requests]  # type: ignore[attr-defined]
    assert len(set(ids)) == 4 and all(ids[i + 1] - ids[i] != 1 for i in range(3))


# -- real workers: hostile answers through the encoder, frames written by the program -------------------------------

HOSTILE_RETURNS = [
    ("legal_actions", "    return 5\n"),
    ("legal_actions", "    return [True, 1]\n"),
    ("legal_actions", "    return [10**30]\n"),
    ("current_player", "    return 2\n"),
    ("is_terminal", "    return 1\n"),
    ("returns", "    return [2, -1]\n"),
    ("value", "    return ['x', 1]\n"),
    ("initial_state", "    return 10**4000\n"),
    ("initial_state", "    v = 0\n    for _ in range(900):\n        v = [v]\n    return v\n"),
    ("plan:mcts", None),
    ("plan:minimax", None),
]
PATCH_PLANNERS = (
    "import sys\n"
    "_w = sys.modules['harness.sandbox.worker']\n"
    "_w.PLANNERS['mcts'] = lambda game, **kw: 5\n"
    "_w.PLANNERS['minimax'] = lambda game, **kw: {'action': 'x'}\n"
)


@pytest.mark.parametrize(("kind", "body"), HOSTILE_RETURNS, ids=[f"{k}-{i}" for i, (k, _) in enumerate(HOSTILE_RETURNS)])
def test_a_program_returning_a_hostile_value_gets_bad_output(make_worker, game_source, kind, body):
    if body is None:
        source = game_source + PATCH_PLANNERS
    else:
        source = game_source + f"\ndef {kind}(*args):\n" + body + ("\ndef value(state):\n    return [0, 0]\n" if kind != "value" else "")
    worker = make_worker(source)
    result = ask(worker, kind) if kind.startswith("plan:") or kind != "initial_state" else worker.call(kind, [None])
    assert result.failure is not None and result.failure.kind is FailureKind.BAD_OUTPUT, result
    if kind != "initial_state":
        assert worker.call("initial_state", [None]).value == {"n": 0}


FORGE = """
import gc, os, sys

def _worker():
    return next(o for o in gc.get_objects() if type(o).__name__ == "Worker" and hasattr(o, "out_fd"))

def _request():
    frame = sys._getframe()
    while frame is not None:
        if "request_id" in frame.f_locals and "request" in frame.f_locals:
            return frame.f_locals["request"]
        frame = frame.f_back

def _frame(request_id, payload):
    from harness.sandbox import answers
    return answers.FRAME.pack(answers.FRAME_MAGIC, request_id, len(payload)) + payload

def forge(payload, ahead=0):
    os.write(_worker().out_fd, _frame(_request()["id"] + ahead, payload))
"""


def _forging(game_source: str, method: str, body: str) -> str:
    return game_source + FORGE + f"\ndef {method}(*args):\n" + body


# The guard is advice (it refuses gc.get_objects, for one): these programs run without it, as one that got past it would.
UNGUARDED = {"guard": False}


@pytest.mark.parametrize(
    "payload",
    [
        b'{"ok":true,"value":[NaN,0]}',
        b'{"ok":true,"value":[1e999,0]}',
        b'{"ok":true,"value":[' + b"9" * 5000 + b",0]}",
        b'{"ok":true,"value":' + b"[" * 100_000 + b"]" * 100_000 + b"}",
        b'{"ok":true,"value":7}',
        b"[1,-1]",
        b'{"ok":true,"value":"\xff"}',
    ],
    ids=["nan", "overflow", "huge-int", "deep", "wrong-type", "no-envelope", "not-utf8"],
)
def test_a_frame_the_program_writes_itself_cannot_crash_the_host(make_worker, game_source, payload):
    worker = make_worker(_forging(game_source, "returns", f"    forge({payload!r})\n    return [1, -1]\n"), **UNGUARDED)
    result = worker.call("returns", [{"n": 10}])
    assert_declared("returns", result)
    assert result.failure is not None and result.failure.kind is FailureKind.BAD_OUTPUT
    # a well-typed forgery leaves the worker's own reply on the channel: the next call finds it and restarts the worker
    later = [worker.call("initial_state", [None]) for _ in range(2)]
    assert later[-1].value == {"n": 0} and all(r.ok or r.failure.kind is FailureKind.BAD_OUTPUT for r in later)


def test_frames_for_requests_not_yet_sent_are_never_taken_for_their_answers(make_worker, game_source):
    body = (
        "    W = type(_worker())\n"
        "    send = W.send\n"
        "    def send_and_more(self, request_id, answer):\n"
        "        send(self, request_id, answer)\n"
        "        for ahead in range(1, 20):\n"
        '            os.write(self.out_fd, _frame(request_id + ahead, b\'{"ok":true,"value":"forged"}\'))\n'
        "    W.send = send_and_more\n"
        "    return True\n"
    )
    worker = make_worker(_forging(game_source, "is_terminal", body), **UNGUARDED)
    first = worker.call("is_terminal", [{"n": 0}])
    later = [worker.call("initial_state", [None]) for _ in range(3)]
    assert all(r.value != "forged" for r in [first, *later])
    assert any(r.failure is not None and r.failure.kind is FailureKind.BAD_OUTPUT for r in [first, *later])


def test_a_second_reply_to_one_request_is_caught(make_worker, game_source):
    worker = make_worker(
        _forging(game_source, "legal_actions", '    forge(b\'{"ok":true,"value":[7]}\')\n    return [1, 2]\n'), **UNGUARDED
    )
    first = worker.call("legal_actions", [{"n": 0}])
    second = worker.call("is_terminal", [{"n": 0}])
    assert first.value in ([7], [1, 2]) or first.failure is not None  # a substituted answer: what remains (docs/sandbox.md)
    assert any(r.failure is not None and r.failure.kind is FailureKind.BAD_OUTPUT for r in (first, second))


def test_bytes_written_between_calls_are_never_an_answer(make_worker, game_source):
    body = (
        "    import threading, time\n"
        "    def later():\n"
        "        time.sleep(0.3)\n"
        "        os.write(_worker().out_fd, b'garbage, then a frame' + _frame(0, b'{\"ok\":true,\"value\":true}'))\n"
        "    threading.Thread(target=later, daemon=True).start()\n"
        "    return [1, 2]\n"
    )
    worker = make_worker(_forging(game_source, "legal_actions", body), **UNGUARDED)
    first = worker.call("legal_actions", [{"n": 0}])
    assert first.value == [1, 2] or first.failure is not None  # (a thread outliving its call may be refused itself)
    time.sleep(1.0)  # not a timing assertion: the thread has had its chance to write (unless the worker is stopped)
    result = worker.call("is_terminal", [{"n": 0}])
    assert result.value is False or (result.failure is not None and result.failure.kind is FailureKind.BAD_OUTPUT)


def test_a_forged_batch_answer_cannot_crash_the_probe(make_worker, game_source):
    from engine import make_env
    from harness.cwm.probe import implied_interval

    body = (
        "    n = len(_request()['calls'])\n"
        "    forge(b'{\"results\":[' + b','.join([b'{\"ok\":true,\"value\":[1e999,0]}'] * n) + b']}')\n"
        "    return [1, -1]\n"
    )
    worker = make_worker(_forging(game_source, "returns", body), dataclasses.replace(TEST_LIMITS, call_s=20.0), **UNGUARDED)
    assert implied_interval(worker, make_env(0).rules, [5]) is None


def test_a_load_reply_the_program_forges_is_a_classified_failure(sandbox_ready, game_source):
    source = game_source + FORGE + '\nos.write(_worker().out_fd, _frame(0, b\'{"ok":true,"value":{"functions":5}}\'))\n'
    with SandboxWorker(source, TEST_LIMITS, guard=False) as worker:
        started = worker.start()
        assert started.failure is not None and started.failure.kind is FailureKind.BAD_OUTPUT
