"""A run's commitment to its hidden condition: a salted sha256 in the manifest from the start, revealed at the end.

``arena run`` calls :func:`commit` before the first game: the manifest keeps the
digest (``RunManifest.condition_sha256``), the salt goes to :data:`SALT_FILE` in the
run directory (mode 0600, so a resumed run can still reveal it). At the end
``metrics.json`` and ``report.md`` reveal the condition's canonical text and the
salt; ``arena replay`` checks with :func:`verify` that they give the manifest's
digest and that the text is the environment's real condition.

The digest alone says nothing about K (the salt is 128 random bits). The limit: the
salt file sits in the run directory, so a process that can read that directory can
read it, as it can read ``metrics.json`` (which reveals K) once a run has ended. The
agent of a refereed run plays in another process that is never told the run
directory's path.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import secrets
from pathlib import Path

from engine.condition import Condition

SALT_FILE = ".commitment_salt"
SALT_BYTES = 16


def condition_text(condition: Condition) -> str:
    """The canonical text of ``condition``: K as an exact fraction, the turn limit, its counting, the label."""
    k = condition.k
    limit = "none" if condition.turn_limit is None else str(condition.turn_limit)
    return f"k={k.numerator}/{k.denominator}; turn_limit={limit}; turn_counting={condition.turn_counting}; label={condition.label}"


def digest(text: str, salt: str) -> str:
    """sha256 (hex) over the salt, a newline and the condition's canonical text."""
    return hashlib.sha256(f"{salt}\n{text}".encode()).hexdigest()


def commit(condition: Condition) -> tuple[str, str]:
    """(salt, digest): a fresh random salt (hex) and the sha256 committing to ``condition`` with it."""
    salt = secrets.token_hex(SALT_BYTES)
    return salt, digest(condition_text(condition), salt)


def verify(text: str, salt: str, expected: str) -> bool:
    """True iff the condition text and the salt give the committed digest ``expected``."""
    return hmac.compare_digest(digest(text, salt), expected.lower())


def write_salt(run_dir: Path, salt: str) -> Path:
    """Keep the salt in the run directory, readable by its owner only (0600), for the end of a resumed run."""
    path = Path(run_dir) / SALT_FILE
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(descriptor, "w", encoding="utf-8") as handle:
        handle.write(salt + "\n")
    return path


def read_salt(run_dir: Path) -> str | None:
    """The salt kept by :func:`write_salt`, or None if the run has none (a run from before commitments)."""
    try:
        return (Path(run_dir) / SALT_FILE).read_text(encoding="utf-8").strip() or None
    except FileNotFoundError:
        return None
