"""Facts kept in this process's memory: the backend for tests and notebooks.

``Memory(MemoryConfig(store="memory"))`` opens on it. Nothing outlives the process and
nothing is shared with another one: the same promises as Chroma otherwise (the
conformance suite, tests/conformance/, runs the same cases on both), at a fraction of
the cost of opening a store on disk. Purged facts leave no copy behind: their records
and vectors are dropped, so there is nothing to scrub.

>>> import numpy as np
>>> from recallmem.types import Fact
>>> store = InMemoryFactStore("hashing")
>>> fact = Fact(content="Keeps bees", category="identity", user_id="ada")
>>> store.upsert([fact], np.ones((1, 4), dtype=np.float32))
>>> store.get([fact.id]) == [fact], store.get([fact.id], user_id="bob")
(True, [])
>>> store.record_write("ada", 0), store.is_current("ada", 1)
(1, True)
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from datetime import UTC, datetime

import numpy as np

from recallmem.errors import EmbeddingMismatchError
from recallmem.store.fact_store import HomeHold
from recallmem.types import Fact, Profile


class InMemoryFactStore:
    """Every user's facts with their vectors, profiles and write sequence, in dicts
    (:class:`~recallmem.store.fact_store.FactStore`). Safe across threads."""

    kind = "memory"

    def __init__(self, embedder: str, dimension: int | None = None) -> None:
        self.embedder = embedder
        self.dimension = dimension
        self._lock = threading.Lock()
        self._rows: dict[str, dict[str, tuple[Fact, np.ndarray]]] = {}  # user -> id -> row
        self._owners: dict[str, str] = {}  # fact id -> user
        self._profiles: dict[tuple[str, str | None], Profile] = {}
        self._revisions: dict[str, int] = {}
        self.copy_links = InMemoryCopyLinks()

    # reading -------------------------------------------------------------------

    def check_dimension(self, dimension: int) -> None:
        """Refuse vectors of another size than those stored."""
        if self.dimension is not None and self.dimension != dimension:
            raise EmbeddingMismatchError(
                f"this in-memory store holds vectors of {self.dimension} dimensions from "
                f"{self.embedder!r}, not {dimension}; use one embedder per Memory"
            )

    def load_user(self, user_id: str) -> tuple[list[Fact], np.ndarray]:
        """Every fact of the user, with their vectors as one matrix."""
        with self._lock:
            rows = list(self._rows.get(user_id, {}).values())
        if not rows:
            return [], np.zeros((0, self.dimension or 0), dtype=np.float32)
        return [fact for fact, _ in rows], np.stack([vector for _, vector in rows])

    def get(self, ids: Sequence[str], *, user_id: str | None = None) -> list[Fact]:
        """The stored facts among ``ids``, only the user's if given."""
        with self._lock:
            found = []
            for fact_id in dict.fromkeys(ids):
                owner = self._owners.get(fact_id) if user_id is None else user_id
                row = self._rows.get(owner, {}).get(fact_id) if owner is not None else None
                if row is not None:
                    found.append(row[0])
            return found

    def ids_with_prefix(self, prefix: str) -> list[str]:
        """Ids of any user's facts starting with ``prefix``."""
        with self._lock:
            return [fact_id for fact_id in self._owners if fact_id.startswith(prefix)]

    def users(self) -> list[str]:
        """Every user who has facts stored, sorted."""
        with self._lock:
            return sorted(user for user, rows in self._rows.items() if rows)

    def count(self) -> int:
        """How many facts are stored, all users together."""
        with self._lock:
            return sum(len(rows) for rows in self._rows.values())

    def load_profile(self, user_id: str, agent_id: str | None) -> Profile | None:
        """The stored profile of the user (and agent), if any."""
        with self._lock:
            return self._profiles.get((user_id, agent_id))

    def latest_revision(self, user_id: str) -> int:
        """The number of the user's last write (0: never written)."""
        with self._lock:
            return self._revisions.get(user_id, 0)

    def is_current(self, user_id: str, revision: int) -> bool:
        """Whether no write after ``revision`` was claimed."""
        return self.latest_revision(user_id) <= revision

    def salvage(self, user_id: str) -> list[Fact]:
        """The user's records (nothing here is ever left unreadable)."""
        return self.load_user(user_id)[0]

    def probe(self) -> None:
        """Memory always reads."""

    def hold(self) -> HomeHold:
        """No home to own."""
        return HomeHold(mode="none", held=True)

    # writing -------------------------------------------------------------------

    def refuse_if_full(self) -> None:
        """Memory has no disk to fill."""

    def upsert(self, facts: Sequence[Fact], vectors: np.ndarray) -> None:
        """Write whole records with their vectors (the first write records their size)."""
        if not len(facts):
            return
        self.check_dimension(int(vectors.shape[1]))
        rows = np.array(vectors, dtype=np.float32)  # a copy: the caller's array may change
        with self._lock:
            self.dimension = int(rows.shape[1])
            for fact, vector in zip(facts, rows, strict=True):
                previous = self._owners.get(fact.id)
                if previous is not None and previous != fact.user_id:
                    self._rows[previous].pop(fact.id, None)
                self._rows.setdefault(fact.user_id, {})[fact.id] = (fact, vector)
                self._owners[fact.id] = fact.user_id

    def update_records(self, facts: Sequence[Fact]) -> None:
        """Rewrite stored records, keeping their vectors (ids not stored are ignored)."""
        with self._lock:
            for fact in facts:
                rows = self._rows.get(fact.user_id, {})
                if fact.id in rows:
                    rows[fact.id] = (fact, rows[fact.id][1])

    def touch(self, accessed: Sequence[tuple[str, float]], *, user_id: str) -> None:
        """Record access times alone."""
        with self._lock:
            rows = self._rows.get(user_id, {})
            for fact_id, at in accessed:
                if fact_id in rows:
                    fact, vector = rows[fact_id]
                    when = datetime.fromtimestamp(at, UTC)
                    rows[fact_id] = (fact.model_copy(update={"last_accessed_at": when}), vector)

    def list_ahead(self, facts: Sequence[Fact]) -> None:
        """Nothing to prepare."""

    def unlist(self, ids: Sequence[str], *, user_id: str | None) -> None:
        """Nothing was listed."""

    def delete(self, ids: Sequence[str], *, user_id: str) -> None:
        """Erase the user's facts ``ids`` and their vectors."""
        with self._lock:
            rows = self._rows.get(user_id, {})
            for fact_id in ids:
                if rows.pop(fact_id, None) is not None:
                    del self._owners[fact_id]

    def drop_user(self, user_id: str) -> int:
        """Erase the user's facts and profiles; how many facts there were."""
        with self._lock:
            rows = self._rows.pop(user_id, {})
            for fact_id in rows:
                del self._owners[fact_id]
            for key in [key for key in self._profiles if key[0] == user_id]:
                del self._profiles[key]
        self.copy_links.drop_holder(user_id)  # as Chroma's records go with their holder
        return len(rows)

    def drop_facts(self, user_id: str) -> None:
        """Erase the user's facts, keeping the profiles."""
        with self._lock:
            for fact_id in self._rows.pop(user_id, {}):
                del self._owners[fact_id]

    def save_profile(self, profile: Profile) -> None:
        """Replace the profile of its user and agent."""
        with self._lock:
            self._profiles[(profile.user_id, profile.agent_id)] = profile

    def record_write(self, user_id: str, revision: int) -> int:
        """Claim the user's next number."""
        with self._lock:
            number = self._revisions[user_id] = self._revisions.get(user_id, 0) + 1
        return number if number == revision + 1 else revision

    def record_writes(self, users: Sequence[str]) -> None:
        """Claim a number for each user."""
        with self._lock:
            for user_id in dict.fromkeys(users):
                self._revisions[user_id] = self._revisions.get(user_id, 0) + 1

    def compact(self, user_id: str) -> int:
        """A sequence here is one number per user: nothing to drop."""
        return 0

    def scrub(self) -> None:
        """Dropped records leave no copy to scrub."""

    def announce(self, serve_url: str, *, open_access: bool) -> None:
        """No lock file to name the service in."""

    def close(self) -> None:
        """Nothing to release."""


class InMemoryCopyLinks:
    """Which users hold copies of whose facts
    (:class:`~recallmem.store.fact_store.CopyLinkRecords`)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._holders: dict[str, set[str]] = {}  # source -> destinations

    def note(self, source: str, destination: str) -> None:
        """Record that ``destination`` now holds copies of ``source``'s facts."""
        with self._lock:
            self._holders.setdefault(source, set()).add(destination)

    def holders(self, source: str) -> list[str]:
        """The users holding copies of ``source``'s facts."""
        with self._lock:
            return sorted(self._holders.get(source, ()))

    def forget(self, source: str) -> None:
        """Forget where ``source``'s copies are."""
        with self._lock:
            self._holders.pop(source, None)

    def drop_holder(self, destination: str) -> None:
        """Forget that ``destination`` holds copies (the user is erased)."""
        with self._lock:
            for holders in self._holders.values():
                holders.discard(destination)
