"""After a purge, no byte of the purged text may stay in any file under the home.

Deleting a record leaves its text in three places SQLite and Chroma keep for their own
reasons: Chroma's write-ahead log (``embeddings_queue``, purged only when the vector
index is next persisted), the segments of its full-text index until they are merged,
and the free pages of the database file. So after a purge:

- Chroma's log rows of every id whose last logged operation is a delete are emptied of
  their metadata and document. Replaying the log (Chroma does at start) then writes an
  empty record and deletes it again: the outcome is unchanged. Vectors stay: they are
  needed for that replay and hold no text. So are the rows of an id written whole again
  later (an add or upsert, whose metadata a replay merges over them): a copy rewritten
  when its source user was erased (persistence/erased_copies.py), an edited fact's text.
- The full-text index is merged (``optimize``), which drops deleted entries.
- ``VACUUM`` rewrites the file without free pages.

Chroma's file is scrubbed by a short child process that only runs the SQL below
(store/chroma/workarounds/sqlite_child.py says why). The extraction queue belongs to Python's
``sqlite3`` and is scrubbed in-process.

Upstream behaviour worked around (chromadb==1.5.9): a delete leaving the text in its
log, full-text index and free pages;
tests/integration/chroma_upstream/test_upstream_scrub.py fails the day that changes.
"""

from __future__ import annotations

import sys
from pathlib import Path

from recallmem.durability.sqlite_scrub import unscrubbed_error
from recallmem.errors import StoreError
from recallmem.store.chroma.workarounds.sqlite_child import ChildProcessFailedError, run_child

_CHROMA_SCRUB = """
import sqlite3, sys
db = sqlite3.connect(sys.argv[1], timeout=60, isolation_level=None)
db.execute("BEGIN IMMEDIATE")
db.execute('''
UPDATE embeddings_queue SET metadata = '{}'
WHERE operation != 3 AND metadata IS NOT NULL AND metadata != '{}' AND EXISTS (
  SELECT 1 FROM embeddings_queue AS gone
  WHERE gone.topic = embeddings_queue.topic AND gone.id = embeddings_queue.id
    AND gone.operation = 3 AND gone.seq_id > embeddings_queue.seq_id
    AND NOT EXISTS (
      SELECT 1 FROM embeddings_queue AS later
      WHERE later.topic = gone.topic AND later.id = gone.id
        AND later.seq_id > gone.seq_id AND later.operation != 3))''')
db.execute('''
UPDATE embeddings_queue SET metadata = '{}'
WHERE metadata IS NOT NULL AND metadata != '{}' AND EXISTS (
  SELECT 1 FROM embeddings_queue AS later
  WHERE later.topic = embeddings_queue.topic AND later.id = embeddings_queue.id
    AND later.seq_id > embeddings_queue.seq_id AND later.operation IN (0, 2))''')
db.execute("INSERT INTO embedding_fulltext_search(embedding_fulltext_search) VALUES('optimize')")
db.execute("COMMIT")
db.execute("VACUUM")
db.close()
"""
CHROMA_FILE = "chroma.sqlite3"
SCRUB_TIMEOUT_SECONDS = 600.0


def scrub_chroma(chroma_path: Path) -> None:
    """Erase the leftovers of deleted records from the embedded Chroma database."""
    database = chroma_path / CHROMA_FILE
    if not database.exists():
        return
    try:
        run_child(_CHROMA_SCRUB, str(database), timeout=SCRUB_TIMEOUT_SECONDS)
    except ChildProcessFailedError as exc:
        raise unscrubbed_error(database, exc) from exc


def main(argv: list[str]) -> int:
    """``python -m recallmem.store.chroma.workarounds.scrub CHROMA_DIR``: scrub a Chroma
    server's directory after purges (safe while the server runs: SQLite locks the file
    between processes)."""
    if len(argv) != 1 or not (Path(argv[0]) / CHROMA_FILE).exists():
        print(f"usage: python -m {__spec__.name} DIR  (DIR holds {CHROMA_FILE})")
        return 2
    try:
        scrub_chroma(Path(argv[0]))
    except StoreError as exc:
        print(f"recallmem: error: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
