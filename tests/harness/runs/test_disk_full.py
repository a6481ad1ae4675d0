"""A full disk stops ``arena run`` at its first failed write: every request the endpoint got is a paid call on record.

Two ways to fill the disk: a small tmpfs mounted as ``--out`` (needs root and a kernel that lets it mount: skipped,
saying why, where it cannot), and a simulated disk that works anywhere: the run directory's files may hold only
so many bytes (the real files are counted, the run's reserve included), and a line that does not fit is written
in part, then refused with ENOSPC, as a full file system does. Both run the CLI against the stub server on
127.0.0.1; the stub counts the requests, ``calls.jsonl`` holds the calls paid for (cache hits are free), and the
run, resumed once there is room, finishes with the two equal again (the simulated disk's test; the tmpfs test
stops there: the refereed run's agent process takes most of its time).
"""

from __future__ import annotations

import errno
import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from harness.cli.main import app
from harness.models import cache as cache_module
from harness.records import reserve as reserve_module
from harness.records import transcript as transcript_module
from harness.records.reserve import RESERVE_FILE
from harness.records.transcript import TranscriptReader
from harness.runs import run_stop as run_stop_module
from harness.testing.stub_server import LegalMoves, StubServer

RESERVE = 256 * 1024  # the run's reserve in these tests (8 MiB by default): room for 4 calls in flight and the wrap-up
CONCURRENCY = 4


@pytest.fixture(autouse=True)
def small_reserve(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "test-key-not-a-secret")
    monkeypatch.setattr(reserve_module, "RESERVE_BYTES", RESERVE)


def invoke(*args: object) -> Any:
    return CliRunner().invoke(app, [str(a) for a in args], env={"COLUMNS": "250", "NO_COLOR": "1"})


def run_args(stub: StubServer, out: Path, *extra: str) -> list[str]:
    return ["run", "--model", stub.model, "--api-base", stub.url, "--env", "26", "--budget", "6", "--eval-games", "2",
            "--checkpoints", "", "--concurrency", str(CONCURRENCY), "--out", out, *extra]


def requests_on_record(run_dir: Path) -> int:
    """Requests the calls on record made: each paid call's attempts (cache hits made none)."""
    return sum(1 + call.retries for call in TranscriptReader(run_dir).calls() if not call.cache_hit)


def stopped_by_the_full_disk(result: Any) -> Path:
    """Exit 2, one error line naming the file and the OS's error, the resume command; the run directory."""
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output
    errors = [line for line in result.output.splitlines() if line.startswith("error:")]
    assert len(errors) == 1, result.output
    for words in ("the disk is full (No space left on device writing ", "before its next model call", "arena run --resume "):
        assert words in errors[0], errors[0]
    run_dir = Path(errors[0].rsplit("arena run --resume ", 1)[1].strip())
    assert not (run_dir / RESERVE_FILE).exists()  # given back at the end
    metrics = json.loads((run_dir / "metrics.json").read_text())
    assert metrics["stopped"].startswith("the disk is full (No space left on device writing " + str(run_dir))
    assert "Stopped early: the disk is full" in (run_dir / "report.md").read_text()
    return run_dir


def resumed_to_the_end(stub: StubServer, run_dir: Path) -> None:
    result = invoke("run", "--resume", run_dir)
    assert result.exit_code == 0, result.output
    games = TranscriptReader(run_dir).games()
    assert sorted((g.phase, g.game_index) for g in games) == [("adapt", i) for i in range(6)] + [("eval", 0), ("eval", 1)]
    assert len(stub.requests) == requests_on_record(run_dir)
    assert invoke("replay", run_dir).exit_code == 0


class SmallDisk:
    """The run directory's files may hold ``capacity`` bytes: a line past it is written in part, then refused (ENOSPC)."""

    def __init__(self, folder: Path, capacity: int, stub: StubServer) -> None:
        self.folder, self.capacity, self.stub = folder, capacity, stub
        self.requests_when_full: int | None = None  # the endpoint's requests when the first write failed

    def room(self) -> int:
        return self.capacity - sum(path.stat().st_size for path in self.folder.rglob("*") if path.is_file())

    def refuse(self) -> OSError:
        if self.requests_when_full is None:
            self.requests_when_full = len(self.stub.requests)
        return OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))


class CappedHandle:
    """A file handle whose writes stop where the small disk is full."""

    def __init__(self, handle: Any, disk: SmallDisk) -> None:
        self.handle, self.disk = handle, disk

    def fileno(self) -> int:
        return int(self.handle.fileno())

    def write(self, data: Any) -> int:
        room = self.disk.room()
        if room <= 0:
            raise self.disk.refuse()
        return int(self.handle.write(data[:room]))


@pytest.mark.long
def test_a_simulated_full_disk_stops_before_the_next_call_with_every_paid_call_on_record(tmp_path, monkeypatch):
    real_append = cache_module.append_whole
    with StubServer(responder=LegalMoves(0)) as stub:
        disk = SmallDisk(tmp_path, RESERVE + 120_000, stub)  # fills during adaptation (a whole run writes ~600 KB)

        def append_on_small_disk(handle: Any, data: bytes, path: Path) -> None:
            real_append(CappedHandle(handle, disk), data, path)

        for module in (cache_module, transcript_module, run_stop_module):
            monkeypatch.setattr(module, "append_whole", append_on_small_disk)
        run_dir = stopped_by_the_full_disk(invoke(*run_args(stub, tmp_path, "--in-process")))
        assert disk.requests_when_full is not None
        assert len(stub.requests) == requests_on_record(run_dir)  # every request the endpoint answered is on record
        assert len(stub.requests) - disk.requests_when_full <= CONCURRENCY  # none started after the failed write
        reader = TranscriptReader(run_dir)
        assert not any(reader.torn().values())  # the refused line was cut back off: every file ends on a whole line
        assert len(reader.games()) < 8
        disk.capacity = 10**9  # space freed
        resumed_to_the_end(stub, run_dir)


def _mount_tmpfs(folder: Path, size_kib: int) -> str | None:
    """Mount a tmpfs of ``size_kib`` KiB on ``folder``; None, or why it cannot be done here."""
    if os.geteuid() != 0:
        return "mounting a tmpfs needs root"
    if shutil.which("mount") is None:
        return "no mount command"
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size_kib}k", "tmpfs", str(folder)], capture_output=True, text=True)
    return None if done.returncode == 0 else f"mount -t tmpfs failed: {done.stderr.strip() or done.returncode}"


@pytest.mark.long
def test_a_full_tmpfs_as_out_stops_a_refereed_run_with_every_paid_call_on_record(tmp_path):
    out = tmp_path / "small-disk"
    out.mkdir()
    problem = _mount_tmpfs(out, RESERVE // 1024 + 150)
    if problem is not None:
        pytest.skip(f"cannot mount a small tmpfs as --out here ({problem}); the simulated full disk above covers the same")
    try:
        with StubServer(responder=LegalMoves(0)) as stub:
            run_dir = stopped_by_the_full_disk(invoke(*run_args(stub, out)))  # the agent in its own process (the default)
            assert len(stub.requests) == requests_on_record(run_dir)  # (the resume: the simulated disk's test)
            assert not any(TranscriptReader(run_dir).torn().values())
    finally:
        subprocess.run(["umount", "-l", str(out)], capture_output=True, check=False)
