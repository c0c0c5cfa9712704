"""Every user's vector index saved on disk, where Chroma can load it again.

Chroma 1.5 keeps a bounded number of collections' vector indexes in memory
(``store/bounded.py``; unbounded, it is the file limit / 5, about 200 on a default
machine) and loads an evicted one back from disk. It saves an index only every
``sync_threshold`` records, so a collection that has not yet reached its first save
(a user of fewer facts than that, or one who deleted them all and wrote a few again) has
nothing to load: once evicted, every read of its vectors fails with "Error creating
hnsw segment reader: Nothing found on disk" until the process restarts, although its
records are intact. Measured: 150 users of 4 facts in one process, 64 open indexes, and
90 of the 150 could not be read on a second pass. A service with more small users than
the cache holds would fail their recalls for the rest of its life.

So each user's collection saves its index at every write (``SAVED_EVERY``), while
records are still applied to it in batches of ten (``USER_HNSW``). Measured on raw
Chroma (512 dimensions, a loaded machine): a 100-fact upsert 36.5 against 35.0 ms, a new
user with 5 facts 15.2 against 11.7 ms, the CPU time of both unchanged; and the log no
longer holds rows to replay at a cold open.

A collection created before this setting is upgraded at its first write in a process
(:func:`upgrade`), and a read that meets one never saved since has it saved
(:func:`read_saved`) by rewriting one record's metadata unchanged, which makes Chroma
rebuild the index from its log and save it; that changes nothing a user can see.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any, TypeVar

SAVED_EVERY = 1  # records between saves of a user's vector index: every write
_NOTHING_ON_DISK = "nothing found on disk"
T = TypeVar("T")


# Recall never searches Chroma's index (each process ranks a user's facts in its own,
# docs/architecture.md), but Chroma builds one on every write: a sparse graph with a short
# search made a 100-fact upsert into 50k facts 2.2x faster (143 against 313 ms). Records
# are applied in batches of ten; at one, a 100-fact upsert cost twice as much.
USER_HNSW = {
    "space": "cosine", "ef_construction": 10, "max_neighbors": 4,
    "sync_threshold": SAVED_EVERY, "batch_size": 10,
}  # fmt: skip


def is_unsaved_index(exc: BaseException) -> bool:
    """Whether Chroma failed to load a vector index that was never saved."""
    return _NOTHING_ON_DISK in str(exc).lower()


def upgrade(handle: Any) -> Any:
    """Make a collection created with an older setting save its index at every write."""
    settings = (getattr(handle, "configuration_json", None) or {}).get("hnsw") or {}
    if settings.get("sync_threshold", SAVED_EVERY) != SAVED_EVERY:
        with warnings.catch_warnings():
            # Chroma re-reads the configuration after the change and warns that a
            # collection without an embedding function has a "legacy" one; recallmem
            # never gives Chroma one on purpose (its default would download a model).
            warnings.simplefilter("ignore", DeprecationWarning)
            handle.modify(configuration={"hnsw": {"sync_threshold": SAVED_EVERY}})
    return handle


def read_saved(handle: Any, read: Callable[[], T]) -> T:
    """``read()``, and if Chroma could not load the collection's never-saved index, the
    same read again after saving it (one unchanged metadata rewrite)."""
    try:
        return read()
    except Exception as exc:
        if not is_unsaved_index(exc):
            raise
        save(upgrade(handle))
    return read()


def save(handle: Any) -> None:
    """Have Chroma rebuild the collection's index from its log and save it."""
    got = handle.get(limit=1, include=["metadatas"])
    if got["ids"]:
        handle.update(ids=got["ids"], metadatas=got["metadatas"])
