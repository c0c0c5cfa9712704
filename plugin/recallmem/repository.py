"""Chroma and the hot per-user indexes, kept consistent with each other.

Every write goes to Chroma first, then publishes a new revision token for the user,
then updates this process's index. Every read starts from :meth:`FactRepository.index`,
which reloads the user when another process published a newer revision. This is the
only place that knows both, so :class:`~recallmem.Memory` never has to.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager

import numpy as np
from langchain_core.embeddings import Embeddings

from recallmem.retrieval.index import IndexCache, UserIndex
from recallmem.store.access import AccessTimes
from recallmem.store.chroma import FactStore
from recallmem.store.embeddings import embed_matrix
from recallmem.types import Fact


class FactRepository:
    """Facts of many users: durable in Chroma, searchable in memory."""

    def __init__(self, store: FactStore, embeddings: Embeddings, cache_facts: int) -> None:
        self.store = store
        self.embeddings = embeddings
        self.access = AccessTimes(store)
        self._indexes = IndexCache(cache_facts, self._load)
        self._lock = threading.RLock()

    def _load(self, user_id: str) -> UserIndex:
        revision = self.store.revision(user_id)  # read first: a racing write only adds a reload
        facts, vectors = self.store.load_user(user_id)
        index = UserIndex(user_id, facts, vectors)
        index.revision = revision
        return index

    def index(self, user_id: str) -> UserIndex:
        """The user's index, reloaded if another process changed the user's memory."""
        index, loaded = self._indexes.fetch(user_id)
        # An index this call just loaded carries the revision read before its facts: a
        # second read would only repeat it (one Chroma round trip per cold user).
        if not loaded and self.store.revision(user_id) != index.revision:
            self._indexes.drop(user_id)
            index = self._indexes.get(user_id)
        return index

    @contextmanager
    def writing(self, user_id: str) -> Iterator[UserIndex]:
        """Hold the write lock with the user's fresh index."""
        with self._lock:
            yield self.index(user_id)

    def write(
        self,
        index: UserIndex,
        embedded: Sequence[Fact],
        vectors: np.ndarray | None,
        records: Sequence[Fact] = (),
    ) -> None:
        """Persist facts (``embedded`` with their new vectors, ``records`` without), then
        publish a new revision, then update the index."""
        if embedded:
            if vectors is None or len(vectors) != len(embedded):
                raise ValueError("every embedded fact needs its vector")
            self.store.upsert(embedded, vectors)
        self.store.update_records(records)
        index.revision = self.store.bump_revision(index.user_id)
        if embedded:
            index.upsert(embedded, vectors)
        if records:
            index.upsert(records)

    def save(self, index: UserIndex, facts: Sequence[Fact]) -> None:
        """Write facts of the index's user, embedding only those whose text changed."""
        stale = {
            f.id for f in facts if (old := index.get(f.id)) is None or old.content != f.content
        }
        embedded = [f for f in facts if f.id in stale]
        vectors = embed_matrix(self.embeddings, [f.content for f in embedded]) if embedded else None
        self.write(index, embedded, vectors, [f for f in facts if f.id not in stale])

    def purge(self, index: UserIndex, facts: Sequence[Fact], *, whole_user: bool) -> None:
        """Erase facts with their vectors; a whole user also loses revision and profiles."""
        self.store.delete([f.id for f in facts], user_id=index.user_id)
        if whole_user:
            self.store.delete_scope(index.user_id)
        index.remove(f.id for f in facts)
        index.revision = self.store.bump_revision(index.user_id)

    def published(self, user_id: str) -> None:
        """Mark the user changed outside the facts (a profile); other processes reload."""
        with self.writing(user_id) as index:
            index.revision = self.store.bump_revision(user_id)
