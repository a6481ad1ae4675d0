"""One test per attack: each ends in a classified failure, and nothing happens outside the sandbox.

``guard`` False turns the worker's audit hook off, so the operating system's walls
(bubblewrap, the worker's own uid, rlimits) are what holds; with it on (the default)
the attempt is also named (``forbidden``).
"""

from __future__ import annotations

import dataclasses
import os
import select
import socket
import sys
import uuid
from pathlib import Path

import pytest
from sandbox_limits import TEST_LIMITS

from harness.sandbox.failures import FailureKind
from harness.sandbox.limits import Limits

GUARDS = [pytest.param(True, id="guarded"), pytest.param(False, id="os-walls-only")]


def attack(game_source: str, body: str) -> str:
    """The trivial game with ``apply_action`` (its answer may be any JSON) replaced by the attack, whose body is
    ``body`` (indented)."""
    return game_source + "\nimport os, socket, subprocess, sys\n\ndef apply_action(*args):\n" + body


def run_attack(worker):
    return worker.call("apply_action", [{"n": 0}, 1])


def _limits(**changes: object) -> Limits:
    return dataclasses.replace(TEST_LIMITS, **changes)  # type: ignore[arg-type]


def test_infinite_loop_hits_the_wall_clock_and_the_worker_is_replaced(make_worker, game_source, processes_of):
    worker = make_worker(attack(game_source, "    while True:\n        pass\n"), _limits(call_s=1.0))
    uid = worker.uid
    result = run_attack(worker)
    assert result.failure is not None and result.failure.kind is FailureKind.TIMEOUT
    assert processes_of(uid) == []  # the whole worker is gone, not just the answer abandoned
    assert worker.call("initial_state", [None]).value == {"n": 0}  # the next call gets a fresh worker
    assert worker.restarts == 1 and worker.failures["timeout"] == 1


def test_infinite_loop_hits_the_cpu_time_limit(make_worker, game_source):
    worker = make_worker(attack(game_source, "    while True:\n        pass\n"), _limits(cpu_s=1, call_s=60.0))
    result = run_attack(worker)
    assert result.failure is not None and result.failure.kind is FailureKind.TIMEOUT
    assert "CPU" in result.failure.message


@pytest.mark.parametrize(
    "body",
    ["    return len(bytearray(8 << 30))\n", "    hoard = []\n    while True:\n        hoard.append(bytearray(1 << 20))\n"],
    ids=["one-allocation", "gradual"],
)
def test_memory_bomb_is_a_memory_failure(make_worker, game_source, body):
    worker = make_worker(attack(game_source, body), _limits(memory_bytes=256 << 20))
    result = run_attack(worker)
    assert result.failure is not None and result.failure.kind is FailureKind.MEMORY
    assert worker.call("is_terminal", [{"n": 3}]).value is False  # restarted, usable


@pytest.mark.parametrize("guard", GUARDS)
def test_fork_bomb_is_contained(make_worker, game_source, processes_of, guard):
    worker = make_worker(attack(game_source, "    while True:\n        os.fork()\n"), _limits(call_s=10.0), guard=guard)
    uid = worker.uid
    result = run_attack(worker)
    assert result.failure is not None
    if guard:
        assert result.failure.kind is FailureKind.FORBIDDEN and "os.fork" in result.failure.message
    worker.close()
    assert processes_of(uid) == []
    assert os.waitstatus_to_exitcode(os.system("true")) == 0  # the host can still start processes


@pytest.mark.parametrize("guard", GUARDS)
def test_reading_files_outside_fails(make_worker, game_source, tmp_path, guard):
    secret = tmp_path / "api-key.txt"
    secret.write_text("sk-SECRET-" + uuid.uuid4().hex)
    project_file = Path(__file__).resolve().parents[3] / "pyproject.toml"
    body = (
        f"    seen = []\n"
        f"    for path in ({str(secret)!r}, {str(project_file)!r}, '/root/.bashrc'):\n"
        f"        try:\n"
        f"            seen.append(open(path).read())\n"
        f"        except OSError as error:\n"
        f"            seen.append(type(error).__name__)\n"
        f"    return seen\n"
    )
    worker = make_worker(attack(game_source, body), guard=guard)
    result = run_attack(worker)
    assert "sk-SECRET" not in str(result) + worker.output and "importlinter" not in str(result)
    if guard:  # the attempt is named even though the program caught the error
        assert result.failure is not None and result.failure.kind is FailureKind.FORBIDDEN
    else:  # those files do not exist in its world (/tmp is its own; the project and home are not bound)
        assert result.value == ["FileNotFoundError"] * 3
    # what the program can see of the host: the interpreter's path under /root, no project, no /etc
    project = Path(__file__).resolve().parents[3]
    seen = make_worker(
        attack(
            game_source,
            f"    return [sorted(os.listdir(p)) if os.path.isdir(p) else None for p in ('/root', {str(project)!r}, '/etc', '/home')]\n",
        ),
        guard=guard,
    )
    root, project_seen, etc, home = run_attack(seen).unwrap()
    assert root == _bound_below("/root") and project_seen == _bound_below(str(project)) and etc is None and home is None


def _bound_below(directory: str) -> list[str] | None:
    """What the sandbox shows of ``directory``: the first step towards the interpreter, which is bound (the virtual
    environment is not: its site-packages hold the project's metadata)."""
    bound = {os.path.realpath(sys.base_prefix)}
    steps = sorted({Path(path).relative_to(directory).parts[0] for path in bound if path.startswith(directory + "/")})
    return steps or None


@pytest.mark.parametrize("guard", GUARDS)
def test_writing_outside_tmp_fails_and_tmp_is_private(make_worker, game_source, tmp_path, guard):
    outside = tmp_path / "written-by-candidate"
    package_file = Path("/opt/arena/harness/sandbox/written-by-candidate")
    host_tmp_name = f"sandbox-private-{uuid.uuid4().hex}"
    body = (
        f"    open('/tmp/{host_tmp_name}', 'w').write('inside')\n"
        f"    for path in ({str(outside)!r}, {str(package_file)!r}, '/written-by-candidate'):\n"
        f"        open(path, 'w').write('pwned')\n"
    )
    worker = make_worker(attack(game_source, body), guard=guard)
    result = run_attack(worker)
    assert result.failure is not None
    assert result.failure.kind in (FailureKind.FORBIDDEN, FailureKind.CRASH)
    assert not outside.exists()
    assert not (Path(__file__).resolve().parents[3] / "harness/sandbox/written-by-candidate").exists()
    assert not Path("/written-by-candidate").exists()
    assert not (Path("/tmp") / host_tmp_name).exists()  # its /tmp is its own


@pytest.mark.parametrize("guard", GUARDS)
def test_network_socket_cannot_reach_a_host_server(make_worker, game_source, guard):
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as server:
        server.bind(("127.0.0.1", 0))
        server.listen(8)
        port = server.getsockname()[1]
        body = f"    socket.create_connection(('127.0.0.1', {port}), timeout=5).sendall(b'leak')\n"
        worker = make_worker(attack(game_source, body), guard=guard)
        result = run_attack(worker)
        assert result.failure is not None and result.failure.kind is FailureKind.FORBIDDEN
        readable, _, _ = select.select([server], [], [], 0)
        assert readable == []  # no connection ever reached the host's listener


@pytest.mark.parametrize("guard", GUARDS)
def test_os_system_and_subprocess_fail_without_effect(make_worker, game_source, tmp_path, guard):
    marker = tmp_path / "made-by-shell"
    body = (
        f"    status = os.system('touch {marker}')\n"
        f"    subprocess.run(['/usr/bin/touch', {str(marker)!r}], check=True)\n"
        f"    return status\n"
    )
    worker = make_worker(attack(game_source, body), guard=guard)
    result = run_attack(worker)
    assert result.failure is not None
    assert result.failure.kind is (FailureKind.FORBIDDEN if guard else FailureKind.CRASH)  # no /usr/bin/touch inside
    assert not marker.exists()


def test_parent_environment_is_not_visible(make_worker, game_source, monkeypatch):
    monkeypatch.setenv("ARENA_SANDBOX_MARKER", "marker-" + uuid.uuid4().hex)
    body = (
        "    seen = dict(os.environ)\n"
        "    for pid in os.listdir('/proc'):\n"
        "        if pid.isdigit():\n"
        "            try:\n"
        "                seen[pid] = open(f'/proc/{pid}/environ', 'rb').read().decode(errors='replace')\n"
        "            except OSError as error:\n"
        "                seen[pid] = type(error).__name__\n"
        "    return seen\n"
    )
    worker = make_worker(attack(game_source, body), guard=False)
    seen = run_attack(worker).unwrap()
    assert "ARENA_SANDBOX_MARKER" not in str(seen) and os.environ["ARENA_SANDBOX_MARKER"] not in str(seen)
    assert {k for k in seen if not k.isdigit() and not k.endswith("_NUM_THREADS")} <= {"HOME", "PATH", "LANG", "PWD", "LC_CTYPE"}
    guarded = make_worker(attack(game_source, "    return open('/proc/1/environ').read()\n"))
    assert run_attack(guarded).failure.kind in (FailureKind.FORBIDDEN, FailureKind.CRASH)


def test_state_mutating_apply_action_is_a_mutation_failure(make_worker):
    source = (
        "def apply_action(state, action):\n"
        "    state['n'] += action\n"
        "    return state\n"
        "def is_terminal(state):\n    return state['n'] >= 4\n"
        "def current_player(state):\n    return state['n'] % 2\n"
        "def legal_actions(state):\n    return [1]\n"
        "def returns(state):\n    return [0, 0]\n"
    )
    worker = make_worker(source)
    result = worker.call("apply_action", [{"n": 0}, 1])
    assert result.failure is not None and result.failure.kind is FailureKind.MUTATION
    planned = worker.plan("mcts", state={"n": 0}, simulations=5)
    assert planned.failure is not None and planned.failure.kind is FailureKind.MUTATION


@pytest.mark.parametrize(
    "body", ["    print('x' * 100_000_000)\n", "    for _ in range(100):\n        os.write(1, b'x' * 1_000_000)\n"], ids=["print", "raw-fd"]
)
def test_printing_100_mb_is_bad_output_and_capped(make_worker, game_source, body):
    worker = make_worker(attack(game_source, body))
    result = run_attack(worker)
    assert result.failure is not None and result.failure.kind is FailureKind.BAD_OUTPUT
    assert len(worker.output) <= worker.limits.kept_output_bytes + 200
    assert worker.call("initial_state", [None]).value == {"n": 0}
