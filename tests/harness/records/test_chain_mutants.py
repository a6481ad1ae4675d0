"""What the hash-chain scan and the seal check left free (survivors of `make mutation MODULES=records`).

Pinned here: every field of a scan (line numbers with blank lines, bytes, offsets, a torn tail, a
missing file), each finding whole with the line it names (a broken first link, a broken later link,
lines without a link, a torn last line) and every way a file and its seal disagree (no seal, no
file, lines missing, lines added, the last line edited, an empty sealed file).
"""

from __future__ import annotations

import pytest

from harness.models.cache import GENESIS_HASH, chain_line, line_hash
from harness.records.chain import ChainSeal, Finding, broken_link_message, scan_chain, seal_findings


def chained(*bodies: bytes) -> list[bytes]:
    """Lines linked from the start value, one per body."""
    out, previous = [], GENESIS_HASH
    for body in bodies:
        out.append(chain_line(previous, body))
        previous = line_hash(out[-1])
    return out


def write(path, rows, tail=b""):
    path.write_bytes(b"".join(row + b"\n" for row in rows) + tail)
    return path


def seal_of(rows, count=None):
    count = len(rows) if count is None else count
    return ChainSeal(lines=count, last_hash=line_hash(rows[count - 1]) if count else GENESIS_HASH)


def test_a_scan_keeps_line_numbers_across_blank_lines_and_measures_a_torn_tail(tmp_path):
    a, b = chained(b'{"a":1}', b'{"b":2}')
    path = write(tmp_path / "games.jsonl", [a, b"", b"  ", b], tail=b'{"c"')
    scan = scan_chain(path)
    assert scan.exists and scan.path == path
    assert [link.number for link in scan.links] == [1, 4]
    assert [link.raw for link in scan.links] == [a, b]
    assert [link.prev_hash for link in scan.links] == [GENESIS_HASH, line_hash(a)]
    assert [link.hash for link in scan.links] == [line_hash(a), line_hash(b)]
    assert [link.body for link in scan.links] == [b'{"a":1}', b'{"b":2}']
    good = len(a) + 1 + 1 + 3 + len(b) + 1
    assert [link.end for link in scan.links] == [len(a) + 1, good]
    assert (scan.good_bytes, scan.torn_bytes, scan.total_lines) == (good, 4, 4)
    assert scan.last_hash == line_hash(b)
    assert scan.seal() == ChainSeal(lines=2, last_hash=line_hash(b), phases=None)
    assert scan.seal({"adapt": 2}).phases == {"adapt": 2}
    assert scan.breaks() == []
    assert scan.findings() == [
        Finding(
            "games.jsonl",
            5,
            "the last line is incomplete (4 bytes and no newline): the file "
            "was cut mid-line, or the run was killed while writing it (resume it to repair)",
        )
    ]


def test_a_missing_file_scans_as_empty_and_an_empty_one_as_present(tmp_path):
    missing = scan_chain(tmp_path / "calls.jsonl")
    assert (missing.exists, missing.links, missing.good_bytes, missing.torn_bytes, missing.total_lines) == (False, (), 0, 0, 0)
    assert missing.last_hash == GENESIS_HASH and missing.findings() == []
    empty = scan_chain(write(tmp_path / "cache.jsonl", []))
    assert (empty.exists, empty.links, empty.good_bytes, empty.torn_bytes, empty.total_lines) == (True, (), 0, 0, 0)
    assert empty.seal() == ChainSeal(lines=0, last_hash=GENESIS_HASH)


def test_a_line_without_its_own_newline_is_torn_even_when_one_byte(tmp_path):
    (a,) = chained(b'{"a":1}')
    scan = scan_chain(write(tmp_path / "games.jsonl", [a], tail=b"x"))
    assert (len(scan.links), scan.torn_bytes, scan.total_lines, scan.good_bytes) == (1, 1, 1, len(a) + 1)
    assert [f.line for f in scan.findings()] == [2]


def test_a_broken_first_link_and_a_broken_later_link_name_their_lines(tmp_path):
    a, b, c = chained(b'{"a":1}', b'{"b":2}', b'{"c":3}')
    wrong_start = chain_line("0" * 64, b'{"a":1}')
    scan = scan_chain(write(tmp_path / "calls.jsonl", [wrong_start, b"", b, c]))
    assert scan.breaks() == [
        Finding(
            "calls.jsonl",
            1,
            "prev_hash is not the chain's start value: this is not the first line written (lines were deleted from the start of the file)",
        ),
        Finding("calls.jsonl", 3, "prev_hash is not the hash of line 1: line 1 was edited, or lines were deleted or inserted between them"),
    ]
    assert scan_chain(write(tmp_path / "calls.jsonl", [a, c])).breaks() == [Finding("calls.jsonl", 2, broken_link_message(1))]
    assert broken_link_message(7) == (
        "prev_hash is not the hash of line 7: line 7 was edited, or lines were deleted or inserted between them"
    )


def test_lines_without_a_link_are_counted_at_the_first_and_not_called_broken(tmp_path):
    a, b = chained(b'{"a":1}', b'{"b":2}')
    scan = scan_chain(write(tmp_path / "games.jsonl", [a, b'{"x":1}', b"not json", b], tail=b"ab"))
    assert scan.breaks() == [Finding("games.jsonl", 4, broken_link_message(3))]
    assert scan.findings() == [
        Finding("games.jsonl", 4, broken_link_message(3)),
        Finding(
            "games.jsonl", 2, "2 line(s) carry no prev_hash (first here): written before hash chains or edited, so they cannot be checked"
        ),
        Finding(
            "games.jsonl",
            5,
            "the last line is incomplete (2 bytes and no newline): the file was cut mid-line, "
            "or the run was killed while writing it (resume it to repair)",
        ),
    ]


def test_a_finding_describes_itself_with_or_without_a_line():
    assert Finding("games.jsonl", 3, "bad").describe() == "games.jsonl:3: bad"
    assert Finding("games.jsonl", None, "bad").describe() == "games.jsonl: bad"
    assert Finding("games.jsonl", 0, "bad").describe() == "games.jsonl:0: bad"


def test_the_seal_and_the_file_agree(tmp_path):
    rows = chained(b'{"a":1}', b'{"b":2}')
    scan = scan_chain(write(tmp_path / "games.jsonl", rows))
    assert seal_findings(scan, seal_of(rows)) == []
    assert seal_findings(scan_chain(tmp_path / "none.jsonl"), None) == []
    assert seal_findings(scan_chain(write(tmp_path / "empty.jsonl", [])), seal_of([])) == []


def test_no_seal_of_a_file_that_is_there_and_no_file_for_a_seal(tmp_path):
    rows = chained(b'{"a":1}')
    assert seal_findings(scan_chain(write(tmp_path / "cache.jsonl", rows)), None) == [
        Finding(
            "cache.jsonl",
            None,
            "the manifest holds no seal of this file (written before hash chains, or the run "
            "never closed it): its lines cannot be checked against the manifest",
        )
    ]
    assert seal_findings(scan_chain(tmp_path / "calls.jsonl"), seal_of(rows)) == [
        Finding("calls.jsonl", None, "the file is missing; the manifest seals 1 line(s) of it")
    ]


def test_lines_missing_from_a_sealed_file_are_named_after_its_last_line(tmp_path):
    rows = chained(b'{"a":1}', b'{"b":2}', b'{"c":3}')
    scan = scan_chain(write(tmp_path / "games.jsonl", [rows[0], b""]))
    assert seal_findings(scan, seal_of(rows)) == [
        Finding(
            "games.jsonl", 2, "the manifest seals 3 line(s), the file holds 1: 2 line(s) are missing (the file was cut or lines deleted)"
        )
    ]
    emptied = scan_chain(write(tmp_path / "games.jsonl", []))
    assert [(f.line, f.message[:46]) for f in seal_findings(emptied, seal_of(rows))] == [
        (1, "the manifest seals 3 line(s), the file holds 0")
    ]


@pytest.mark.parametrize("sealed", [1, 2])
def test_lines_written_after_the_seal_are_named_at_the_first_of_them(tmp_path, sealed):
    rows = chained(b'{"a":1}', b'{"b":2}', b'{"c":3}')
    scan = scan_chain(write(tmp_path / "games.jsonl", [rows[0], b"", *rows[1:]]))
    first_extra = 3 if sealed == 1 else 4
    assert seal_findings(scan, seal_of(rows, sealed)) == [
        Finding(
            "games.jsonl",
            first_extra,
            f"the manifest seals {sealed} line(s), the file holds 3: this line and the "
            "ones after it were written after the seal (a run killed before it closed: resume it), or appended",
        )
    ]


def test_lines_added_after_an_edited_sealed_line_name_both(tmp_path):
    rows = chained(b'{"a":1}', b'{"b":2}', b'{"c":3}')
    forged = ChainSeal(lines=2, last_hash="f" * 64)
    (finding,) = seal_findings(scan_chain(write(tmp_path / "games.jsonl", [rows[0], b"", *rows[1:]])), forged)
    assert finding == Finding(
        "games.jsonl",
        4,
        "the manifest seals 2 line(s), the file holds 3: this line and the "
        "ones after it were written after the seal (a run killed before it closed: resume it), "
        "or appended; and line 3 is not the one sealed",
    )
    nothing_sealed = ChainSeal(lines=0, last_hash="f" * 64)
    (finding,) = seal_findings(scan_chain(write(tmp_path / "calls.jsonl", rows)), nothing_sealed)
    assert finding.line == 1 and finding.message.endswith("or appended; and line 0 is not the one sealed")


def test_an_edited_last_line_is_named_with_both_hashes(tmp_path):
    rows = chained(b'{"a":1}', b'{"b":2}')
    scan = scan_chain(write(tmp_path / "games.jsonl", [rows[0], b"", rows[1]]))
    forged = ChainSeal(lines=2, last_hash="f" * 64)
    assert seal_findings(scan, forged) == [
        Finding(
            "games.jsonl",
            3,
            f"the last line hashes to {line_hash(rows[1])[:12]}..., the manifest's seal says "
            "ffffffffffff...: the line was edited after the run was sealed",
        )
    ]
    empty = scan_chain(write(tmp_path / "empty.jsonl", []))
    assert seal_findings(empty, forged.model_copy(update={"lines": 0})) == [
        Finding(
            "empty.jsonl",
            None,
            f"the last line hashes to {GENESIS_HASH[:12]}..., the manifest's seal says "
            "ffffffffffff...: the line was edited after the run was sealed",
        )
    ]


def test_a_seal_refuses_negative_counts_and_hashes_that_are_not_sha256_hex():
    with pytest.raises(ValueError, match="greater than or equal to 0"):
        ChainSeal(lines=-1, last_hash=GENESIS_HASH)
    with pytest.raises(ValueError, match="String should match pattern"):
        ChainSeal(lines=1, last_hash="F" * 64)
    with pytest.raises(ValueError, match="Extra inputs are not permitted"):
        ChainSeal(lines=1, last_hash=GENESIS_HASH, other=1)
