"""The store and the hot per-user indexes, kept consistent with each other.

The store is a backend behind :class:`~recallmem.store.fact_store.FactStore` (Chroma, or
the process's memory). Every write goes to the store first, then claims the next number
of the user's write sequence, then updates this process's index; it runs under that
user's lock, taken here, so no caller has to know the protocol. Every read starts from the
user's index, which is reloaded when a write it does not reflect was claimed (by any
process), so ``get``, ``facts`` and ``nearest`` all see the same state, and a write
acknowledged by one process is seen by the next read of every other. This is the only place
that knows both the store and the indexes: :class:`~recallmem.Memory`, extraction and
lifecycle only call the methods below.

A write that fails drops the user's index, so the next read reloads what the store holds:
the process never shows facts the store lacks, nor misses facts it has. An import is
recorded as an intent before its first write (:mod:`recallmem.durability.intents`), and an
intent left by a crash or a failure is completed when the repository is next opened. A
write checks, under the lock, that no forget since its work began covers it
(:mod:`recallmem.persistence.forget_ledger`).

Access times are the one write a read causes, and it is kept apart: a recall records them in
memory (:meth:`FactRepository.accessed`); they reach the store with the user's next write, or
at :meth:`FactRepository.flush_access_times` (``Memory.close``).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import ExitStack, contextmanager
from datetime import datetime
from pathlib import Path

import numpy as np
from langchain_core.embeddings import Embeddings

from recallmem.config import MemoryConfig
from recallmem.durability.erasure import Erasure
from recallmem.embedders import embed_matrix, embed_query_vector
from recallmem.errors import BrokenIndexError, FactNotFoundError, InvalidInputError, StoreError
from recallmem.facts.fact_vectors import fact_vectors, vector_texts
from recallmem.facts.validation import foreign_rows
from recallmem.persistence.access_times import AccessTimes
from recallmem.persistence.erased_copies import unlink_copies
from recallmem.persistence.forget_ledger import ForgetLedger, work_began
from recallmem.persistence.import_writer import Carried, ImportWriter
from recallmem.persistence.remember_steps import remember_in_steps
from recallmem.retrieval.index import IndexCache, Query, UserIndex
from recallmem.retrieval.ranking import Weights
from recallmem.store.backends import open_fact_store
from recallmem.store.fact_store import FactStore
from recallmem.types import Fact, Profile, ScoredFact, Status, utcnow

log = logging.getLogger("recallmem.store")
Neighbours = list[list[tuple[Fact, float]]]
Revised = tuple[list[Fact], list[str]]  # records written, ids purged
Revise = Callable[[list[Fact]], Revised]


class FactRepository:
    """Facts of many users: kept by a store, searchable in memory, locked per user."""

    @classmethod
    def open(cls, config: MemoryConfig, embeddings: Embeddings) -> FactRepository:
        """The repository over the store ``config`` names (Chroma, embedded or a server, or
        the process's memory); opening embeds nothing."""
        store = open_fact_store(config, embeddings)
        return cls(store, embeddings, config.index_cache_facts, home=config.home)

    def __init__(
        self, store: FactStore, embeddings: Embeddings, cache_facts: int, *, home: Path
    ) -> None:
        self.store = store
        self.embeddings = embeddings
        self.erasure = Erasure(home)  # what a purge clears besides records (durability/erasure.py)
        self.intents = self.erasure.intents
        self.forgets = ForgetLedger.of(home)  # what a write may no longer write
        self._access = AccessTimes()
        self._indexes = IndexCache(cache_facts, self._load)
        self._locks: dict[str, threading.RLock] = {}
        self._locks_guard = threading.Lock()
        self.recovered = self.recover()

    # -- reading -------------------------------------------------------------------

    def _load(self, user_id: str) -> UserIndex:
        revision = self.store.latest_revision(user_id)  # first: a racing write only adds a reload
        facts, vectors = self.store.load_user(user_id)
        index = UserIndex(user_id, facts, vectors)
        index.revision = revision
        return index

    def index(self, user_id: str) -> UserIndex:
        """The user's index, reloaded if another process changed the user's memory."""
        index, loaded = self._indexes.fetch(user_id)
        # An index this call just loaded carries the revision read before its facts: a
        # second read would only repeat it (one store round trip per cold user).
        if not loaded and not self.store.is_current(user_id, index.revision):
            self._indexes.drop(user_id)
            index = self._indexes.get(user_id)
        return index

    def get(self, fact_id: str, *, user_id: str | None = None) -> Fact:
        """One fact by id, as the user's index has it; with ``user_id``, only that user's."""
        if user_id is None:
            found = self.store.get([fact_id])
            if not found:
                raise FactNotFoundError(fact_id, None)
            user_id = found[0].user_id
        fact = self.index(user_id).get(fact_id)
        if fact is None:
            raise FactNotFoundError(fact_id, user_id)
        return fact

    def current(self, ids: Sequence[str], *, user_id: str) -> dict[str, Fact]:
        """The user's facts among ``ids``, by id (absent ids are left out)."""
        index = self.index(user_id)
        return {i: fact for i in dict.fromkeys(ids) if (fact := index.get(i)) is not None}

    def owners(self, ids: Sequence[str]) -> dict[str, str]:
        """The user of each stored fact among ``ids`` (any user's)."""
        return {f.id: f.user_id for f in self.store.get(ids)}

    def with_id_prefix(self, prefix: str, *, user_id: str | None = None) -> list[Fact]:
        """The fact whose id is ``prefix``, else those whose id starts with it: the user's,
        or any user's (a scan of every id)."""
        if user_id is None:
            return self.store.get([prefix]) or self.store.get(self.store.ids_with_prefix(prefix))
        facts = self.facts(user_id)
        return [f for f in facts if f.id == prefix] or [f for f in facts if f.id.startswith(prefix)]

    def facts(self, user_id: str) -> list[Fact]:
        """Every fact of the user, all statuses."""
        return self.index(user_id).facts()

    def active(self, *, user_id: str, agent_id: str | None) -> list[Fact]:
        """The active facts of exactly this user and agent (the scope a cap applies to)."""
        return [
            f for f in self.facts(user_id) if f.agent_id == agent_id and f.status is Status.ACTIVE
        ]

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Unit vectors of texts, refused if their size is not the store's."""
        vectors = embed_matrix(self.embeddings, list(texts))
        if len(vectors):
            self.store.check_dimension(int(vectors.shape[1]))
        return vectors

    def embed_query(self, text: str) -> np.ndarray:
        """The unit vector of one query, refused if its size is not the store's."""
        vector = embed_query_vector(self.embeddings, text)
        self.store.check_dimension(len(vector))
        return vector

    def search(self, user_id: str, query: Query, weights: Weights) -> list[ScoredFact]:
        """The user's facts ranked for ``query``; notes their access times (no write)."""
        index = self.index(user_id)
        now = utcnow()
        hits = index.search(query, weights, now)
        self.accessed(index, [hit.fact.id for hit in hits], now)
        return [h.model_copy(update={"fact": index.get(h.fact.id) or h.fact}) for h in hits]

    def nearest(self, texts: Sequence[str], *, user_id: str, agent_id: str | None, k: int,
                now: datetime | None = None) -> Neighbours:  # fmt: skip
        """For each text, the ``k`` active facts in scope most similar by meaning, among
        those not expired at ``now`` (default: the current time)."""
        if not texts:
            return []
        return self.index(user_id).nearest(self.embed(texts), agent_id=agent_id, k=k, now=now)

    def vectors(self, user_id: str, ids: Sequence[str]) -> np.ndarray:
        """The stored vectors of the user's facts ``ids``, one row each, in that order."""
        return self.index(user_id).vectors(ids)

    def profile(self, *, user_id: str, agent_id: str | None) -> Profile:
        """The user's profile (empty sections if none was written)."""
        stored = self.store.load_profile(user_id, agent_id)
        return stored or Profile(user_id=user_id, agent_id=agent_id)

    def stored_profiles(self, user_id: str, agent_id: str | None) -> list[Profile]:
        """The profiles written for the user alone and for the agent, if any."""
        return [p for a in {None, agent_id} if (p := self.store.load_profile(user_id, a))]

    def revision(self, user_id: str) -> str | None:
        """A token that changes whenever the user's memory changes (None: never written)."""
        return str(number) if (number := self.store.latest_revision(user_id)) else None

    def count(self) -> int:
        """How many facts the store holds, all users together."""
        return self.store.count()

    def accessed(self, index: UserIndex, ids: Sequence[str], at: datetime) -> None:
        """Note that a recall returned these facts (in memory; no write happens here)."""
        self._access.add(index.user_id, index.touch(ids, at))

    def flush_access_times(self) -> None:
        """Write every access time noted so far."""
        for user_id in self._access.users():
            with self._locked(user_id):
                self._touch(user_id)

    def _touch(self, user_id: str) -> None:
        accessed = self._access.take(user_id)
        try:
            self.store.touch(accessed, user_id=user_id)
        except StoreError as exc:
            # Recall is a read: it must keep working when the disk is full or the store
            # refuses writes. These times only order eviction, so they are dropped.
            log.warning("recallmem: %d access time(s) not recorded: %s", len(accessed), exc)

    # -- writing -------------------------------------------------------------------

    @contextmanager
    def _locked(self, user_id: str) -> Iterator[None]:
        with self._locks_guard:
            lock = self._locks.setdefault(user_id, threading.RLock())
        with lock:
            yield

    @contextmanager
    def writing(self, user_id: str) -> Iterator[UserIndex]:
        """The user's index, under the user's lock, for a write through :meth:`write`."""
        self.store.refuse_if_full()  # work began here at the latest (forget_ledger.py)
        with work_began(), self._locked(user_id):
            yield self.index(user_id)

    def write(self, index: UserIndex, embedded: Sequence[Fact], vectors: np.ndarray | None,
              records: Sequence[Fact] = (), *, claim: bool = True) -> None:  # fmt: skip
        """Write ``embedded`` facts with their ``vectors`` and rewrite ``records`` (facts
        whose content did not change), claim the next revision if ``claim``, then update
        ``index`` (held through :meth:`writing`). ``claim=False``: a step of a write whose
        last step claims one number for all (:mod:`recallmem.persistence.remember_steps`).
        """
        # The store, then this process's index, then the revision, whose number the index
        # takes last. A read of this process between the claim and that number would see
        # the index behind and reload the whole user (hundreds of ms at 1,000 facts): the
        # index is brought up to date before the claim, so that window is one assignment.
        if embedded and (vectors is None or len(vectors) != len(embedded)):
            raise ValueError("every embedded fact needs its vector")
        self.forgets.admit(index.user_id, [*embedded, *records])
        try:
            if embedded:
                self.store.upsert(embedded, vectors)  # type: ignore[arg-type]
            self.store.update_records(records)
            if embedded:
                index.upsert(embedded, vectors)
            if records:
                index.upsert(records)
            revision = self.store.record_write(index.user_id, index.revision) if claim else None
        except StoreError:
            self._indexes.drop(index.user_id)  # part may be written: reload what is there
            raise
        index.revision = index.revision if revision is None else revision
        self._touch(index.user_id)

    def _save(self, index: UserIndex, facts: Sequence[Fact]) -> None:
        stale = {f.id for f in facts if (old := index.get(f.id)) is None
                 or vector_texts(old) != vector_texts(f)}  # fmt: skip
        embedded = [f for f in facts if f.id in stale]
        vectors = fact_vectors(self.embed, embedded) if embedded else None
        self.write(index, embedded, vectors, [f for f in facts if f.id not in stale])

    def put(self, facts: Sequence[Fact]) -> None:
        """Write whole fact records as they are, embedding only changed texts; no dedup.
        Raises InvalidInputError, writing nothing, for an id another user's fact has."""
        if taken := foreign_rows(facts, self.owners([f.id for f in facts]) if facts else {}):
            raise InvalidInputError(
                f"fact id {facts[taken[0]].id!r} already belongs to another user; nothing was "
                "written (leave id out of Fact(...) to get a new one)"
            )
        for user_id in dict.fromkeys(f.user_id for f in facts):
            with self.writing(user_id) as index:
                self._save(index, [f for f in facts if f.user_id == user_id])

    def remember(
        self, candidates: Sequence[Fact], *, threshold: float, now: datetime
    ) -> list[Fact]:
        """Store new facts of one user and agent, folding duplicates into stored ones;
        per candidate, the stored fact it became."""
        return remember_in_steps(self, candidates, threshold=threshold, now=now)

    def edit(self, fact_id: str, user_id: str | None, change: Callable[[Fact], Fact]) -> Fact:
        """Apply ``change`` to the fact as it is once the user's lock is held, and save it."""
        owner = self.get(fact_id, user_id=user_id).user_id
        with self.writing(owner) as index:
            fact = change(self.get(fact_id, user_id=owner))
            self._save(index, [fact])
            return fact

    def forget(self, user_id: str, *, fact_id: str | None, thread_id: str | None,
               agent_id: str | None, purge: bool) -> int:  # fmt: skip
        """Soft-delete or erase one fact or a scope of the user's; returns how many changed
        (erasing the whole user never reads the user's collection, which may be broken)."""
        if purge and fact_id is None and thread_id is None and agent_id is None:
            return self._erase_user(user_id)
        with self.writing(user_id) as index:
            facts = [f for f in index.facts() if (fact_id is None or f.id == fact_id)
                     and (thread_id is None or f.thread_id == thread_id)
                     and (agent_id is None or f.agent_id == agent_id)]  # fmt: skip
            if purge:
                self._purge(index, facts)
                return len(facts)
            now = utcnow()
            gone = [f for f in facts if f.status is not Status.DELETED]
            deleted = [f.model_copy(update={"status": Status.DELETED, "updated_at": now})
                       for f in gone]  # fmt: skip
            self._save(index, deleted)
            return len(gone)  # a fact forgotten already is not forgotten again

    def revise(self, user_id: str, change: Revise, *, scrub: bool = True) -> Revised:
        """Under the user's lock, write the records and purge the ids ``change`` returns for
        the user's facts as they are; ``scrub=False`` leaves the purged bytes to one later
        :meth:`scrub` (a maintenance run's, for all its users)."""
        with self.writing(user_id) as index:
            records, purge = change(index.facts())
            if records:
                self._save(index, records)
            doomed = [f for i in purge if (f := index.get(i)) is not None]
            if doomed:
                self._purge(index, doomed, scrub=scrub)
            return records, [f.id for f in doomed]

    def scrub(self) -> None:
        """Leave no byte of purged facts in the embedded store's files."""
        self.erasure.scrubbed(self.store.scrub)

    def users(self) -> list[str]:
        """Every user who has facts stored."""
        return self.store.users()

    def _purge(self, index: UserIndex, facts: Sequence[Fact], *, scrub: bool = True) -> None:
        ids = {f.id for f in facts}
        self.erasure.before(index.user_id, ids)
        self.store.delete(list(ids), user_id=index.user_id)
        index.remove(ids)
        self._access.take(index.user_id)
        index.revision = self.store.record_write(index.user_id, index.revision)
        if scrub:
            self.scrub()

    def repair(self, user_id: str) -> bool:
        """Mend the user's storage: facts a crash left unreadable are written back from
        their records, re-embedded, and bookkeeping no read needs is dropped. True if
        the facts had to be written back."""
        with self._locked(user_id):
            try:
                self.index(user_id)
                broken = False
            except BrokenIndexError as exc:
                log.warning("recallmem: rebuilding the facts of user %r: %s", user_id, exc)
                facts = self.store.salvage(user_id)
                ImportWriter(self).write(facts, [], first=lambda: self.store.drop_facts(user_id))
                broken = True
            self.store.compact(user_id)
            return broken

    def _erase_user(self, user_id: str) -> int:
        with self._locked(user_id):
            self.erasure.before(user_id, None)
            erased = self.store.drop_user(user_id)
            self._indexes.drop(user_id)
            self._access.take(user_id)
            self.store.record_write(user_id, self.store.latest_revision(user_id))
        unlink_copies(self, user_id)  # under other users' locks, this one's released
        self.scrub()
        return erased

    def save_profile(self, profile: Profile) -> None:
        """Replace a profile; other processes reload the user."""
        with self.writing(profile.user_id) as index:
            self.forgets.admit(profile.user_id)
            self.store.save_profile(profile)
            index.revision = self.store.record_write(profile.user_id, index.revision)

    def write_users(self, facts: Sequence[Fact], vectors: np.ndarray) -> None:
        """Write whole records of any users with their vectors, as they are, under those
        users' locks, and claim a number per user; their indexes reload at the next read."""
        users = sorted({f.user_id for f in facts})
        with ExitStack() as held, work_began():
            for user_id in users:
                held.enter_context(self._locked(user_id))
                self.forgets.admit(user_id, [f for f in facts if f.user_id == user_id])
            try:
                self.store.upsert(facts, vectors)
            finally:
                for user_id in users:
                    self._indexes.drop(user_id)
            self.store.record_writes(users)

    def import_facts(
        self, facts: Sequence[Fact], profiles: Sequence[Profile], carried: Carried | None = None
    ) -> None:
        """Write an import whole, now or (after a crash) at the next open, keeping ``carried``
        vectors. Raises StoreError naming where the unfinished import is kept."""
        ImportWriter(self).write(facts, profiles, carried)

    def recover(self) -> int:
        """Complete the imports a crash or failure left unfinished; the rows written."""
        return ImportWriter(self).recover()
