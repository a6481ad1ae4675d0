"""Agent processes start from a warmed server: behind the walls (harness.referee.walls), or, outside them
(--unsandboxed-agents), forked from the forkserver (harness.referee.launch) as a spawned process would.

Behind the walls they see only the harmless environment variables and a private
/tmp as their working directory; outside them, the parent's environment variables
as they are when the process starts (not as they were when the server started) and
its working directory. Either way no condition the server could have built while
warming up.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from engine import make_env
from harness.referee import walls
from harness.referee.agent_process import AgentJob
from harness.referee.isolation import UNSANDBOXED_ENV
from harness.referee.launch import agent_context
from harness.referee.session import AgentSession
from harness.registry.plugins import load_plugins, plugin_sources

PROBE = Path(__file__).with_name("launch_probe.py")
walled = pytest.mark.skipif(walls.walls_problem() is not None, reason=f"no walls here: {walls.walls_problem()}")


def _probe(env_id: int = 0, agent: str = "launch-probe", plugins: tuple[str, ...] | None = None) -> dict:
    env = make_env(env_id)
    job = AgentJob(agent=agent, rules=env.rules, budget=0, seed=1, plugins=plugin_sources() if plugins is None else plugins)
    with AgentSession(env, job) as session:
        adapted = session.adapt(lambda played: False, lambda agent, played: None)
    assert adapted.error is None
    if agent != "launch-probe":
        return {}
    [path] = Path(os.environ["CHEAT_REPORT"]).glob("launch-probe-*.json")
    found = json.loads(path.read_text())
    path.unlink()
    return found


@pytest.fixture
def unsandboxed(monkeypatch):
    """Agent processes outside the walls (--unsandboxed-agents), as before them."""
    monkeypatch.setenv(UNSANDBOXED_ENV, "1")


def test_an_unsandboxed_agent_process_sees_the_environment_and_directory_of_its_start(reports, monkeypatch, tmp_path, unsandboxed):
    load_plugins([PROBE])
    monkeypatch.delenv("ARENA_LAUNCH_PROBE", raising=False)
    first = _probe()  # the server runs from here on (started by this test or an earlier one)
    assert first["variable"] is None
    monkeypatch.setenv("ARENA_LAUNCH_PROBE", "set after the server started")
    monkeypatch.chdir(tmp_path)
    second = _probe()
    assert second["variable"] == "set after the server started"
    assert second["cwd"] == str(tmp_path)
    assert first["parent"] == second["parent"] != os.getpid()  # forked by the server, not by this process


@walled
def test_behind_the_walls_an_agent_process_sees_no_variable_nor_folder_of_its_parent(reports, monkeypatch, tmp_path):
    load_plugins([PROBE])
    monkeypatch.setenv("ARENA_LAUNCH_PROBE", "a variable of the referee's process")
    monkeypatch.chdir(tmp_path)
    first, second = _probe(), _probe()
    assert first["variable"] is None and second["variable"] is None
    assert first["cwd"] == second["cwd"] == "/tmp"  # its own, private /tmp
    assert first["parent"] == second["parent"] == 2  # the server, in a PID namespace of its own (1: its init)


def test_an_agent_process_knows_the_plugins_its_parent_loaded_after_the_server_started(reports, tmp_path):
    script = tmp_path / "late_plugin.py"  # a fresh process: its server starts before the plugin is loaded
    script.write_text(
        "import json, sys\n"
        f"sys.path.insert(0, {str(Path(__file__).parent)!r})\n"
        "import test_launch\n"
        "from harness.registry.plugins import load_plugins\n"
        "if __name__ == '__main__':\n"
        "    test_launch._probe(agent='random', plugins=())\n"
        "    load_plugins([test_launch.PROBE])  # passed down in the environment only, as to a spawned process\n"
        "    print(json.dumps(test_launch._probe(plugins=())))\n"
    )
    out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, cwd=tmp_path)
    assert out.returncode == 0, out.stderr[-2000:]
    assert json.loads(out.stdout.splitlines()[-1])["variable"] is None


def test_no_condition_lives_in_an_agent_process_of_a_minority_environment(reports):
    load_plugins([PROBE])
    assert _probe(7)["conditions"] == []


def test_the_warm_up_builds_no_condition_and_freezes_what_it_loaded():
    from tests.python_child import run_python  # not at the top: late_plugin.py imports this module from outside the repository

    code = (
        "import gc, harness.referee.warm; from engine.condition import Condition; "
        "from engine.environments import Environment; frozen = gc.get_freeze_count(); gc.unfreeze(); "
        "print(frozen > 0, [o for o in gc.get_objects() if isinstance(o, (Condition, Environment))])"
    )
    out = run_python(code)
    assert out.stdout.split() == ["True", "[]"]
    assert "could not warm up" not in out.stderr


def test_a_failed_warm_up_is_reported_not_raised():
    from tests.python_child import run_python  # not at the top: late_plugin.py imports this module from outside the repository

    code = (
        "import harness.referee.warm as warm\n"
        "def broken(*_args, **_kwargs):\n    raise RuntimeError('no kernels today')\n"
        "warm.make_agent = broken\nwarm.warm()\nprint('went on')"
    )
    out = run_python(code)
    assert out.stdout.strip() == "went on"
    assert "could not warm up (RuntimeError: no kernels today); agent processes start slower" in out.stderr


def _probe_in_a_fork(facts) -> tuple[dict, int]:
    """With this process's server running, a forked child (which inherited it, though only its parent may use it)
    probes an agent process; what it found, with ``facts()`` of the child, and the child's pid."""
    load_plugins([PROBE])
    _probe()
    read, write = os.pipe()
    child = os.fork()
    if child == 0:
        try:
            os.write(write, json.dumps({**facts(), **_probe()}).encode())
        finally:
            os._exit(0)
    os.close(write)
    os.waitpid(child, 0)
    with os.fdopen(read) as answer:
        return json.loads(answer.read()), child


@walled
def test_a_forked_process_starts_a_server_of_its_own_behind_the_walls(reports):
    found, _child = _probe_in_a_fork(lambda: {"servers": len(walls._servers)})
    assert found["servers"] == 0 and found["parent"] == 2 and found["conditions"] == []
    assert len(walls._servers) >= 1


def test_a_forked_process_starts_agent_processes_by_spawn(reports, unsandboxed):
    found, child = _probe_in_a_fork(lambda: {"method": agent_context().get_start_method()})
    assert found["method"] == "spawn" and found["parent"] == child
    assert agent_context().get_start_method() == "forkserver"
