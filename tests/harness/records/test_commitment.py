"""The commitment to a run's hidden condition: a salted sha256, checked with the revealed condition and salt."""

from __future__ import annotations

import stat
from fractions import Fraction

import pytest

from engine import make_env
from engine.condition import Condition
from harness.records.commitment import SALT_FILE, commit, condition_text, digest, read_salt, verify, write_salt


def test_the_canonical_text_holds_k_exactly_the_turn_limit_the_counting_and_the_label():
    assert condition_text(make_env(14).condition) == "k=4/5; turn_limit=none; turn_counting=per_player; label=Majority<80%"
    blitz = Condition(k=Fraction(101, 100), turn_limit=10, turn_counting="total", label="Majority/Blitz")
    assert condition_text(blitz) == "k=101/100; turn_limit=10; turn_counting=total; label=Majority/Blitz"


def test_commit_then_verify_with_the_salt_and_only_with_it():
    condition = make_env(14).condition
    salt, committed = commit(condition)
    assert len(salt) == 32 and len(committed) == 64 and salt not in committed
    assert committed == digest(condition_text(condition), salt)
    assert verify(condition_text(condition), salt, committed)
    assert not verify(condition_text(condition), "0" * 32, committed)
    assert not verify(condition_text(make_env(21).condition), salt, committed)  # K = 3/5, not 4/5
    assert commit(condition) != commit(condition)  # a fresh salt each time: equal conditions do not give equal digests


def test_the_salt_file_is_readable_by_its_owner_only_and_written_once(tmp_path):
    assert read_salt(tmp_path) is None
    path = write_salt(tmp_path, "ab" * 16)
    assert path.name == SALT_FILE and read_salt(tmp_path) == "ab" * 16
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    with pytest.raises(FileExistsError):
        write_salt(tmp_path, "cd" * 16)
