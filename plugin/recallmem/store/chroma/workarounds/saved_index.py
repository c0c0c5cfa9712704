"""Every user's vector index saved on disk, where Chroma can load it again.

Chroma 1.5 keeps a bounded number of collections' vector indexes in memory
(``workarounds/bounded_cache.py``; unbounded, it is the file limit / 5, about 200 on a
default machine) and loads an evicted one back from disk. It saves an index only every
``sync_threshold`` records, so a collection that has not yet reached its first save
(a user of fewer facts than that, or one who deleted them all and wrote a few again) has
nothing to load: once evicted, every read of its vectors fails with "Error creating
hnsw segment reader: Nothing found on disk" until the process restarts, although its
records are intact. Measured: 150 users of 4 facts in one process, 64 open indexes, and
90 of the 150 could not be read on a second pass. A service with more small users than
the cache holds would fail their recalls for the rest of its life.

So a read that meets such an index has it saved (:func:`read_saved`): the collection is
switched to saving at every write (:func:`upgrade`, ``SAVED_EVERY``) and one record's
metadata is rewritten unchanged, which makes Chroma rebuild the index from its log and
save it; then the read runs again. A collection whose every record was deleted (a user
who purged their facts one by one) has no record to rewrite, so a probe record is added
and deleted again: it has no metadata, so no read of a user's records ever matches it,
even if a crash left it behind. That changes nothing a user can see, and the collection
cannot be caught so again. Collections are still created saving every ten
records (``USER_HNSW``): saving at every write made Chroma hang on a full disk more
often (``test_a_write_chroma_half_did_is_reported_at_the_next_open`` hung in 2 of 3
fresh-clone CI runs, and in loops 1-4 of 14 runs, against 1 of 14 at ten).

Upstream behaviour worked around (chromadb==1.5.9): an evicted index that was never
saved failing every read; tests/integration/chroma_upstream/test_upstream_saved_index.py
fails the day that changes.
"""

from __future__ import annotations

import uuid
import warnings
from collections.abc import Callable
from typing import Any, TypeVar

from recallmem.store.chroma.workarounds.settling import settled

SAVED_EVERY = 1  # records between saves of an index a read found unsaved: every write
_NOTHING_ON_DISK = "nothing found on disk"
T = TypeVar("T")


# Recall never searches Chroma's index (each process ranks a user's facts in its own,
# docs/decisions/0078-ranking.md), but Chroma builds one on every write: a sparse graph with a short
# search made a 100-fact upsert into 50k facts 2.2x faster (143 against 313 ms). Saved
# every ten records, a user leaves at most nine rows in the log for a cold open to replay.
USER_HNSW = {
    "space": "cosine", "ef_construction": 10, "max_neighbors": 4,
    "sync_threshold": 10, "batch_size": 10,
}  # fmt: skip


def is_unsaved_index(exc: BaseException) -> bool:
    """Whether Chroma failed to load a vector index that was never saved."""
    return _NOTHING_ON_DISK in str(exc).lower()


def upgrade(handle: Any) -> Any:
    """Make a collection save its index at every write."""
    settings = (getattr(handle, "configuration_json", None) or {}).get("hnsw") or {}
    if settings.get("sync_threshold", SAVED_EVERY) != SAVED_EVERY:
        with warnings.catch_warnings():
            # Chroma re-reads the configuration after the change and warns that a
            # collection without an embedding function has a "legacy" one; recallmem
            # never gives Chroma one on purpose (its default would download a model).
            warnings.simplefilter("ignore", DeprecationWarning)
            handle.modify(configuration={"hnsw": {"sync_threshold": SAVED_EVERY}})
    return handle


def read_saved(handle: Any, read: Callable[[], T], *, dimension: int | None = None) -> T:
    """``read()``, and if Chroma could not load the collection's never-saved index, the
    same read again after saving it; a read meeting another process's write in flight is
    tried again (:mod:`recallmem.store.chroma.workarounds.settling`). ``dimension`` is the
    store's vector dimension: an emptied collection is saved by a probe vector of that
    size (without it, it is not)."""
    try:
        return settled(read)
    except Exception as exc:
        if not is_unsaved_index(exc):
            raise
        save(upgrade(handle), dimension)
    return settled(read)


def save(handle: Any, dimension: int | None) -> None:
    """Have Chroma rebuild the collection's index from its log and save it: one unchanged
    metadata rewrite, or, in a collection with no records left, a probe added and deleted."""
    got = handle.get(limit=1, include=["metadatas"])
    if got["ids"]:
        handle.update(ids=got["ids"], metadatas=got["metadatas"])
    elif dimension:
        probe = f"unsaved-index-probe-{uuid.uuid4().hex}"  # unique: no fact can share it
        handle.add(ids=[probe], embeddings=[[1.0] + [0.0] * (dimension - 1)])
        handle.delete(ids=[probe])
