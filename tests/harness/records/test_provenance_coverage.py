"""What a run manifest records about where it ran (harness/records/provenance.py, issue 20's coverage floor).

Pinned here: the versions recorded (and the project's left out when it is not installed), the
git commit and dirty flag of a checkout (None outside one, or when git fails), and the harness
version: the hash of the prompt templates and the parser's source, computed again by hand.
"""

from __future__ import annotations

import hashlib
import importlib.util
import subprocess
from importlib import metadata
from pathlib import Path

import numba
import numpy
import pytest

from harness.records import provenance
from harness.records.provenance import git_commit, harness_version, versions


def _git(root: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@example.invalid", "-C", str(root), *args],
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout.strip()


def test_versions_name_python_numpy_numba_and_the_project_when_installed(monkeypatch):
    found = versions()
    assert found["numpy"] == numpy.__version__ and found["numba"] == numba.__version__
    assert found["python"].count(".") == 2

    def not_installed(name: str) -> str:
        raise metadata.PackageNotFoundError(name)

    monkeypatch.setattr(provenance.metadata, "version", not_installed)
    assert set(versions()) == {"python", "numpy", "numba"}
    monkeypatch.setattr(provenance.metadata, "version", lambda name: "9.9.9")
    assert versions()["othello-arena"] == "9.9.9"


def test_git_commit_gives_the_head_and_whether_tracked_files_changed(tmp_path):
    _git(tmp_path, "init", "-q")
    (tmp_path / "a.txt").write_text("one\n")
    (tmp_path / "untracked.txt").write_text("not added\n")
    _git(tmp_path, "add", "a.txt")
    _git(tmp_path, "commit", "-q", "-m", "first")
    head = _git(tmp_path, "rev-parse", "HEAD")
    assert git_commit(tmp_path) == {"commit": head, "dirty": False}
    (tmp_path / "a.txt").write_text("two\n")
    assert git_commit(tmp_path) == {"commit": head, "dirty": True}


def test_git_commit_is_none_outside_a_checkout_and_when_git_fails(tmp_path, monkeypatch):
    assert git_commit(tmp_path) is None
    (tmp_path / ".git").mkdir()  # a .git that is no repository: rev-parse fails
    assert git_commit(tmp_path) is None

    def no_git(*args: object, **kwargs: object) -> None:
        raise OSError("git: not found")

    monkeypatch.setattr(provenance.subprocess, "run", no_git)
    assert git_commit(tmp_path) is None


def test_git_commit_leaves_dirty_unknown_when_status_fails(tmp_path, monkeypatch):
    (tmp_path / ".git").mkdir()
    answers = iter(["abc123", None])
    monkeypatch.setattr(provenance, "_git", lambda root, *args: next(answers))
    assert git_commit(tmp_path) == {"commit": "abc123", "dirty": None}


def test_harness_version_hashes_the_templates_and_the_parser_source(tmp_path):
    (tmp_path / "b.j2").write_text("second")
    (tmp_path / "a.j2").write_text("first")
    (tmp_path / "notes.txt").write_text("not a template")
    spec = importlib.util.find_spec("harness.prompting.moves")
    assert spec is not None and spec.origin is not None
    parser = Path(spec.origin).read_bytes()
    expected = hashlib.sha256(b"a.j2\0first\0" + b"b.j2\0second\0" + b"parser\0" + parser).hexdigest()[:12]
    assert harness_version(tmp_path) == expected
    (tmp_path / "a.j2").write_text("changed")
    assert harness_version(tmp_path) != expected
    assert len(harness_version()) == 12 and harness_version() == harness_version(provenance.DEFAULT_PROMPTS_DIR)


def test_harness_version_refuses_a_parser_module_it_cannot_find(tmp_path, monkeypatch):
    monkeypatch.setattr(provenance, "PARSER_MODULE", "harness.prompting.no_such_parser")
    with pytest.raises(RuntimeError, match="the parser module harness.prompting.no_such_parser cannot be found"):
        harness_version(tmp_path)
