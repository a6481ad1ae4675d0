"""The shell blocks of the tutorials (and the README), with the markers that say how a test runs them.

A fenced block in ``bash``, ``sh`` or ``console`` is a shell block: a test runs it, in order with the
page's other blocks, in a scratch directory. HTML comments on the lines just before a block (several
may stack) say what to do instead of running it as written:

- ``<!-- docs-test: skip REASON -->``: not run; the reason is required (e.g. the whole suite, 30 minutes).
- ``<!-- docs-test: substitute OLD => NEW; OLD2 => NEW2 -->``: each OLD (which must occur in the block)
  becomes NEW before the block runs: a mock model for a paid one, a small budget for a large one.
  ``{port}`` in NEW is a free port on 127.0.0.1, the same for the whole page.
- ``<!-- docs-test: background -->``: started and left running (a server) until the page's blocks are
  done; the test waits for its first line of output before the next block.
- ``<!-- docs-test: file PATH -->`` before a block of any language: its text is written to PATH in the
  scratch directory (a sweep file, an agent module, a test file), as the reader would save it.

A marker that is not one of these, a substitution whose OLD is not in its block, or a skip without a
reason is an error: a block is either run or says why not.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

SHELL_LANGUAGES = frozenset({"bash", "sh", "console", "shell"})
FENCE = re.compile(r"^(?P<indent> {0,3})(?P<fence>```+)(?P<language>[\w+-]*)\s*$")
MARKER = re.compile(r"^\s*<!--\s*docs-test:\s*(?P<action>\w+)\s*(?P<argument>.*?)\s*-->\s*$")
ACTIONS = ("skip", "substitute", "background", "file")


class MarkerError(ValueError):
    """A docs-test marker that cannot be applied; names the page and line."""


@dataclass(frozen=True)
class Block:
    """One fenced block of a page and what its markers ask."""

    page: Path
    line: int  # of the opening fence, 1-based
    language: str
    text: str
    skip: str | None = None
    substitutions: tuple[tuple[str, str], ...] = ()
    background: bool = False
    file: str | None = None

    @property
    def where(self) -> str:
        return f"{self.page.name}:{self.line}"

    @property
    def is_shell(self) -> bool:
        return self.language in SHELL_LANGUAGES

    def script(self, port: int) -> str:
        """The block's text with its substitutions applied (every OLD must be there)."""
        text = self.text
        for old, new in self.substitutions:
            if old not in text:
                raise MarkerError(f"{self.where}: substitute {old!r}: not in the block (update the marker)")
            text = text.replace(old, new.replace("{port}", str(port)))
        return text


@dataclass
class _Pending:
    skip: str | None = None
    substitutions: list[tuple[str, str]] = field(default_factory=list)
    background: bool = False
    file: str | None = None
    seen: bool = False


def _apply(pending: _Pending, action: str, argument: str, where: str) -> None:
    if action not in ACTIONS:
        raise MarkerError(f"{where}: unknown docs-test action {action!r}; expected one of {', '.join(ACTIONS)}")
    pending.seen = True
    if action == "skip":
        if not argument:
            raise MarkerError(f"{where}: a skipped block must say why (docs-test: skip REASON)")
        pending.skip = argument
    elif action == "substitute":
        for pair in filter(None, (piece.strip() for piece in argument.split(";"))):
            old, arrow, new = pair.partition("=>")
            if not arrow or not old.strip():
                raise MarkerError(f"{where}: substitute takes OLD => NEW pairs separated by ';', not {pair!r}")
            pending.substitutions.append((old.strip(), new.strip()))
    elif action == "background":
        pending.background = True
    elif not argument:
        raise MarkerError(f"{where}: docs-test: file needs the path to write the block to")
    else:
        pending.file = argument


def page_blocks(page: Path) -> list[Block]:
    """Every fenced block of ``page`` with the markers just above it."""
    lines = page.read_text(encoding="utf-8").splitlines()
    blocks: list[Block] = []
    pending = _Pending()
    index = 0
    while index < len(lines):
        line = lines[index]
        marker, fence = MARKER.match(line), FENCE.match(line)
        if marker:
            _apply(pending, marker["action"], marker["argument"], f"{page.name}:{index + 1}")
        elif fence:
            end = next((i for i in range(index + 1, len(lines)) if lines[i].strip() == fence["fence"]), None)
            if end is None:
                raise MarkerError(f"{page.name}:{index + 1}: a fenced block that never closes")
            text = "\n".join(lines[index + 1 : end]) + "\n"
            substitutions = tuple(pending.substitutions)
            blocks.append(Block(page, index + 1, fence["language"], text, pending.skip, substitutions, pending.background, pending.file))
            pending, index = _Pending(), end
        elif line.strip() and pending.seen:
            raise MarkerError(f"{page.name}:{index + 1}: a docs-test marker must stand just above its block")
        index += 1
    if pending.seen:
        raise MarkerError(f"{page.name}: a docs-test marker at the end of the page has no block")
    return blocks
