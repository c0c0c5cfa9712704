"""Two indexes that embedded Chroma 1.5's SQLite lacks, which a collection per user needs.

Chroma's embedded database looks a collection's segments up with ``WHERE collection =
?`` on every read and write, and its log with ``WHERE topic = ? AND seq_id > ?`` (and a
``DELETE`` of the same shape) at each process's first touch of a collection; neither
column is indexed, so both scan their whole table. With a collection per user
(:mod:`recallmem.store.chroma.layout`) those tables grow with the number of users: two
segments per collection, and about one log row per collection (Chroma keeps a
collection's last log record, with its vector, after persisting it). So every Chroma
call paid for every user: at 100k facts (1,000 users) a user's first read took 10 ms
before its rows were read and a repeated read 1.4 ms; with these indexes 4.5 and
0.6 ms (docs/decisions/0003-storage-layout.md).

The indexes change no data and no query's answer, only how SQLite finds rows: Chroma
keeps them up to date as it does its own. They are added when an embedded store is
opened (this process holds the home's lock), in milliseconds even on a large store, by
a short child process: Chroma's Rust core links its own SQLite, and two SQLite libraries
in one process corrupt a database (:mod:`recallmem.store.chroma.workarounds.scrub`).
Failing to add them costs speed, never correctness, so a failure is logged and the store
opens without them. A Chroma server's database is the server's: its operator adds them with the same
statements (docs/deployment.md).

Upstream behaviour worked around (chromadb==1.5.9): looking segments and log rows up by
columns it does not index;
tests/integration/chroma_upstream/test_upstream_sqlite_indexes.py fails the day that
changes.
"""

from __future__ import annotations

import logging
import sys
from pathlib import Path

from recallmem.store.chroma.workarounds.scrub import CHROMA_FILE
from recallmem.store.chroma.workarounds.sqlite_child import ChildProcessFailedError, run_child

log = logging.getLogger("recallmem.store")

# Named after recallmem so that they can never clash with an index Chroma adds.
INDEXES = {
    "recallmem_segments_collection": "segments (collection)",
    "recallmem_embeddings_queue_topic": "embeddings_queue (topic, seq_id)",
}
_ADD = """
import sqlite3, sys
db = sqlite3.connect(sys.argv[1], timeout=30, isolation_level=None)
for statement in sys.argv[2:]:
    db.execute(statement)
db.close()
"""
ADD_TIMEOUT_SECONDS = 60.0


def index_statements() -> list[str]:
    """The SQL that adds the indexes where they are missing."""
    return [f"CREATE INDEX IF NOT EXISTS {name} ON {on}" for name, on in INDEXES.items()]


def add_lookup_indexes(chroma_path: Path) -> bool:
    """Add the indexes to the embedded database under ``chroma_path`` where it lacks
    them; whether it has them now (a failure is logged: the store works without them)."""
    database = chroma_path / CHROMA_FILE
    failure = _add(database) if database.exists() else "no database file"
    if failure:
        log.warning(
            "recallmem: could not add lookup indexes to %s (%s); the store works without "
            "them, but each read costs more as users are added",
            database, failure,
        )  # fmt: skip
    return not failure


def _add(database: Path) -> str:
    """Run the statements on ``database`` in a child process; what failed, or ''."""
    try:
        run_child(_ADD, str(database), *index_statements(), timeout=ADD_TIMEOUT_SECONDS)
    except ChildProcessFailedError as exc:
        return str(exc)
    return ""


def main(argv: list[str]) -> int:
    """``python -m recallmem.store.chroma.workarounds.sqlite_indexes CHROMA_DIR``: add the
    indexes to a Chroma server's directory (safe while the server runs: SQLite locks the
    file between processes, and adding them takes milliseconds)."""
    if len(argv) != 1 or not (Path(argv[0]) / CHROMA_FILE).exists():
        print(f"usage: python -m {__spec__.name} DIR  (DIR holds {CHROMA_FILE})")
        return 2
    return 0 if add_lookup_indexes(Path(argv[0])) else 1


if __name__ == "__main__":
    logging.basicConfig(level=logging.WARNING)
    sys.exit(main(sys.argv[1:]))
