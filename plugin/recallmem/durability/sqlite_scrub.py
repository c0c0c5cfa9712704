"""Rewriting a SQLite file of ours so that deleted rows leave no bytes behind.

A deleted row's bytes stay in SQLite's free pages and write-ahead log until the file is
rewritten: after a purge, the extraction queue (which holds the words facts came from)
is checkpointed and vacuumed. Chroma's own file needs more (store/chroma/workarounds/
scrub.py).
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

from recallmem.durability.whole_files import is_disk_full
from recallmem.errors import DiskFullError, StoreError


def scrub_sqlite(path: Path) -> None:
    """Rewrite a SQLite file of ours (WAL mode) so deleted rows leave no bytes behind."""
    if not path.exists():
        return
    try:
        db = sqlite3.connect(path, timeout=60, isolation_level=None)
        try:
            db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            db.execute("VACUUM")
            db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        finally:
            db.close()
    except sqlite3.Error as exc:
        raise unscrubbed_error(path, exc) from exc


def unscrubbed_error(path: Path, exc: BaseException) -> StoreError:
    """The error of a file that could not be rewritten after a purge."""
    message = (
        f"the facts are erased, but {path} could not be rewritten to drop their bytes "
        f"({exc}); purge again, or run `sqlite3 {path} VACUUM` while no process uses it"
    )
    # A rewrite needs room for a copy of the file: on a full disk, say so (503).
    return DiskFullError(f"disk full: {message}") if is_disk_full(exc) else StoreError(message)
