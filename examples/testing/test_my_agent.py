"""Tests of my_agent.py with the othello-arena pytest plugin: no network, no key, no project tests imported."""

import asyncio

from my_agent import OneLineMover

from harness.models.client import ModelClient
from harness.testing import FaultSpec

BOARD = "  a b c d\n1 . . . .\n2 . B W .\n3 . W B .\n4 . . . ."


def test_scripted_replies_and_what_the_model_was_asked(scripted_model):
    model = scripted_model(["c4", "I'd rather not", "b1"], failures={1: "rate_limit"})
    agent = OneLineMover(ModelClient(model.name, mock=model, backoff_base_s=0.01))
    picks = [asyncio.run(agent.choose(BOARD, ["b1", "c4", "d3"])) for _ in range(2)]
    assert picks == ["c4", "b1"] and agent.fallbacks == 1  # call 2: a 429, retried; call 3: not a move
    assert model.calls == 3 and model.injected == {"rate_limit": 1}
    assert "Legal moves: b1, c4, d3" in model.requests[0].prompt
    assert model.requests[0].params["temperature"] == 0.0


def test_through_litellm_against_a_flaky_server(stub_server):
    stub_server.faults = FaultSpec.parse("0.2:rate_limit+server_error+malformed+illegal", seed=1)  # drawn per request
    client = ModelClient(stub_server.model, api_base=stub_server.url, backoff_base_s=0.01, timeout_s=10)
    agent = OneLineMover(client)
    picks = [asyncio.run(agent.choose(BOARD, ["b1", "c4", "d3"])) for _ in range(10)]
    assert set(picks) <= {"b1", "c4", "d3"} and agent.fallbacks == 1  # request 4 (a retry) got an illegal move
    assert stub_server.faults_met == {"server_error": 1, "illegal": 1} and client.usage.retries == 1
    assert len(stub_server.requests) == 11 and stub_server.params[0]["temperature"] == 0.0


def test_a_whole_run_against_the_flaky_server(stub_server, arena_run):
    stub_server.faults = FaultSpec.parse("0.2:rate_limit+server_error+malformed+truncated+illegal")
    run = arena_run(stub_server.model, api_base=stub_server.url, env=0, budget=1, eval_games=1)
    assert len(run.adapt_games) == 1 and len(run.eval_games) == 1
    assert run.manifest.config["model"] == stub_server.model
    assert len(run.calls) >= 20 and all(call.messages for call in run.calls)
    assert sum(call.retries for call in run.calls) > 0  # faults met and retried, as recorded in calls.jsonl
    assert len(stub_server.requests) >= sum(1 + call.retries for call in run.calls if not call.cache_hit)


def test_a_match_of_the_first_legal_model_against_random(arena_match):
    match = arena_match("llm-policy:model=mock/echo", "random", env=0, games=2, referee=False)
    assert match.results.total_games == 2 and {game.a_colour for game in match.games} == {"black", "white"}
    assert match.calls and all(call["verdict"] == "legal" for call in match.calls)  # calls.jsonl, by game and side
