"""SQL of ours on Chroma's database file, run by a short child process.

Chroma's Rust core links its own SQLite. Two SQLite libraries in one process drop each
other's POSIX locks on a file, which can corrupt it, so every statement recallmem runs
on ``chroma.sqlite3`` (the scrub, the lookup indexes, the count of unapplied log rows,
reading records to rebuild a collection) runs in a child: :func:`run_child`.

Upstream behaviour worked around (chromadb==1.5.9): its core carrying a SQLite of its
own; tests/integration/chroma_upstream/test_upstream_sqlite_child.py fails the day that
changes.
"""

from __future__ import annotations

import subprocess
import sys


class ChildProcessFailedError(Exception):
    """The child could not run, or exited with an error (the message says which)."""


def run_child(code: str, *args: str, timeout: float) -> str:
    """Run the Python ``code`` with ``args`` as ``sys.argv[1:]`` in a child process and
    return what it printed; raises ChildProcessFailedError with its last line of error output."""
    try:
        done = subprocess.run(
            [sys.executable, "-c", code, *args], capture_output=True, text=True, timeout=timeout
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise ChildProcessFailedError(str(exc)) from exc
    if done.returncode != 0:
        lines = done.stderr.strip().splitlines()
        raise ChildProcessFailedError(lines[-1] if lines else f"exit {done.returncode}")
    return done.stdout
