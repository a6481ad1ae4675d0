"""The response cache: model replies keyed by a hash of (model, messages, parameters).

In memory a dict; optionally backed by a JSONL file, one ``{"key": ..., "response": ...}``
record a line, appended and flushed per entry and loaded on start, so a re-run with the
same inputs needs no network. A torn last line (a run killed mid-write) is cut off on
load (that call is redone); a corrupt line anywhere else is an error naming its line
number, and the file is left as it is.
"""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from harness.model_client import ModelResponse


class CacheFileError(ValueError):
    """A cache file line could not be read."""


class ResponseCache:
    """Successful model responses by cache key; see the module docstring."""

    def __init__(self, path: str | Path | None = None) -> None:
        self.path = Path(path) if path is not None else None
        self._entries: dict[str, ModelResponse] = {}
        self._lock = threading.Lock()
        self.skipped_torn_line = False
        if self.path is not None and self.path.exists():
            self._load(self.path)

    def _load(self, path: Path) -> None:
        from harness.model_client import ModelResponse

        data = path.read_bytes()
        complete_end = data.rfind(b"\n") + 1  # bytes up to the last full line
        if complete_end < len(data):
            self._drop_torn_tail(path, data[complete_end:], complete_end, ModelResponse)
        lines = data[:complete_end].decode("utf-8").split("\n")
        for number, line in enumerate(lines, start=1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
                self._entries[record["key"]] = ModelResponse.model_validate(record["response"])
            except (ValueError, KeyError, TypeError) as exc:
                raise CacheFileError(f"{path}:{number}: unreadable cache line ({exc})") from exc

    def _drop_torn_tail(self, path: Path, tail: bytes, keep: int, response_cls: type) -> None:
        """A last line without its newline: a whole record is kept (newline added), a
        write cut short (a run killed mid-append) is cut off; its call is simply redone."""
        try:
            record = json.loads(tail.decode("utf-8"))
            self._entries[record["key"]] = response_cls.model_validate(record["response"])
        except (ValueError, KeyError, TypeError):
            self.skipped_torn_line = True
            with path.open("r+b") as handle:
                handle.truncate(keep)
            return
        with path.open("ab") as handle:
            handle.write(b"\n")

    def __len__(self) -> int:
        return len(self._entries)

    def __contains__(self, key: str) -> bool:
        return key in self._entries

    def get(self, key: str) -> ModelResponse | None:
        """The stored response for ``key``, or None."""
        return self._entries.get(key)

    def put(self, key: str, response: ModelResponse) -> None:
        """Store ``response`` (in memory, and appended + flushed to the file if any)."""
        with self._lock:
            self._entries[key] = response
            if self.path is None:
                return
            record = {"key": key, "response": response.model_dump(mode="json")}
            line = json.dumps(record, ensure_ascii=False, separators=(",", ":"))
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with self.path.open("a", encoding="utf-8") as handle:
                handle.write(line + "\n")
                handle.flush()
