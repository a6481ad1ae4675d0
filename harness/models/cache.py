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
"""

from __future__ import annotations

import json
import threading
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from harness.models.messages import ModelResponse


class CacheFileError(ValueError):
    """A cache file line could not be read."""


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

    def __init__(self, path: str | Path | None = None) -> None:
        self.path = Path(path) if path is not None else None
        self._entries: dict[str, ModelResponse] = {}
        self._failures: dict[str, list[CachedFailure]] = {}
        self._lock = threading.Lock()
        self.skipped_torn_line = False
        if self.path is not None and self.path.exists():
            self._load(self.path)

    def _load(self, path: Path) -> None:
        data = path.read_bytes()
        complete_end = data.rfind(b"\n") + 1  # bytes up to the last full line
        if complete_end < len(data):
            self._drop_torn_tail(path, data[complete_end:], complete_end, ModelResponse)
        lines = data[:complete_end].decode("utf-8").split("\n")
        for number, line in enumerate(lines, start=1):
            if not line.strip():
                continue
            try:
                self._store(json.loads(line), ModelResponse)
            except (ValueError, KeyError, TypeError) as exc:
                raise CacheFileError(f"{path}:{number}: unreadable cache line ({exc})") from exc

    def _drop_torn_tail(self, path: Path, tail: bytes, keep: int, response_cls: type) -> None:
        """A last line without its newline: a whole record is kept (newline added), a
        write cut short (a run killed mid-append) is cut off; its call is simply redone."""
        try:
            self._store(json.loads(tail.decode("utf-8")), response_cls)
        except (ValueError, KeyError, TypeError):
            self.skipped_torn_line = True
            with path.open("r+b") as handle:
                handle.truncate(keep)
            return
        with path.open("ab") as handle:
            handle.write(b"\n")

    def _store(self, record: dict, response_cls: type) -> None:
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
            line = json.dumps(record, ensure_ascii=False, separators=(",", ":"))
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with self.path.open("a", encoding="utf-8") as handle:
                handle.write(line + "\n")
                handle.flush()
