"""The Chroma shell: reading and writing facts, scopes and profiles (opened by
:mod:`recallmem.store.chroma.opening`).

Per prefix: a collection per user holding the user's facts with their vectors, the id
directory ``<prefix>_ids`` (:mod:`recallmem.store.chroma.layout`), and
``<prefix>_scopes`` (per user: the write sequence, :mod:`recallmem.store.chroma.revisions`,
the profiles, and which users hold copies of whose facts,
:mod:`recallmem.store.chroma.copy_links`). A store of the older single-collection layout
is migrated when opened (:mod:`recallmem.store.chroma.migration`). We always pass our own
vectors: Chroma is never given the chance to fall back to its default embedding
function, which would try to download a model.
"""

from __future__ import annotations

import shutil
import threading
import weakref
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np

from recallmem.durability.whole_files import disk_full_message
from recallmem.errors import DiskFullError
from recallmem.store.chroma.built_with import BuiltWith
from recallmem.store.chroma.codec import decode, encode, scope_where
from recallmem.store.chroma.copy_links import CopyLinks
from recallmem.store.chroma.failures import (
    DISK_RESERVE_BYTES,
    check_room,
    store_errors,
)
from recallmem.store.chroma.home_lock import HomeLock
from recallmem.store.chroma.layout import SCOPES_SUFFIX, Collections, user_collection
from recallmem.store.chroma.migration import legacy_metadata
from recallmem.store.chroma.profile_records import ProfileRecords
from recallmem.store.chroma.revisions import Revisions
from recallmem.store.chroma.workarounds.saved_index import read_saved
from recallmem.store.chroma.workarounds.scrub import scrub_chroma
from recallmem.store.chroma.workarounds.segments import stored_facts
from recallmem.store.fact_store import HomeHold
from recallmem.types import Fact, Profile

_SCOPE_VECTOR = [1.0]  # the scopes collection is looked up by id only
_READ_PAGE = 5000  # ids per get/delete: SQLite caps the variables of one query
_WRITE_BATCH = 2000  # below Chroma's max batch size, large enough to amortise calls
_WHOLE = ["documents", "metadatas", "embeddings"]


def _close(client: Any, lock: HomeLock | None) -> None:
    try:
        if lock is not None:  # a server client holds no files; only embedded ones are closed
            client.close()
    finally:
        if lock is not None:
            lock.release()


class ChromaFactStore:
    """Facts, revisions and profiles in Chroma (:class:`~recallmem.store.fact_store.
    FactStore`). Every read and delete is scoped by user.

    ``path`` is the embedded database's directory (None for a Chroma server): writes
    check the room they need there first. ``lock`` is this process's hold on the home,
    given back by :meth:`close` (or when the store is garbage-collected). ``read_page``
    is how many records one Chroma call reads or deletes.
    """

    def __init__(
        self,
        client: Any,
        prefix: str,
        embedder: str | None,
        dimension: int | None = None,
        *,
        path: Path | None = None,
        lock: HomeLock | None = None,
        read_page: int = _READ_PAGE,
    ) -> None:
        self.read_page = read_page
        self._prefix = prefix
        self.path = path
        self.lock = lock
        self.where = str(path) if path is not None else "the Chroma server"
        self.kind = "chroma-embedded" if path is not None else "chroma-server"
        self.unapplied_at_open = 0  # logged writes Chroma had not applied (unapplied.py)
        self.migrated = 0  # facts moved from the older layout when this store opened
        self._closer = weakref.finalize(self, _close, client, lock)
        self._scrub_lock = threading.Lock()
        self.disk_full = False  # a call found the disk full (refuse_if_full)
        # Without a declared dimension, the store's recorded one is used, or the first
        # write records it: opening never embeds anything (an API call for most embedders).
        metadata: dict[str, Any] = {"embedding_model": embedder} if embedder else {}
        if dimension is not None:
            metadata["embedding_dim"] = dimension
        with self._errors("open the recallmem collections"):
            metadata = legacy_metadata(client, prefix) or metadata  # what a store recorded
            self.collections = Collections(client, prefix, metadata, path)
            self._scopes = client.get_or_create_collection(
                f"{prefix}{SCOPES_SUFFIX}", embedding_function=None
            )
        self.revisions = Revisions(self._scopes, self.where)  # store/chroma/revisions.py
        self.copy_links = CopyLinks(self._scopes, self.where)  # store/chroma/copy_links.py
        self.profiles = ProfileRecords(self._scopes, self.where)
        self._built_with = BuiltWith(self.collections.directory, prefix, embedder, dimension)
        self.embedder = self._built_with.embedder

    @contextmanager
    def _errors(self, action: str) -> Iterator[None]:
        try:
            with store_errors(action, self.where):
                yield
        except DiskFullError:
            self.disk_full = True
            raise

    def refuse_if_full(self) -> None:
        """Refuse a write before anything is read while the disk a call found full is
        still short of room: asked again on a full disk, Chroma can hang, not fail."""
        if self.disk_full and self.path is not None:
            if shutil.disk_usage(self.path).free < 2 * DISK_RESERVE_BYTES:
                raise DiskFullError(disk_full_message(self.where, "write", "no room yet"))
            self.disk_full = False

    def close(self) -> None:
        """Release the Chroma client and this process's lock on the home (idempotent)."""
        self._closer()

    def hold(self) -> HomeHold:
        """This process's hold on the embedded home; a Chroma server needs none."""
        return HomeHold(mode="none", held=True) if self.lock is None else self.lock.hold()

    def announce(self, serve_url: str, *, open_access: bool) -> None:
        """Name the service in the home's lock file (the CLI reads it); a server: nothing."""
        if self.lock is not None:
            self.lock.announce(serve_url, open_access=open_access)

    # write sequences (revisions.py) --------------------------------------------

    def latest_revision(self, user_id: str) -> int:
        """The number of the user's last claimed write (0: never written)."""
        return self.revisions.latest(user_id)

    def is_current(self, user_id: str, revision: int) -> bool:
        """Whether an index reflecting writes up to ``revision`` misses none."""
        return self.revisions.is_current(user_id, revision)

    def record_write(self, user_id: str, revision: int) -> int:
        """Claim the user's next number (:meth:`Revisions.record_write`)."""
        return self.revisions.record_write(user_id, revision)

    def record_writes(self, users: Sequence[str]) -> None:
        """Claim a number for each user, in a few calls for all."""
        self.revisions.record_writes(users)

    def compact(self, user_id: str) -> int:
        """Drop the user's old write-sequence records; how many numbers."""
        return self.revisions.trim(user_id)

    @property
    def dimension(self) -> int | None:
        """The size of the store's vectors; None until the first write records it."""
        return self._built_with.dimension

    def check_dimension(self, dimension: int) -> None:
        """Refuse vectors of another size than the collection's (a read: nothing is written)."""
        self._built_with.check(dimension)

    # facts ---------------------------------------------------------------

    def upsert(self, facts: Sequence[Fact], vectors: np.ndarray) -> None:
        """Write whole fact records with their vectors (the first write records their size)."""
        if len(facts):
            with self._errors("record the embedding dimension"):
                self._built_with.record(int(vectors.shape[1]))
        for start in range(0, len(facts), _WRITE_BATCH):
            self._upsert_batch(facts[start : start + _WRITE_BATCH],
                               vectors[start : start + _WRITE_BATCH])  # fmt: skip

    def list_ahead(self, facts: Sequence[Fact]) -> None:
        """Enter facts in the id directory before they are written, in one call: a write
        in several steps then pays for the directory once (:meth:`upsert` skips them).
        Entries for facts that end up not written are removed by :meth:`unlist`."""
        for start in range(0, len(facts), _WRITE_BATCH):
            batch = facts[start : start + _WRITE_BATCH]
            check_room(self.path, 128 * len(batch), "list fact ids")
            with self._errors("write fact ids to Chroma"):
                self.collections.list_ahead([f.id for f in batch], [f.user_id for f in batch])

    def unlist(self, ids: Sequence[str], *, user_id: str | None) -> None:
        """Remove the directory entries :meth:`list_ahead` made for facts not written;
        ``user_id=None``: only forget that they were listed ahead (Chroma is not called)."""
        for start in range(0, len(ids), self.read_page):
            with self._errors("remove fact ids from Chroma"):
                self.collections.unlist(ids[start : start + self.read_page], user_id)

    def _upsert_batch(self, batch: Sequence[Fact], vectors: np.ndarray) -> None:
        metadatas = [encode(f) for f in batch]
        size = sum(len(str(meta)) for meta in metadatas) * 2
        check_room(self.path, size + vectors.nbytes + 64 * len(batch), "write facts")
        with self._errors("write facts to Chroma"):
            # The directory first: it may name a fact not (yet) written, never miss one.
            self.collections.register([f.id for f in batch], [f.user_id for f in batch])
            for user_id, rows in _rows_by_user(batch).items():
                self._of(user_id, create=True).upsert(
                    ids=[batch[r].id for r in rows],
                    metadatas=[metadatas[r] for r in rows],
                    embeddings=vectors[rows],
                )

    def _of(self, user_id: str, *, create: bool = False) -> Any:
        with self._errors(f"open the collection of user {user_id!r}"):
            return self.collections.writable(user_id) if create else self.collections.of(user_id)

    def update_records(self, facts: Sequence[Fact]) -> None:
        """Rewrite records whose content did not change (no re-embedding)."""
        if not facts:
            return
        # Never pass documents without vectors: Chroma would embed them with its default
        # model, which means a download. The content is unchanged here by definition.
        metadatas = [encode(f) for f in facts]
        check_room(self.path, sum(len(str(m)) for m in metadatas) * 2, "update facts")
        for user_id, rows in _rows_by_user(facts).items():
            with self._errors("update facts in Chroma"):
                self._of(user_id, create=True).update(
                    ids=[facts[r].id for r in rows], metadatas=[metadatas[r] for r in rows]
                )

    def touch(self, accessed: Sequence[tuple[str, float]], *, user_id: str) -> None:
        """Record access times alone, so a stale copy can never overwrite a newer record."""
        collection = self._of(user_id) if accessed else None
        if collection is not None:
            check_room(self.path, 64 * len(accessed), "record access times")
            with self._errors("record access times"):
                collection.update(
                    ids=[fact_id for fact_id, _ in accessed],
                    metadatas=[{"accessed_at": at} for _, at in accessed],
                )

    def load_user(self, user_id: str) -> tuple[list[Fact], np.ndarray]:
        """Every fact of a user, with its vectors as one ``(n, d)`` matrix: a read of the
        user's own collection, whose cost is what the user holds."""
        collection = self._of(user_id)
        pages: list[Any] = []
        while collection is not None:
            action = f"read the facts of user {user_id!r}"
            with store_errors(action, self.where, collection=collection.name):
                page = read_saved(collection, partial(
                    collection.get, where=scope_where(user_id), include=_WHOLE,
                    limit=self.read_page, offset=self.read_page * len(pages),
                ), dimension=self.dimension)  # fmt: skip
            pages.append(page)
            if len(page["ids"]) < self.read_page:
                break
        facts = [fact for page in pages for fact in _decoded(page)]
        vectors = [np.asarray(p["embeddings"], dtype=np.float32) for p in pages if len(p["ids"])]
        if not vectors:  # no facts, and perhaps no dimension recorded yet
            return facts, np.zeros((0, self.dimension or 0), dtype=np.float32)
        return facts, np.concatenate(vectors)

    def _pages(self, ids: Sequence[str], user_id: str, include: list[str]) -> list[Any]:
        """The user's records among ``ids``, ``read_page`` ids per call."""
        collection = self._of(user_id)
        pages = []
        for start in range(0, len(ids) if collection is not None else 0, self.read_page):
            with self._errors("read facts from Chroma"):
                pages.append(read_saved(collection, partial(
                    collection.get, ids=list(ids[start : start + self.read_page]),
                    where=scope_where(user_id), include=include,
                ), dimension=self.dimension))  # fmt: skip
        return pages

    def get(self, ids: Sequence[str], *, user_id: str | None = None) -> list[Fact]:
        """The facts with these ids (in no particular order), within the user if given;
        without one, the id directory says whose each is."""
        if user_id is not None:
            users = {user_id: list(ids)}
        else:
            users = {}
            for start in range(0, len(ids), self.read_page):
                with self._errors("look fact ids up"):
                    owners = self.collections.owners(ids[start : start + self.read_page])
                for fact_id, owner in owners.items():
                    users.setdefault(owner, []).append(fact_id)
        include = ["documents", "metadatas"]
        pages = [page for user, mine in users.items() for page in self._pages(mine, user, include)]
        return [fact for page in pages for fact in _decoded(page)]

    def ids_with_prefix(self, prefix: str) -> list[str]:
        """Ids of any user's facts starting with ``prefix``: a scan of every id, for the CLI."""
        with self._errors("list fact ids"):
            ids = self.collections.directory.get(include=[])["ids"]
        return [fact_id for fact_id in ids if fact_id.startswith(prefix)]

    def delete(self, ids: Sequence[str], *, user_id: str) -> None:
        """Erase facts and their vectors; only the user's own ids are touched."""
        collection = self._of(user_id)
        for start in range(0, len(ids), self.read_page):
            page = list(ids[start : start + self.read_page])
            with self._errors("delete facts from Chroma"):
                if collection is not None:
                    collection.delete(ids=page, where=scope_where(user_id))
                # The directory last: until then it still names what may be stored.
                self.collections.directory.delete(ids=page, where=scope_where(user_id))

    def probe(self) -> None:
        """Read one directory record and one scope record: raises StoreError if Chroma
        cannot read (a count alone can answer while records cannot be read)."""
        with self._errors("read a fact record"):
            self.collections.directory.get(limit=1, include=["metadatas"])
        with self._errors("read a scope record"):
            self._scopes.get(limit=1, include=["metadatas"])

    def count(self) -> int:
        """How many facts the store holds, all users together (the directory's count)."""
        with self._errors("count facts"):
            return int(self.collections.directory.count())

    # scopes: revisions and profiles ---------------------------------------

    def users(self) -> list[str]:
        """Every user who has facts stored, sorted (a scan of the id directory)."""
        with self._errors("list users"):
            got = self.collections.directory.get(include=["metadatas"])
        return sorted({str(m["user_id"]) for m in got["metadatas"] or []})

    def load_profile(self, user_id: str, agent_id: str | None) -> Profile | None:
        """The stored profile of a user (and agent), if any."""
        return self.profiles.load(user_id, agent_id)

    def save_profile(self, profile: Profile) -> None:
        """Replace the stored profile of ``profile.user_id`` / ``profile.agent_id``."""
        check_room(self.path, 2 * len(profile.model_dump_json()), "write a profile")
        self.profiles.save(profile)

    def drop_user(self, user_id: str) -> int:
        """Erase a user whole ("forget me"): the collection is dropped without being read,
        then the directory's entries (any an interrupted erasure left too) and the
        profiles; the revision records hold nothing of the user's and stay. Returns how
        many facts the directory listed."""
        with self._errors(f"list the fact ids of user {user_id!r}"):
            listed = self.collections.directory.get(where=scope_where(user_id), include=[])
        self.drop_facts(user_id)
        with self._errors("delete a user's fact ids"):
            self.collections.unlist_user(user_id)
        with self._errors("delete a user's profiles"):
            self._scopes.delete(where={"user_id": {"$eq": user_id}})
        return len(listed["ids"])

    def salvage(self, user_id: str) -> list[Fact]:
        """The user's facts as Chroma's records hold them, read without Chroma
        (workarounds/segments.py): what rebuilding a broken collection writes back."""
        return stored_facts(self.path, user_collection(self._prefix, user_id), user_id)

    def drop_facts(self, user_id: str) -> None:
        """Delete the user's collection whole without reading it (profiles stay)."""
        with self._errors(f"drop the collection of user {user_id!r}"):
            self.collections.drop(user_id)

    def scrub(self) -> None:
        """Leave no byte of purged facts in the embedded store's files (a Chroma server
        keeps its own files: docs/api.md)."""
        if self.path is not None:
            with self._scrub_lock:
                scrub_chroma(self.path)


def _rows_by_user(facts: Sequence[Fact]) -> dict[str, list[int]]:
    rows: dict[str, list[int]] = {}
    for row, fact in enumerate(facts):
        rows.setdefault(fact.user_id, []).append(row)
    return rows


def _decoded(page: Any) -> list[Fact]:
    return [
        decode(i, d, m)
        for i, d, m in zip(page["ids"], page["documents"], page["metadatas"], strict=True)
    ]
