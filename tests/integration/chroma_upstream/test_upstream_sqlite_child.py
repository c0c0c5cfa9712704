"""Canary of store/chroma/workarounds/sqlite_child.py.

chromadb 1.5.9's compiled core carries its own SQLite rather than the system's that
Python's ``sqlite3`` uses; two SQLite libraries in one process drop each other's POSIX
locks on a file, so recallmem's SQL on Chroma's file runs in a child process. If this
fails, the core links a shared SQLite: check it is the one ``sqlite3`` loads, and run
that SQL in-process (delete the workaround).
"""

from __future__ import annotations

import subprocess

from upstream import BINDINGS, LIBRARY


def test_chromas_core_carries_its_own_sqlite() -> None:
    assert b"SQLite format 3" in BINDINGS  # SQLite's file header, compiled in
    linked = subprocess.run(["ldd", str(LIBRARY)], capture_output=True, text=True).stdout
    assert "sqlite" not in linked.lower()  # not the shared library sqlite3 loads
