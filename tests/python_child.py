"""A fresh Python interpreter for tests that must see a process from its start (not a test module)."""

from __future__ import annotations

import subprocess
import sys


def run_python(code: str) -> subprocess.CompletedProcess[str]:
    """``python -c code`` with this interpreter, its output captured as text; CalledProcessError if it fails."""
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
