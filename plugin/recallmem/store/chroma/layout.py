"""Where facts live in Chroma: one collection per user, and a directory of fact ids.

Loading a user must cost what that user holds, not what the store holds
(docs/decisions/0003-storage-layout.md, with the measurements). So each user's facts
are a collection of their own, ``<prefix>_u<hash of the user id>``, read whole; and
``<prefix>_ids`` maps every fact id to its user (one small record per fact, no
text), for the few lookups that come without a user (a fact id from the CLI or the
API) and for counting. The directory is written before the facts and cleaned after
them, so it never lacks a stored fact; an entry left by a crash in between points at
nothing and is skipped.

Every read of a user's collection still filters on ``user_id``: isolation does not rest
on the hash alone.
"""

from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from recallmem.errors import BrokenIndexError
from recallmem.store.chroma.failures import broken_index_message
from recallmem.store.chroma.workarounds.dropped_index import drop_collection
from recallmem.store.chroma.workarounds.saved_index import USER_HNSW

DIRECTORY_SUFFIX = "_ids"
SCOPES_SUFFIX = "_scopes"  # revisions and profiles (revisions.py, adapter.py)
LEGACY_FACTS_SUFFIX = "_facts"  # the single collection of every user's facts (layout 1)
LAYOUT_VERSION = 2
# Set in the directory's metadata while the store is re-embedded (store/reembedding.py):
# the embedder it goes to. Only the re-embedding opens a store so marked.
REEMBEDDING_KEY = "reembedding_to"
_DIRECTORY_VECTOR = [1.0]  # the directory is looked up by id only
DIRECTORY_HNSW = {"space": "cosine", "ef_construction": 10, "max_neighbors": 4}
_HANDLES = 1024  # collection handles kept per process (a few hundred bytes each)


def hashed_id(text: str) -> str:
    """A user id (or scope) as it is written into Chroma's names and record ids: fixed
    length and alphabet, so no id can be crafted to read as another's, and none of a
    user survives in Chroma's log after the user's records are deleted."""
    return hashlib.blake2b(text.encode("utf-8"), digest_size=16).hexdigest()


def user_collection(prefix: str, user_id: str) -> str:
    """The name of the user's collection (Chroma names allow neither every character
    nor every length a user id may have, so the id is hashed)."""
    return f"{prefix}_u{hashed_id(user_id)}"


class Collections:
    """The store's collections: the id directory, and each user's, opened on demand.

    Reading never creates a collection (a user who never wrote has none); writing does.
    """

    def __init__(
        self, client: Any, prefix: str, metadata: Mapping[str, Any], path: Path | None = None
    ) -> None:
        self.client = client
        self.prefix = prefix
        self.path = path  # the embedded database's directory (None for a Chroma server)
        self.directory = client.get_or_create_collection(
            prefix + DIRECTORY_SUFFIX, embedding_function=None,
            metadata={**metadata, "layout": LAYOUT_VERSION},
            configuration={"hnsw": DIRECTORY_HNSW},
        )  # fmt: skip
        # Collections whose vector index a crash cut short (workarounds/cut_index.py):
        # never handed to Chroma to load, until maintenance drops and rebuilds them.
        self.cut: set[str] = set()
        self._handles: OrderedDict[str, Any] = OrderedDict()
        self._ahead: dict[str, str] = {}  # fact id -> user: listed ahead, not yet written
        self._guard = threading.Lock()  # the service reads from several threads

    def writable(self, user_id: str) -> Any:
        """The user's collection, created if it does not exist."""
        name = self._loadable(user_id)
        return self._cached(name) or self._keep(name, self.client.get_or_create_collection(
            name, embedding_function=None, configuration={"hnsw": USER_HNSW}
        ))  # fmt: skip

    def of(self, user_id: str) -> Any | None:
        """The user's collection; None if the user never wrote (nothing is created)."""
        from chromadb.errors import NotFoundError

        name = self._loadable(user_id)
        handle = self._cached(name)
        if handle is not None:
            return handle
        try:
            return self._keep(name, self.client.get_collection(name, embedding_function=None))
        except NotFoundError:
            return None

    def drop(self, user_id: str) -> None:
        """Delete the user's collection whole, if there is one, without reading it."""
        name = user_collection(self.prefix, user_id)
        with self._guard:
            self._handles.pop(name, None)
        drop_collection(self.client, self.path, name)
        self.cut.discard(name)

    def refuse_cut(self, name: str, action: str) -> None:
        """Raise BrokenIndexError (saying what could not be done: ``action``) if collection
        ``name``'s index was cut short, which Chroma must not load."""
        if name in self.cut:
            raise BrokenIndexError(broken_index_message(name, str(self.path), action), name)

    def _loadable(self, user_id: str) -> str:
        """The name of the user's collection, once :meth:`refuse_cut` lets it through."""
        name = user_collection(self.prefix, user_id)
        self.refuse_cut(name, f"open the collection of user {user_id!r}")
        return name

    def _cached(self, name: str) -> Any | None:
        with self._guard:
            handle = self._handles.get(name)
            if handle is not None:
                self._handles.move_to_end(name)
            return handle

    def _keep(self, name: str, handle: Any) -> Any:
        with self._guard:
            self._handles[name] = handle
            if len(self._handles) > _HANDLES:
                self._handles.popitem(last=False)
        return handle

    def register(self, ids: Sequence[str], users: Sequence[str]) -> None:
        """Record in the directory whose each fact is (``users[i]`` owns ``ids[i]``), but
        for the ids :meth:`list_ahead` recorded for that user already."""
        with self._guard:
            rows = [r for r, i in enumerate(ids) if self._ahead.pop(i, None) != users[r]]
        if rows:
            self._enter([ids[r] for r in rows], [users[r] for r in rows])

    def list_ahead(self, ids: Sequence[str], users: Sequence[str]) -> None:
        """Record ids in the directory before their facts are written: the
        :meth:`register` of each write then skips them (one directory write per call)."""
        self._enter(ids, users)
        with self._guard:
            self._ahead.update(zip(ids, users, strict=True))

    def unlist(self, ids: Sequence[str], user_id: str | None) -> None:
        """Remove ids listed ahead whose facts were not written (``user_id=None``: only
        forget them here; the directory keeps them, naming nothing)."""
        with self._guard:
            for fact_id in ids:
                self._ahead.pop(fact_id, None)
        if user_id is not None and ids:
            self.directory.delete(ids=list(ids), where={"user_id": {"$eq": user_id}})

    def unlist_user(self, user_id: str) -> None:
        """Remove every directory entry of a user ("forget me"); a write in steps still
        under way registers its next facts again."""
        with self._guard:
            self._ahead = {i: user for i, user in self._ahead.items() if user != user_id}
        self.directory.delete(where={"user_id": {"$eq": user_id}})

    def _enter(self, ids: Sequence[str], users: Sequence[str]) -> None:
        self.directory.upsert(
            ids=list(ids),
            embeddings=[_DIRECTORY_VECTOR] * len(ids),
            metadatas=[{"user_id": user_id} for user_id in users],
        )

    def owners(self, ids: Sequence[str]) -> dict[str, str]:
        """The user the directory names for each of these ids (unknown ids are left out)."""
        got = self.directory.get(ids=list(ids), include=["metadatas"])
        return {i: str(m["user_id"]) for i, m in zip(got["ids"], got["metadatas"], strict=True)}
