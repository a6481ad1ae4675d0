"""Hash chains over a run's JSONL logs, and the seal the manifest keeps of each.

Every line of ``games.jsonl``, ``calls.jsonl`` and ``cache.jsonl`` starts with
``prev_hash``: the sha256 (hex) of the previous line's exact bytes, without its
newline; the first line's is :data:`GENESIS_HASH`. Blank lines hold nothing and are
not links. An edited line breaks the link of the line after it, a deleted or
inserted line the link where it was; the last line is covered by the manifest's
:class:`ChainSeal` (line count and last hash), so a cut or an edit at the end shows
too. The primitives (hash, encode, split) live in :mod:`harness.models.cache`, the
lowest layer that writes a chained file; this module reads and checks whole files.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from harness.models.cache import GENESIS_HASH, line_hash, split_link


class ChainSeal(BaseModel):
    """What the manifest holds of one chained file: lines, the last line's hash, and (games) games per phase."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    lines: int = Field(ge=0)
    last_hash: str = Field(pattern=r"^[0-9a-f]{64}$")
    phases: dict[str, int] | None = None


@dataclass(frozen=True)
class Link:
    """One complete, non-blank line of a chained file."""

    number: int  # 1-based line number in the file
    raw: bytes  # the line's exact bytes, without its newline
    prev_hash: str | None  # None: the line carries no link (written before hash chains, or not JSON)
    hash: str
    end: int  # byte offset just after its newline

    @property
    def body(self) -> bytes:
        """The record's JSON without ``prev_hash`` (made when asked for: call logs are large)."""
        return split_link(self.raw)[1]


@dataclass(frozen=True)
class Finding:
    """Something wrong with a run's records, where it is (``line`` None: the file as a whole)."""

    file: str
    line: int | None
    message: str

    def describe(self) -> str:
        return f"{self.file}:{self.line}: {self.message}" if self.line is not None else f"{self.file}: {self.message}"


@dataclass(frozen=True)
class ChainScan:
    """Every complete line of a file with its link, and how long an incomplete last line is (0: none)."""

    path: Path
    exists: bool
    links: tuple[Link, ...]
    good_bytes: int  # length of the complete prefix
    torn_bytes: int
    total_lines: int  # complete lines, blank ones included

    @property
    def last_hash(self) -> str:
        return self.links[-1].hash if self.links else GENESIS_HASH

    def seal(self, phases: dict[str, int] | None = None) -> ChainSeal:
        return ChainSeal(lines=len(self.links), last_hash=self.last_hash, phases=phases)

    def breaks(self) -> list[Finding]:
        """Lines whose ``prev_hash`` is not the hash of the line before them (links that are there but wrong)."""
        found, expected, before = [], GENESIS_HASH, None
        for link in self.links:
            if link.prev_hash is not None and link.prev_hash != expected:
                found.append(Finding(self.path.name, link.number, broken_link_message(before)))
            expected, before = link.hash, link.number
        return found

    def findings(self) -> list[Finding]:
        """Broken links, lines without a link, an incomplete last line."""
        found = self.breaks()
        unchained = [link.number for link in self.links if link.prev_hash is None]
        if unchained:
            found.append(
                Finding(
                    self.path.name,
                    unchained[0],
                    f"{len(unchained)} line(s) carry no prev_hash (first here): "
                    "written before hash chains or edited, so they cannot be checked",
                )
            )
        if self.torn_bytes:
            found.append(
                Finding(
                    self.path.name,
                    self.total_lines + 1,
                    f"the last line is incomplete ({self.torn_bytes} bytes and no newline): the file was cut "
                    "mid-line, or the run was killed while writing it (resume it to repair)",
                )
            )
        return found


def broken_link_message(before: int | None) -> str:
    """Why a link is wrong, naming the line it should hash (None: the first line)."""
    if before is None:
        return (
            "prev_hash is not the chain's start value: this is not the first line written (lines were deleted from the start of the file)"
        )
    return f"prev_hash is not the hash of line {before}: line {before} was edited, or lines were deleted or inserted between them"


def scan_chain(path: Path) -> ChainScan:
    """Read ``path`` (missing: empty) into links; never raises on content, only reports."""
    if not path.exists():
        return ChainScan(path, False, (), 0, 0, 0)
    data = path.read_bytes()
    links: list[Link] = []
    offset, number = 0, 0
    while (end := data.find(b"\n", offset)) != -1:
        number += 1
        raw = data[offset:end]
        if raw.strip():
            links.append(Link(number, raw, split_link(raw)[0], line_hash(raw), end + 1))
        offset = end + 1
    return ChainScan(path, True, tuple(links), offset, len(data) - offset, number)


def seal_findings(scan: ChainScan, seal: ChainSeal | None) -> list[Finding]:
    """Where the file and the manifest's seal of it disagree (count, last hash, presence)."""
    name, lines = scan.path.name, len(scan.links)
    if seal is None:
        if not scan.exists:
            return []
        return [
            Finding(
                name,
                None,
                "the manifest holds no seal of this file (written before hash chains, "
                "or the run never closed it): its lines cannot be checked against the manifest",
            )
        ]
    if not scan.exists:
        return [Finding(name, None, f"the file is missing; the manifest seals {seal.lines} line(s) of it")]
    if lines < seal.lines:
        last = scan.links[-1].number if scan.links else 0
        return [
            Finding(
                name,
                last + 1,
                f"the manifest seals {seal.lines} line(s), the file holds {lines}: "
                f"{seal.lines - lines} line(s) are missing (the file was cut or lines deleted)",
            )
        ]
    sealed_last = scan.links[seal.lines - 1] if seal.lines else None
    sealed_hash = sealed_last.hash if sealed_last else GENESIS_HASH
    if lines > seal.lines:
        first_extra = scan.links[seal.lines].number
        also = "" if sealed_hash == seal.last_hash else f"; and line {sealed_last.number if sealed_last else 0} is not the one sealed"
        return [
            Finding(
                name,
                first_extra,
                f"the manifest seals {seal.lines} line(s), the file holds {lines}: this line and "
                "the ones after it were written after the seal (a run killed before it closed: "
                f"resume it), or appended{also}",
            )
        ]
    if sealed_hash != seal.last_hash:
        where = sealed_last.number if sealed_last else None
        return [
            Finding(
                name,
                where,
                f"the last line hashes to {sealed_hash[:12]}..., the manifest's seal says "
                f"{seal.last_hash[:12]}...: the line was edited after the run was sealed",
            )
        ]
    return []
