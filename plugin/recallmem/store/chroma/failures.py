"""What a failed store call means, and the room a write needs before it starts.

Embedded Chroma appends a write to its log, then applies it; on a full disk the append
can succeed and the apply fail, and from then on every read fails too (each read first
applies the log) until space is freed, when the "failed" write appears after all. So
writes to an embedded store are refused up front while the disk has less free space
than the write needs plus a reserve: a refused write did not happen, and the reserve
stays free for reads and for Chroma to finish what it started.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from recallmem.durability.whole_files import disk_full_message, is_disk_full
from recallmem.errors import BrokenIndexError, DiskFullError, EmbeddingMismatchError, StoreError

# Left free for reads, the log's own bookkeeping and SQLite's rollback journal.
DISK_RESERVE_BYTES = 1024 * 1024
# What one written byte costs on disk: the log copy, the record, the full-text index
# (trigrams), the vector index and journal pages (measured about 6x; rounded up).
WRITE_AMPLIFICATION = 8
# What Chroma 1.5 says of a collection whose vector index files were saved by a process
# killed before it saved their id map and log position: replaying the log then deletes
# or reads labels the files no longer hold (docs/decisions/0009-broken-vector-index.md).
_BROKEN_INDEX_TEXT = (
    "failed to apply logs to the hnsw segment",
    "error getting embedding",
    "error loading hnsw index",
    # The id map cut short or missing: a process killed while Chroma wrote it.
    "error deserializing pickle file",
    "error opening pickle file",
)


def is_broken_index(exc: BaseException) -> bool:
    """Whether Chroma failed on a vector index a crash left inconsistent with its records."""
    return any(text in str(exc).lower() for text in _BROKEN_INDEX_TEXT)


def broken_index_message(collection: str, where: str, action: str) -> str:
    """The error text of a read that met a vector index a crash left behind."""
    return (
        f"could not {action}: the vector index of Chroma collection {collection} in {where} "
        "was left inconsistent with its records by a process killed while writing it (the "
        "records themselves are intact). Run maintenance for the user (`recallmem "
        "maintain --user ID`, or Memory.maintain(user_id=...)) to rebuild it from the "
        "records; erasing the user (forget --purge) works without it."
    )


@contextmanager
def store_errors(action: str, where: str, *, collection: str | None = None) -> Iterator[None]:
    """Turn whatever the store raised into a :class:`StoreError` that says what to do;
    a read of ``collection`` that meets a broken vector index raises BrokenIndexError."""
    try:
        yield
    except (EmbeddingMismatchError, StoreError):
        raise
    except Exception as exc:
        if collection is not None and is_broken_index(exc):
            message = broken_index_message(collection, where, action)
            raise BrokenIndexError(message, collection) from exc
        if is_disk_full(exc):
            detail = f"{type(exc).__name__}: {exc}"
            raise DiskFullError(disk_full_message(where, action, detail)) from exc
        if isinstance(exc, OSError):
            raise StoreError(
                f"could not {action} in {where}: {exc}. Check that the data directory is "
                "writable and the disk is not full."
            ) from exc
        raise StoreError(f"could not {action} in {where}: {type(exc).__name__}: {exc}") from exc


def check_room(path: Path | None, payload_bytes: int, action: str) -> None:
    """Refuse a write to the embedded store at ``path`` that the disk cannot hold.

    ``path`` is None for a Chroma server, which manages its own disk.
    """
    if path is None:
        return
    needed = payload_bytes * WRITE_AMPLIFICATION + DISK_RESERVE_BYTES
    try:
        free = shutil.disk_usage(path).free
    except OSError:
        return  # cannot tell: let the write try and report what it meets
    if free < needed:
        detail = f"{free // 1024} KiB free, this write needs about {needed // 1024} KiB"
        raise DiskFullError(disk_full_message(str(path), action, detail) + " Nothing was written.")
