"""Canary of store/chroma/workarounds/unapplied.py.

chromadb 1.5.9 logs a write (``embeddings_queue``) before applying it, and records how
far each segment applied the log (``max_seq_id``); the workaround counts the rows not
applied yet when an embedded store opens. If this fails, those tables changed: count
what Chroma's successor keeps, or delete the workaround if it applies writes atomically.
"""

from __future__ import annotations

from pathlib import Path

from recallmem.store.chroma.workarounds.scrub import CHROMA_FILE
from recallmem.store.chroma.workarounds.sqlite_child import run_child
from recallmem.store.chroma.workarounds.unapplied import _COUNT
from upstream import plain_client


def test_the_log_and_its_applied_position_are_where_the_count_reads_them(
    tmp_path: Path,
) -> None:
    with plain_client(tmp_path) as client:
        client.create_collection("canary", embedding_function=None).add(
            ids=["a", "b"], embeddings=[[1.0, 0.0], [0.0, 1.0]], metadatas=[{"n": 1}, {"n": 2}]
        )
    # raises ChildProcessFailedError (naming the SQL error) if a table or column is gone
    assert run_child(_COUNT, str(tmp_path / CHROMA_FILE), timeout=60).strip() == "0"
