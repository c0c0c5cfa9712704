"""Chroma and the hot per-user indexes, kept consistent with each other.

Every write goes to Chroma first, then publishes a new revision token for the user,
then updates this process's index. Every read starts from :meth:`FactRepository.index`,
which reloads the user when another process published a newer revision. This is the
only place that knows both, so :class:`~recallmem.Memory` never has to.

A write that fails drops the user's index, so the next read reloads what Chroma holds:
the process never shows facts the store lacks, nor misses facts it has. An import is
recorded as an intent before its first write (:mod:`recallmem.store.intents`), and an
intent left by a crash or a failure is completed when the repository is next opened.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

import numpy as np
from langchain_core.embeddings import Embeddings

from recallmem.errors import DiskFullError, StoreError
from recallmem.retrieval.index import IndexCache, UserIndex
from recallmem.store.access import AccessTimes
from recallmem.store.chroma import FactStore
from recallmem.store.embeddings import embed_matrix
from recallmem.store.failures import is_disk_full
from recallmem.store.intents import Intent, IntentLog
from recallmem.store.scrub import scrub_chroma
from recallmem.types import Fact, Profile

log = logging.getLogger("recallmem.store")


class FactRepository:
    """Facts of many users: durable in Chroma, searchable in memory."""

    def __init__(
        self, store: FactStore, embeddings: Embeddings, cache_facts: int, *, home: Path
    ) -> None:
        self.store = store
        self.embeddings = embeddings
        self.access = AccessTimes(store)
        self.intents = IntentLog(home)
        self._indexes = IndexCache(cache_facts, self._load)
        self._lock = threading.RLock()
        self.recovered = self.recover()

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
        if embedded and (vectors is None or len(vectors) != len(embedded)):
            raise ValueError("every embedded fact needs its vector")
        try:
            if embedded:
                self.store.upsert(embedded, vectors)  # type: ignore[arg-type]
            self.store.update_records(records)
            index.revision = self.store.bump_revision(index.user_id)
        except StoreError:
            self._indexes.drop(index.user_id)  # part may be written: reload what is there
            raise
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
        ids = {f.id for f in facts}
        keep = (lambda f: False) if whole_user else (lambda f: f.id not in ids)
        self.intents.drop_rows(index.user_id, keep, profiles=whole_user)
        self.store.delete([f.id for f in facts], user_id=index.user_id)
        if whole_user:
            self.store.delete_scope(index.user_id)
        index.remove(f.id for f in facts)
        index.revision = self.store.bump_revision(index.user_id)
        if self.store.path is not None:  # a Chroma server keeps its own files (docs/api.md)
            with self._lock:
                scrub_chroma(self.store.path)

    def published(self, user_id: str) -> None:
        """Mark the user changed outside the facts (a profile); other processes reload."""
        with self.writing(user_id) as index:
            index.revision = self.store.bump_revision(user_id)

    # imports ---------------------------------------------------------------

    def import_facts(
        self, facts: Sequence[Fact], vectors: np.ndarray, profiles: Sequence[Profile]
    ) -> None:
        """Write an import whole: all of its rows, or (after a crash) all of them at the
        next open. Raises StoreError naming where the unfinished import is kept."""
        try:
            intent = self.intents.record(facts, vectors, profiles)
        except OSError as exc:
            error = DiskFullError if is_disk_full(exc) else StoreError
            raise error(
                f"{'disk full: ' if error is DiskFullError else ''}could not record the "
                f"import in {self.intents.directory}: {exc}. Nothing was written."
            ) from exc
        with self.intents.claimed(intent.path):
            try:
                self._apply(intent)
            except StoreError as exc:
                error = DiskFullError if isinstance(exc, DiskFullError) else StoreError
                raise error(
                    f"the import stopped after writing part of it: {exc} It is kept at "
                    f"{intent.path} and completed when the memory is next opened (or run "
                    "the same import again: rows are written by id, never twice)."
                ) from exc
            self.intents.done(intent)

    def _apply(self, intent: Intent) -> None:
        rows_of: dict[str, list[int]] = {}
        for row, fact in enumerate(intent.facts):
            rows_of.setdefault(fact.user_id, []).append(row)
        for user_id, rows in rows_of.items():
            with self.writing(user_id) as index:
                self.write(index, [intent.facts[r] for r in rows], intent.vectors[rows])
        for profile in intent.profiles:
            self.store.save_profile(profile)
            self.published(profile.user_id)

    def recover(self) -> int:
        """Complete the imports a crash or a failure left unfinished; returns the rows
        written. One that still fails stays for the next open (and is logged)."""
        written = 0
        for path in self.intents.pending():
            with self.intents.claimed(path) as mine:
                if not mine:
                    continue  # another process is applying it right now
                try:
                    intent = self.intents.load(path)
                    self._apply(intent)
                except (OSError, ValueError, StoreError) as exc:
                    log.error("recallmem: an unfinished import at %s failed again: %s; it "
                              "is retried at the next open", path, exc)  # fmt: skip
                    continue
                self.intents.done(intent)
            log.warning("recallmem: completed an import a crash interrupted: %d fact(s), "
                        "%d profile(s)", len(intent.facts), len(intent.profiles))  # fmt: skip
            written += len(intent.facts)
        return written
