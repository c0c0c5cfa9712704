"""Opening the fact store: the home's lock, Chroma's client, then what a crash or an
older version left (lookup indexes, broken shared collections, the older layout).

An embedded store is first locked to this process
(:mod:`recallmem.store.chroma.home_lock`); before Chroma opens, the log rows it never
applied are counted (workarounds/unapplied.py); after, its SQLite gets the lookup indexes
it lacks (workarounds/sqlite_indexes.py) and a shared collection a crash left unreadable
is rebuilt (workarounds/rebuild.py), and a purge a crash interrupted before its scrub is
scrubbed (durability/owed_scrub.py). A store of the older single-collection layout is
migrated (store/chroma/migration.py).
"""

from __future__ import annotations

from recallmem.config import MemoryConfig
from recallmem.durability.owed_scrub import complete_owed_scrub
from recallmem.durability.sqlite_scrub import scrub_sqlite
from recallmem.store.chroma.adapter import ChromaFactStore
from recallmem.store.chroma.client import open_client
from recallmem.store.chroma.failures import store_errors
from recallmem.store.chroma.home_lock import acquire
from recallmem.store.chroma.migration import Progress, migrate, pending_migration
from recallmem.store.chroma.workarounds.cut_index import cut_collections
from recallmem.store.chroma.workarounds.heap_perturb import wipe_heap_blocks
from recallmem.store.chroma.workarounds.rebuild import repair_shared_collections
from recallmem.store.chroma.workarounds.scrub import scrub_chroma
from recallmem.store.chroma.workarounds.sqlite_indexes import add_lookup_indexes
from recallmem.store.chroma.workarounds.unapplied import report_unapplied


def open_store(
    config: MemoryConfig,
    embedder: str | None,
    dimension: int | None,
    *,
    migrate_now: bool | None = None,
    progress: Progress | None = None,
) -> ChromaFactStore:
    """The fact store ``config`` names; an embedded one is first locked to this process
    (:mod:`recallmem.store.chroma.home_lock`), and unlocked again if opening fails.
    ``embedder`` is the name the store must have recorded (None: any; only a re-embedding
    opens so).

    A store of the older layout is migrated first (``migrate_now``): by default an
    embedded one (this process holds it alone), while a server's is refused with the
    command to run, since other workers may be using it.
    """
    lock = None if config.chroma_url else acquire(config.home)
    try:
        unapplied = 0
        cut: set[str] = set()
        if lock is not None:
            wipe_heap_blocks()  # the in-process vector index persists unused heap bytes
            unapplied = report_unapplied(config.chroma_path)
            cut = cut_collections(config.chroma_path)  # before Chroma loads any index
        client = open_client(config)
        if lock is not None:  # after the client: Chroma has created its tables by then
            add_lookup_indexes(config.chroma_path)
            repair_shared_collections(client, config, cut)
            complete_owed_scrub(config.home, lambda: _scrub_home(config))
        allowed = lock is not None if migrate_now is None else migrate_now
        with store_errors("look for a store of the older layout", str(config.chroma_url)):
            old = pending_migration(client, config.collection, config.chroma_url, allowed)
        store = ChromaFactStore(
            client, config.collection, embedder, dimension,
            path=None if config.chroma_url else config.chroma_path, lock=lock,
        )  # fmt: skip
        store.collections.cut |= cut
        if old is not None:
            with store._errors("migrate the store to a collection per user"):
                store.migrated = migrate(store.collections, progress)
        store.unapplied_at_open = unapplied
        return store
    except BaseException:
        if lock is not None:
            lock.release()
        raise


def _scrub_home(config: MemoryConfig) -> None:
    # what a purge leaves bytes in: Chroma's file, then our SQLite files (the extraction
    # queue's, the retrieval records')
    scrub_chroma(config.chroma_path)
    scrub_sqlite(config.queue_path)
    scrub_sqlite(config.retrievals_path)
