"""The response cache: model replies keyed by a hash of (model, messages, parameters).

In memory a dict; optionally backed by a JSONL file, one ``{"key": ..., "response": ...}``
record a line, appended and flushed per entry and loaded on start, so a re-run with the
same inputs needs no network. A call that failed for good (retries exhausted, or a
client error) is stored too, as ``{"key": ..., "failure": ...}`` (a :class:`CachedFailure`),
in the order the failures happened: the n-th time a client makes the same request
(``occurrence`` n, counted from 0; a move re-asked after a failure repeats its request)
it meets the n-th recorded failure if there is one, else the stored reply. So a
resumed run or ``arena rerun`` meets every failure exactly where the original run did,
without calling the model, and the games it decided are reproduced exactly. A torn last line (a run killed mid-write) is cut off on
load (that call is redone); a corrupt line anywhere else is an error naming its line
number, and the file is left as it is.

Hash chain: every line written carries ``prev_hash``, the sha256 (hex) of the previous
line's exact bytes (without its newline), or :data:`GENESIS_HASH` on the first line, as
its first field. Loading verifies every link and refuses a file where one breaks (a line
edited, inserted or deleted); lines without ``prev_hash`` (written before chains) are
read unchecked. The same chain runs through ``games.jsonl`` and ``calls.jsonl``
(:mod:`harness.records.chain` builds on the primitives here, the lowest layer that writes
a chained file).

A full disk: a line is appended whole or not at all (:func:`append_whole`: a write that fails part way,
ENOSPC, is cut back off, and the error names the file). With ``on_full`` set (:data:`OnFull`, e.g. a run's
:class:`~harness.records.reserve.DiskReserve`), a write that failed for want of space is tried once more
after ``on_full`` freed some, so the run that owns the cache can stop before its next call with every
reply it paid for on record.
"""

from __future__ import annotations

import errno
import hashlib
import json
import os
import re
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any, BinaryIO

from pydantic import BaseModel, ConfigDict, Field

from harness.models.messages import ModelResponse

PREV_HASH = "prev_hash"
GENESIS_HASH = hashlib.sha256(b"expanded-othello-arena hash chain v1").hexdigest()
_LINK = re.compile(rb'\{"prev_hash":"([0-9a-f]{64})"([,}])')
FULL_DISK_ERRNOS = frozenset({errno.ENOSPC, errno.EDQUOT})  # no space left, or the user's quota spent
OnFull = Callable[[OSError], bool]  # a write failed for want of space: True when space was freed (try once more)


def append_whole(handle: BinaryIO, data: bytes, path: Path) -> None:
    """Append ``data`` to the unbuffered ``handle`` (opened ``ab``, ``buffering=0``) whole, or not at all: a write
    that fails part way is cut back off the file, and the error (its errno kept) names ``path``."""
    size = os.fstat(handle.fileno()).st_size
    try:
        view = memoryview(data)
        while view:
            written = handle.write(view)
            if not written:  # nothing more fits
                raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
            view = view[written:]
    except OSError as error:
        os.ftruncate(handle.fileno(), size)
        raise OSError(error.errno, error.strerror, str(path)) from error


def retried_when_freed(write: Callable[[], Any], on_full: OnFull | None) -> None:
    """Run ``write``; when it fails for want of space and ``on_full`` frees some, run it once more."""
    try:
        write()
    except OSError as error:
        if on_full is None or error.errno not in FULL_DISK_ERRNOS or not on_full(error):
            raise
        write()


def line_hash(line: bytes) -> str:
    """sha256 hex of one line's exact bytes, without its newline: what the next line's ``prev_hash`` holds."""
    return hashlib.sha256(line).hexdigest()


def chain_line(prev_hash: str, record_json: bytes) -> bytes:
    """``record_json`` (one JSON object on one line) with ``prev_hash`` put first."""
    if not record_json.startswith(b"{") or b"\n" in record_json:
        raise ValueError(f"a chained line holds one JSON object on one line, not {record_json[:40]!r}")
    rest = record_json[1:]
    return b'{"prev_hash":"' + prev_hash.encode("ascii") + (b'"' if rest.lstrip().startswith(b"}") else b'",') + rest


def split_link(line: bytes) -> tuple[str | None, bytes]:
    """(``prev_hash``, the record's JSON without it) of one line; ``(None, line)`` when it has none or is not JSON."""
    match = _LINK.match(line)
    if match:
        return match.group(1).decode("ascii"), b"{" + line[match.end() - (match.group(2) == b"}") :]
    if b'"prev_hash"' not in line:
        return None, line
    try:
        record = json.loads(line)
    except ValueError:
        return None, line
    if not isinstance(record, dict) or PREV_HASH not in record:
        return None, line
    prev = record.pop(PREV_HASH)
    return str(prev), json.dumps(record, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


class CacheFileError(ValueError):
    """A cache file line could not be read, or its hash chain breaks."""


class CachedFailure(BaseModel):
    """A call that failed for good, as the client reported it (re-raised on a cache hit)."""

    model_config = ConfigDict(frozen=True)

    message: str
    kind: str
    status_code: int | None = None
    errors: list[str] = Field(default_factory=list)
    retries: int = 0


class ResponseCache:
    """Model responses and final failures by cache key; see the module docstring."""

    def __init__(self, path: str | Path | None = None, on_full: OnFull | None = None) -> None:
        self.path = Path(path) if path is not None else None
        self.on_full = on_full  # a write that failed for want of space: see the module docstring
        self._entries: dict[str, ModelResponse] = {}
        self._failures: dict[str, list[CachedFailure]] = {}
        self._lock = threading.Lock()
        self.skipped_torn_line = False
        if self.path is not None and self.path.exists():
            self._load(self.path)

    def _load(self, path: Path) -> None:
        data = path.read_bytes()
        complete_end = data.rfind(b"\n") + 1  # bytes up to the last full line
        last = GENESIS_HASH
        for number, raw in enumerate(data[:complete_end].split(b"\n")[:-1], start=1):
            if raw.strip():
                last = self._load_line(path, number, raw, last)
        if complete_end < len(data):
            self._drop_torn_tail(path, data[complete_end:], complete_end, last)

    def _load_line(self, path: Path, number: int, raw: bytes, expected: str) -> str:
        """Store one line after checking its link; returns its hash (the next line's ``prev_hash``)."""
        prev, body = split_link(raw)
        if prev is not None and prev != expected:
            raise CacheFileError(
                f"{path}:{number}: the hash chain breaks here: prev_hash {prev[:12]}... is not the hash of "
                f"the line before ({expected[:12]}...): a line up to here was edited, inserted or deleted"
            )
        try:
            self._store(json.loads(body), ModelResponse)
        except (ValueError, KeyError, TypeError) as exc:
            raise CacheFileError(f"{path}:{number}: unreadable cache line ({exc})") from exc
        return line_hash(raw)

    def _drop_torn_tail(self, path: Path, tail: bytes, keep: int, expected: str) -> None:
        """A last line without its newline: a whole record that chains on is kept (newline added),
        a write cut short (a run killed mid-append) is cut off; its call is simply redone."""
        prev, body = split_link(tail)
        try:
            if prev is not None and prev != expected:
                raise ValueError("its prev_hash does not chain on")
            self._store(json.loads(body), ModelResponse)
        except (ValueError, KeyError, TypeError):
            self.skipped_torn_line = True
            with path.open("r+b") as handle:
                handle.truncate(keep)
            return
        with path.open("ab") as handle:
            handle.write(b"\n")

    def _store(self, record: dict[str, Any], response_cls: type[ModelResponse]) -> None:
        if "failure" in record:
            self._failures.setdefault(record["key"], []).append(CachedFailure.model_validate(record["failure"]))
        else:
            self._entries[record["key"]] = response_cls.model_validate(record["response"])

    def __len__(self) -> int:
        return len(self._entries)

    def __contains__(self, key: str) -> bool:
        return key in self._entries

    def get(self, key: str) -> ModelResponse | None:
        """The stored reply for ``key``, or None."""
        return self._entries.get(key)

    def lookup(self, key: str, occurrence: int = 0) -> ModelResponse | CachedFailure | None:
        """What the ``occurrence``-th request with ``key`` met: a recorded failure, else the reply (or None)."""
        failures = self._failures.get(key, ())
        return failures[occurrence] if occurrence < len(failures) else self._entries.get(key)

    def put(self, key: str, response: ModelResponse | CachedFailure) -> None:
        """Store a reply or append a final failure (in memory, and appended + flushed to the file if any)."""
        with self._lock:
            if isinstance(response, CachedFailure):
                self._failures.setdefault(key, []).append(response)
            else:
                self._entries[key] = response
            if self.path is None:
                return
            field = "failure" if isinstance(response, CachedFailure) else "response"
            record = {"key": key, field: response.model_dump(mode="json")}
            body = json.dumps(record, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
            self.path.parent.mkdir(parents=True, exist_ok=True)
            retried_when_freed(lambda: self._append(body), self.on_full)

    def _append(self, body: bytes) -> None:
        assert self.path is not None
        line = chain_line(last_line_hash(self.path), body)  # from the file: it may have grown since it was loaded
        with self.path.open("ab", buffering=0) as handle:
            append_whole(handle, line + b"\n", self.path)


def last_line_hash(path: Path, chunk: int = 4096) -> str:
    """The hash of the last non-blank line of ``path`` (:data:`GENESIS_HASH` for an empty or missing file)."""
    if not path.exists():
        return GENESIS_HASH
    with path.open("rb") as handle:
        position = handle.seek(0, 2)
        tail = b""
        while position > 0:
            step = min(chunk, position)
            position -= step
            handle.seek(position)
            tail = handle.read(step) + tail
            lines = tail.split(b"\n")
            for line in reversed(lines if position == 0 else lines[1:]):  # the first piece may be part of a line
                if line.strip():
                    return line_hash(line)
    return GENESIS_HASH
