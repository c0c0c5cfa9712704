"""Rewriting a SQLite file of ours so that deleted rows leave no bytes behind.

A deleted row's bytes stay in SQLite's free pages and write-ahead log until the file is
rewritten: after a purge, the extraction queue (which holds the words facts came from)
is checkpointed and vacuumed. Chroma's own file needs more (store/chroma/workarounds/
scrub.py).
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

from recallmem.errors import StoreError


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
        raise StoreError(unscrubbed_message(path, str(exc))) from exc


def unscrubbed_message(path: Path, why: str) -> str:
    """The error text of a file that could not be rewritten after a purge."""
    return (
        f"the facts are erased, but {path} could not be rewritten to drop their bytes "
        f"({why}); purge again, or run `sqlite3 {path} VACUUM` while no process uses it"
    )
