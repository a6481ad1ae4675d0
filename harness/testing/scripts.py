"""A run's model replies as a script: ``arena calls-to-script RUN --out FILE``, then ``--model mock/script:FILE``.

:func:`script_from_calls` turns a run's ``calls.jsonl`` into the lines of a
:mod:`harness.models.script` script, one per model attempt the run made: each failed
attempt before a reply (``errors``) becomes a failure line of its kind, the reply a reply
line (with its ``finish_reason``); a call answered from the response cache made no
attempt and adds nothing. Every line is tied to its request's messages
(``prompt_sha256``), so ``arena run --model mock/script:FILE`` with the run's other
options answers each request as the run's model did and plays the run again move for
move, at any ``--concurrency``.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from harness.models.replies import TAXONOMY_KINDS
from harness.models.script import ScriptLine, prompt_digest, write_script
from harness.records.entries import CallEntry
from harness.records.transcript import TranscriptReader

_KIND = re.compile(r"[a-z_]+")
_FAILED_CALL = re.compile(r"call failed after (\d+) attempt\(s\): ([a-z_]+)")  # harness.models.client's message


def error_kind(error: str) -> str:
    """The taxonomy kind an attempt's recorded error starts with (``rate_limit (HTTP 429): ...``); ``api_error`` if none."""
    match = _KIND.match(error)
    return match.group(0) if match and match.group(0) in TAXONOMY_KINDS else "api_error"


def call_script_lines(call: CallEntry) -> list[ScriptLine]:
    """The attempts of one recorded call as script lines (none for a cache hit)."""
    if call.cache_hit:
        return []
    digest = prompt_digest(call.messages)
    if call.verdict == "call_failed" and not call.errors:  # its attempts are only counted in the reason
        failed = _FAILED_CALL.search(call.reason or "")
        attempts, kind = (int(failed.group(1)), error_kind(failed.group(2))) if failed else (1, "api_error")
        return [ScriptLine(failure=kind, prompt_sha256=digest) for _ in range(attempts)]
    lines = [ScriptLine(failure=error_kind(error), prompt_sha256=digest) for error in call.errors]
    if call.reply is not None and call.verdict != "call_failed":
        lines.append(ScriptLine(reply=call.reply, finish_reason=call.finish_reason or "stop", prompt_sha256=digest))
    return lines


def script_from_calls(run_dir: str | os.PathLike[str]) -> list[ScriptLine]:
    """Every model attempt of a run, in ``calls.jsonl``'s order, as script lines."""
    return [line for call in TranscriptReader(Path(run_dir)).calls() for line in call_script_lines(call)]


def write_calls_script(run_dir: str | os.PathLike[str], out: str | os.PathLike[str]) -> tuple[Path, int]:
    """Write the run's replies to ``out`` (JSONL); returns the file and its number of lines."""
    lines = script_from_calls(run_dir)
    return write_script(lines, out), len(lines)
