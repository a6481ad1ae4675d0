"""The sandbox tests' limits (a module of its own: ``conftest`` is not a unique name to import across test folders)."""

from __future__ import annotations

from harness.sandbox.limits import Limits

TEST_LIMITS = Limits(call_s=20.0, start_s=20.0, memory_bytes=512 << 20, processes=8)
