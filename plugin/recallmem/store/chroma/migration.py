"""Moving a store of layout 1 (one ``<prefix>_facts`` collection of every user's facts)
to layout 2 (a collection per user and the id directory, :mod:`recallmem.store.chroma.layout`).

Resumable and lossless by construction: facts are copied by id (a copy made twice is
one record), the old collection is read, never changed, and it is deleted only after
every id it holds is found in the new layout. A migration killed at any point leaves the
old collection whole; the next run copies again what is missing and finishes. Vectors,
documents and metadata (access times included) are copied as stored: nothing is
re-embedded.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from functools import partial
from typing import Any

from recallmem.config import MemoryConfig
from recallmem.errors import StoreError
from recallmem.store.chroma.client import open_client
from recallmem.store.chroma.failures import store_errors
from recallmem.store.chroma.home_lock import acquire
from recallmem.store.chroma.layout import LEGACY_FACTS_SUFFIX, Collections
from recallmem.store.chroma.workarounds.saved_index import read_saved

log = logging.getLogger("recallmem.store")

MIGRATION_PAGE = 1000  # facts read, grouped by user and written per step
_WHOLE = ["documents", "metadatas", "embeddings"]
Progress = Callable[[int, int], None]


def legacy_collection(client: Any, prefix: str) -> Any | None:
    """The layout-1 facts collection, if this store still has one."""
    from chromadb.errors import NotFoundError

    try:
        return client.get_collection(prefix + LEGACY_FACTS_SUFFIX, embedding_function=None)
    except NotFoundError:
        return None


def pending_migration(
    client: Any, prefix: str, chroma_url: str | None, allowed: bool
) -> int | None:
    """How many facts a store of the older layout holds (None if it is not one); refused
    with the command to run when it may not be migrated now (``allowed`` false)."""
    old = legacy_collection(client, prefix)
    if old is None:
        return None
    if not allowed:
        raise StoreError(
            f"the collection '{prefix}{LEGACY_FACTS_SUFFIX}' holds facts in the older "
            "single-collection layout; migrate it once, with no recallmem worker running: "
            f"`recallmem migrate --chroma-url {chroma_url}` (resumable; nothing is lost if "
            "it is interrupted)"
        )
    return int(old.count())


def legacy_metadata(client: Any, prefix: str) -> dict[str, Any] | None:
    """The embedding model and dimension a layout-1 store recorded (None if none)."""
    old = legacy_collection(client, prefix)
    if old is None:
        return None
    return {k: v for k, v in (old.metadata or {}).items() if k.startswith("embedding_")}


def migrate(collections: Collections, progress: Progress | None = None) -> int:
    """Copy every fact of the layout-1 collection into ``collections``, then delete it;
    returns how many facts it held (0 if there was nothing to migrate)."""
    old = legacy_collection(collections.client, collections.prefix)
    if old is None:
        return 0
    total = int(old.count())
    log.warning("recallmem: migrating '%s' (%d facts) to a collection per user; this runs "
                "once and resumes if interrupted", old.name, total)  # fmt: skip
    offset = 0
    while offset < total:
        page = read_saved(old, partial(old.get, include=_WHOLE, limit=MIGRATION_PAGE,
                                       offset=offset))  # fmt: skip
        if not page["ids"]:
            break
        _copy(collections, page)
        offset += len(page["ids"])
        if progress is not None:
            progress(min(offset, total), total)
    _copy_missing(collections, old)
    collections.client.delete_collection(old.name)
    return total


def _copy(collections: Collections, page: dict[str, Any]) -> None:
    rows_of: dict[str, list[int]] = {}
    for row, meta in enumerate(page["metadatas"]):
        rows_of.setdefault(str(meta["user_id"]), []).append(row)
    collections.register(page["ids"], [str(m["user_id"]) for m in page["metadatas"]])
    for user_id, rows in rows_of.items():
        ids = [page["ids"][r] for r in rows]
        target = collections.writable(user_id)
        target.upsert(
            ids=ids,
            embeddings=[page["embeddings"][r] for r in rows],
            documents=[page["documents"][r] for r in rows],
            metadatas=[page["metadatas"][r] for r in rows],
        )


def _copy_missing(collections: Collections, old: Any) -> None:
    """Copy the ids the paged pass missed (an offset is not a stable cursor if Chroma
    reorders), so the old collection is deleted only when nothing of it is lost."""
    every = old.get(include=[])["ids"]
    for start in range(0, len(every), MIGRATION_PAGE):
        ids = every[start : start + MIGRATION_PAGE]
        owners = collections.owners(ids)
        missing = [i for i in ids if i not in owners]
        found = {i for user in set(owners.values()) for i in _present(collections, owners, user)}
        missing += [i for i in owners if i not in found]
        if missing:
            _copy(collections, read_saved(old, partial(old.get, ids=missing, include=_WHOLE)))


def _present(collections: Collections, owners: dict[str, str], user_id: str) -> list[str]:
    target = collections.of(user_id)
    mine = [i for i, owner in owners.items() if owner == user_id]
    if target is None:
        return []
    return list(target.get(ids=mine, include=[])["ids"])


def migrate_store(config: MemoryConfig, progress: Progress | None = None) -> int | None:
    """``recallmem migrate``: migrate the configured store; returns how many facts were
    moved, or None if it already has the per-user layout. An embedded store is locked
    for the duration (:mod:`recallmem.store.chroma.home_lock`)."""
    lock = None if config.chroma_url else acquire(config.home)
    try:
        client = open_client(config)
        where = config.chroma_url or str(config.chroma_path)
        with store_errors("migrate the store to a collection per user", where):
            metadata = legacy_metadata(client, config.collection)
            if metadata is None:
                return None
            return migrate(Collections(client, config.collection, metadata), progress)
    finally:
        if lock is not None:
            lock.release()
