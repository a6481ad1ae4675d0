"""Hold a run directory's writer lock until killed (a second terminal's ``arena run``, stopped mid-run)."""

import sys
import threading
from pathlib import Path

from harness.records.lock import writer_lock

if __name__ == "__main__":
    with writer_lock(Path(sys.argv[1])):
        print("locked", flush=True)
        threading.Event().wait()  # until killed
