"""Writes Chroma logged but never applied, counted when an embedded store opens.

Chroma applies each write to its log right away; rows still unapplied at the next open
come from a write that failed after its log append (a disk that filled up between
recallmem's room check and Chroma's write, docs/decisions/0007-full-disk.md). Chroma applies them
at its first read, so a write that was reported as failed then appears. This count is
how that is reported instead of going unnoticed. It is read by a short child process,
read-only, before Chroma opens the file (Chroma links its own SQLite; see scrub).

Upstream behaviour worked around (chromadb==1.5.9): logging a write before applying it;
tests/integration/chroma_upstream/test_upstream_unapplied.py fails the day that changes.
"""

from __future__ import annotations

import logging
from pathlib import Path

from recallmem.store.chroma.workarounds.scrub import CHROMA_FILE
from recallmem.store.chroma.workarounds.sqlite_child import ChildProcessFailedError, run_child

log = logging.getLogger("recallmem.store")

# A log row's topic ends with its collection's id (a UUID, 36 characters): matched by
# the collections' primary key, not by a LIKE that compared every row with every collection
# (a collection per user made that quadratic in the number of users).
_COUNT = """
import sqlite3, sys
db = sqlite3.connect(f"file:{sys.argv[1]}?mode=ro", uri=True, timeout=30)
print(db.execute('''
SELECT COUNT(*) FROM embeddings_queue q
JOIN collections c ON c.id = substr(q.topic, -36)
JOIN segments s ON s.collection = c.id AND s.scope = 'METADATA'
LEFT JOIN max_seq_id m ON m.segment_id = s.id
WHERE q.seq_id > COALESCE(m.seq_id, 0)''').fetchone()[0])
"""
COUNT_TIMEOUT_SECONDS = 60.0


def count_unapplied(chroma_path: Path) -> int:
    """Log rows Chroma has not applied to its records (0 when it cannot tell)."""
    database = chroma_path / CHROMA_FILE
    if not database.exists():
        return 0
    try:
        return int(run_child(_COUNT, str(database), timeout=COUNT_TIMEOUT_SECONDS).strip())
    except (ChildProcessFailedError, ValueError):
        return 0


def report_unapplied(chroma_path: Path) -> int:
    """Count the unapplied writes and warn about them; returns the count."""
    pending = count_unapplied(chroma_path)
    if pending:
        log.warning(
            "recallmem: %s holds %d logged write(s) Chroma never applied, left by a write "
            "that failed earlier (a full disk?). Chroma applies them now, so facts whose "
            "write was reported as failed may be present; check the affected users with "
            "list() or the inspector.",
            chroma_path, pending,
        )  # fmt: skip
    return pending
