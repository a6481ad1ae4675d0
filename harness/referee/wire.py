"""The referee's message channel: JSON objects over a multiprocessing pipe, never pickle.

A pickled message would let the sender run code in the receiver; a JSON object
cannot. Every message is a JSON object with a string ``op``; anything else, or
one larger than :data:`MAX_MESSAGE_BYTES`, is a :class:`ProtocolViolation`.
"""

from __future__ import annotations

import json
import time
from multiprocessing.connection import Connection
from typing import Any

MAX_MESSAGE_BYTES = 1 << 20


class ProtocolViolation(RuntimeError):
    """A message that is not what the protocol allows (not JSON, no op, too large, an unknown op)."""


class AgentProcessGone(RuntimeError):
    """The other end of the pipe closed: the agent process exited or crashed."""


class Wire:
    """One end of the pipe: ``send(op, **fields)`` and ``recv()``, both JSON objects."""

    def __init__(self, connection: Connection) -> None:
        self._connection = connection

    def send(self, op: str, **fields: Any) -> None:
        self._connection.send_bytes(json.dumps({"op": op, **fields}, separators=(",", ":")).encode())

    def recv(self, *expected: str, spin_s: float = 0.0) -> dict[str, Any]:
        """The next message; with ``expected`` ops given, any other op is a :class:`ProtocolViolation`.

        ``spin_s``: poll without sleeping for up to that long first (an answer due in
        well under a millisecond then arrives without waking a sleeping process).
        """
        if spin_s > 0:
            deadline = time.perf_counter() + spin_s
            while not self._connection.poll(0) and time.perf_counter() < deadline:
                pass
        try:
            raw = self._connection.recv_bytes(MAX_MESSAGE_BYTES)
        except (EOFError, ConnectionResetError):  # a socket's peer that exited with unread data resets it
            raise AgentProcessGone("the other end of the referee's pipe closed (the process exited)") from None
        except OSError as error:
            raise ProtocolViolation(
                f"unreadable message ({error}); messages are JSON objects of at most {MAX_MESSAGE_BYTES} bytes"
            ) from None
        try:
            message = json.loads(raw)
        except (UnicodeDecodeError, json.JSONDecodeError):
            raise ProtocolViolation(f"a message that is not JSON: {raw[:80]!r}") from None
        if not isinstance(message, dict) or not isinstance(message.get("op"), str):
            raise ProtocolViolation(f"a message must be a JSON object with a string 'op', got {str(message)[:80]}")
        if expected and message["op"] not in expected:
            raise ProtocolViolation(f"expected one of {', '.join(expected)}, got op {message['op']!r}")
        return message

    def poll(self) -> bool:
        """Whether a message (or the end of the pipe) can be read now, without waiting."""
        return self._connection.poll(0)

    def fileno(self) -> int:
        """The pipe's descriptor, for an event loop's reader."""
        return self._connection.fileno()

    def close(self) -> None:
        self._connection.close()


def int_field(message: dict[str, Any], name: str) -> int:
    value = message.get(name)
    if isinstance(value, bool) or not isinstance(value, int):
        raise ProtocolViolation(f"op {message.get('op')!r}: field {name!r} must be an integer, got {value!r}")
    return value


def int_list(message: dict[str, Any], name: str, limit: int) -> list[int]:
    value = message.get(name)
    if not isinstance(value, list) or len(value) > limit or any(isinstance(v, bool) or not isinstance(v, int) for v in value):
        raise ProtocolViolation(f"op {message.get('op')!r}: field {name!r} must be a list of at most {limit} integers")
    return value
