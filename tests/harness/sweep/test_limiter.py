"""The shared limiter holds 60 requests/min across 4 worker processes against the stub server."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from harness.sweep.backends import _run_local
from harness.sweep.limiter import Limiter, LimitingProxy
from harness.sweep.spec import parse_sweep
from harness.testing.stub_server import StubServer


class VirtualClock:
    """Time that passes only when the limiter waits: the test needs no wall-clock minutes."""

    def __init__(self) -> None:
        self.now, self.lock = 0.0, threading.Lock()

    def __call__(self) -> float:
        with self.lock:
            return self.now

    def sleep(self, seconds: float) -> None:
        with self.lock:
            self.now += max(0.0, seconds)


@pytest.mark.long  # about a minute on a loaded 2-core machine: four spawned workers play their games through the proxy
def test_sixty_requests_a_minute_across_four_workers(stub_server: StubServer, tmp_path: Path) -> None:
    sweep = parse_sweep(
        {
            "envs": [47, 54],
            "seeds": [0, 1],
            "budget": 2,
            "games": 1,
            "referee": False,  # 10-turn games
            "limits": {"openai": {"requests_per_minute": 60}},
            "models": [{"model": stub_server.model, "options": {"concurrency": 1, "model_options": {"api_base": stub_server.url}}}],
        }
    )
    clock = VirtualClock()
    limiter = Limiter(sweep.file.limits["openai"], clock=clock, sleep=clock.sleep)
    proxy = LimitingProxy(stub_server.url, limiter)
    try:
        outcomes = list(_run_local(sweep.cells, tmp_path, 4, {"openai": proxy.api_base(stub_server.url)}))
    finally:
        proxy.stop()
    assert [o.status for o in outcomes] == ["ok"] * 4, outcomes
    admitted = limiter.admitted
    assert len(admitted) == len(stub_server.requests) > 60  # every request went through the one limiter
    busiest = max(sum(start <= t < start + 60 for t in admitted) for start in admitted)
    assert busiest == 60  # the limit binds, and is never exceeded in any minute
    assert admitted[-1] >= 60 * (len(admitted) // 60 - 1)


def test_limits_need_the_models_endpoint() -> None:
    from harness.sweep.backends import _upstreams

    sweep = parse_sweep({"envs": [5], "limits": {"openai": {"requests_per_minute": 60}}, "models": [{"model": "openai/gpt-4o-mini"}]})
    try:
        _upstreams(sweep, sweep.cells)
    except ValueError as error:
        assert "limits.openai" in str(error) and "api_base" in str(error)
    else:
        raise AssertionError("a limited provider without api_base was accepted")
