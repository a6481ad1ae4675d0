"""A run whose endpoint goes down stops at once, records no game lost to it, and resumes to the same games.

The endpoint is an offline mock behind a switch (:class:`Endpoint`), so the runs are fast;
tests/harness/cli/test_cli_run_fail_fast.py does the same through `arena run` and litellm.
"""

from __future__ import annotations

import json

import pytest
from run_checks import assert_replays_and_reruns

from harness.models.cache import ResponseCache
from harness.models.client import ModelClient
from harness.models.errors import EndpointDown, ProviderError
from harness.models.mock import make_mock
from harness.models.options import ModelOptions
from harness.records.transcript import TranscriptReader
from harness.runs.llm_run import CACHE_FILE, LlmRunConfig, run_llm


class Endpoint:
    """A mock model that fails with ``kind`` from call ``down_at`` on (None: never), until ``down_at`` is cleared."""

    def __init__(self, model: str, down_at: int | None, kind: str, status_code: int | None = None) -> None:
        self.mock, self.down_at, self.kind, self.status_code, self.calls = make_mock(model), down_at, kind, status_code, 0

    async def acomplete(self, messages, params):
        self.calls += 1
        if self.down_at is not None and self.calls > self.down_at:
            raise ProviderError(f"endpoint down ({self.kind})", kind=self.kind, status_code=self.status_code)
        return await self.mock.acomplete(messages, params)


def config(**changes) -> LlmRunConfig:
    base = dict(model="mock/first-legal", env=26, budget=4, eval_games=2, opponents=("random",), seed=1, checkpoints=(),
                model_options=ModelOptions(temperature=0.25, max_consecutive_failures=3))
    return LlmRunConfig(**{**base, **changes})


def client(run_dir, run_config: LlmRunConfig, endpoint: Endpoint) -> ModelClient:
    return ModelClient(run_config.model, mock=endpoint, cache=ResponseCache(run_dir / CACHE_FILE), max_retries=1,
                       backoff_base_s=0.001, options=run_config.model_options)


def adapt_games(run_dir):
    return [g for g in TranscriptReader(run_dir).games() if g.phase == "adapt"]


@pytest.mark.parametrize(("kind", "status", "cause"), [
    ("server_error", 503, "3 calls in a row failed"),  # transient, but three in a row
    ("connection_refused", None, "connection refused"),
    ("auth", 401, "authentication failed"),
])
def test_endpoint_down_mid_adaptation_stops_without_counting_the_game_then_resume_completes(tmp_path, kind, status, cause):
    run_config, run_dir = config(), tmp_path / "runs" / "r"
    whole = run_llm(run_config, out=tmp_path / "whole", run_id="r")  # the same run, never interrupted
    first_game_calls = sum(c.phase == "adapt" and c.game_index == 0 for c in TranscriptReader(whole).calls())
    endpoint = Endpoint("mock/first-legal", down_at=first_game_calls + 5, kind=kind, status_code=status)  # in game 1
    with pytest.raises(EndpointDown) as caught:
        run_llm(run_config, out=tmp_path / "runs", run_id="r", client=client(run_dir, run_config, endpoint))
    message = str(caught.value)
    assert cause in message and f"arena run --resume {run_dir}" in message and "mock/first-legal" in message
    kept = adapt_games(run_dir)
    assert [g.game_index for g in kept] == [0]  # the game in progress is not recorded
    assert all(g.forfeit_by is None and g.failures.api_error == 0 for g in kept)
    metrics = json.loads((run_dir / "metrics.json").read_text())
    assert metrics["adapt_games"] == 1 and cause in metrics["stopped"]

    endpoint.down_at = None  # the endpoint is back
    run_llm(resume=run_dir, client=client(run_dir, run_config, endpoint))
    games = TranscriptReader(run_dir).games()
    assert [(g.phase, g.game_index) for g in games] == [("adapt", i) for i in range(4)] + [("eval", 0), ("eval", 1)]
    assert all(g.forfeit_by is None and g.failures.forfeits == 0 for g in games)  # nothing lost to the outage
    assert [g.moves for g in games] == [g.moves for g in TranscriptReader(whole).games()]
    assert json.loads((run_dir / "metrics.json").read_text())["stopped"] is None


def test_a_dead_endpoint_at_the_first_call_leaves_the_budget_untouched_and_the_run_resumable(tmp_path, monkeypatch):
    run_config, run_dir = config(budget=2, eval_games=1), tmp_path / "runs" / "r"
    endpoint = Endpoint("mock/first-legal", down_at=0, kind="not_found", status_code=404)
    with pytest.raises(EndpointDown, match="not found"):
        run_llm(run_config, out=tmp_path / "runs", run_id="r", client=client(run_dir, run_config, endpoint))
    assert endpoint.calls == 1 and TranscriptReader(run_dir).games() == []
    assert TranscriptReader(run_dir).manifest().config["model_options"]["temperature"] == 0.25
    endpoint.down_at = None
    run_llm(resume=run_dir, client=client(run_dir, run_config, endpoint))
    assert [g.game_index for g in adapt_games(run_dir)] == [0, 1]
    assert_replays_and_reruns(run_dir, tmp_path, monkeypatch, 3)


def test_the_strategist_stops_at_a_plan_and_resumes(tmp_path):
    run_config = config(agent="llm-strategist", model="mock/strategist", budget=6, batch=3, search_depth=1, endgame=2)
    run_dir = tmp_path / "runs" / "r"
    endpoint = Endpoint("mock/strategist", down_at=1, kind="dns")  # the second plan (after game 3) fails
    with pytest.raises(EndpointDown, match="DNS lookup failed"):
        run_llm(run_config, out=tmp_path / "runs", run_id="r", client=client(run_dir, run_config, endpoint))
    assert [g.game_index for g in adapt_games(run_dir)] == [0, 1, 2]
    endpoint.down_at = None
    run_llm(resume=run_dir, client=client(run_dir, run_config, endpoint))
    assert [g.game_index for g in adapt_games(run_dir)] == list(range(6))


def test_the_recorded_options_reach_every_request_and_resume_reads_them_back(tmp_path):
    options = ModelOptions(temperature=0.6, top_p=0.8, max_reply_tokens=32, reasoning_effort="low", model_args={"seed": 5})
    run_config, run_dir = config(budget=2, eval_games=0, model_options=options), tmp_path / "runs" / "r"
    seen: list[dict] = []
    mock = make_mock("mock/first-legal")

    class Recording:
        async def acomplete(self, messages, params):
            seen.append(dict(params))
            return await mock.acomplete(messages, params)

    run_llm(run_config, out=tmp_path / "runs", run_id="r",
            client=ModelClient(run_config.model, mock=Recording(), cache=ResponseCache(run_dir / CACHE_FILE), options=options))
    expected = {"temperature": 0.6, "top_p": 0.8, "max_tokens": 32, "reasoning_effort": "low", "seed": 5}
    assert seen and all(params == expected for params in seen)
    recorded = LlmRunConfig.model_validate(TranscriptReader(run_dir).manifest().config)  # what --resume runs with
    assert recorded.model_options == options
