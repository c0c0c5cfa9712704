"""The one storage seam: what :class:`~recallmem.persistence.repository.FactRepository`
asks of a backend, a read side and a write side.

Two backends provide it: :class:`~recallmem.store.in_memory.InMemoryFactStore` (the
process's memory: tests and notebooks, ``MemoryConfig(store="memory")``) and
:class:`~recallmem.store.chroma.adapter.ChromaFactStore` (embedded or a server).
tests/conformance/ runs the same cases against all three.

The repository holds the users' locks and the hot indexes, and decides the order of
every write; a backend only keeps what it is given. Its promises, which the conformance
suite checks:

- Every read and delete is scoped by user: a call naming a user never sees or touches
  another user's facts, whatever ids it is given.
- A write acknowledged is read back by every later read, in any process that shares
  the backend; a fact written whole (``upsert``) round-trips every field.
- Write sequences: :meth:`FactWrites.record_write` claims the user's next number for a
  write already stored, each number once; an index loaded after reading number ``n``
  is current while ``n + 1`` is unclaimed (:meth:`FactReads.is_current`).
- Reading changes nothing.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal, Protocol

import numpy as np

from recallmem.types import Fact, Profile


@dataclass(frozen=True)
class HomeHold:
    """Whether this process still owns the store's home: an embedded Chroma home is
    owned by one process (``home-lock``); other backends need no lock (``none``)."""

    mode: Literal["none", "home-lock"]
    held: bool
    holder_pid: int | None = None


class FactReads(Protocol):
    """The read side: nothing here writes."""

    @property
    def kind(self) -> str:
        """``memory``, ``chroma-embedded`` or ``chroma-server``."""
        ...

    @property
    def embedder(self) -> str:
        """The name of the embedder the store was built with."""
        ...

    @property
    def dimension(self) -> int | None:
        """The size of the store's vectors; None until the first write records it."""
        ...

    def check_dimension(self, dimension: int) -> None:
        """Raise EmbeddingMismatchError if vectors of ``dimension`` do not fit the store."""
        ...

    def load_user(self, user_id: str) -> tuple[list[Fact], np.ndarray]:
        """Every fact of the user, all statuses, with their vectors as one ``(n, d)``
        matrix in the same order."""
        ...

    def get(self, ids: Sequence[str], *, user_id: str | None = None) -> list[Fact]:
        """The stored facts among ``ids`` (in no particular order), only the user's if given."""
        ...

    def ids_with_prefix(self, prefix: str) -> list[str]:
        """Ids of any user's facts that start with ``prefix``."""
        ...

    def users(self) -> list[str]:
        """Every user who has facts stored, sorted."""
        ...

    def count(self) -> int:
        """How many facts the store holds, all users together."""
        ...

    def load_profile(self, user_id: str, agent_id: str | None) -> Profile | None:
        """The profile stored for the user (and agent), if any."""
        ...

    def latest_revision(self, user_id: str) -> int:
        """The number of the user's last claimed write (0: never written)."""
        ...

    def is_current(self, user_id: str, revision: int) -> bool:
        """Whether an index reflecting writes up to ``revision`` misses none."""
        ...

    def salvage(self, user_id: str) -> list[Fact]:
        """The user's records, read around whatever a crash left unreadable: what a
        repair writes back (re-embedded). A backend that cannot (a Chroma server, whose
        files are its own) raises StoreError saying what to do instead."""
        ...

    def probe(self) -> None:
        """Raise StoreError unless the store can read a record."""
        ...

    def hold(self) -> HomeHold:
        """Whether this process still owns the store's home."""
        ...


class FactWrites(Protocol):
    """The write side. Raises StoreError (DiskFullError on a full disk) when the store
    refuses a write; the repository then reloads what is there."""

    def refuse_if_full(self) -> None:
        """Raise DiskFullError before a write while a disk found full is still full."""
        ...

    def upsert(self, facts: Sequence[Fact], vectors: np.ndarray) -> None:
        """Write whole fact records with their vectors (one row each, of any users)."""
        ...

    def update_records(self, facts: Sequence[Fact]) -> None:
        """Rewrite stored records whose content (and so vector) did not change."""
        ...

    def touch(self, accessed: Sequence[tuple[str, float]], *, user_id: str) -> None:
        """Record the user's facts' access times (epoch seconds) and nothing else."""
        ...

    def list_ahead(self, facts: Sequence[Fact]) -> None:
        """Note ids a write in several steps is about to store (a store may prepare for
        them at once); those left unwritten are given back to :meth:`unlist`."""
        ...

    def unlist(self, ids: Sequence[str], *, user_id: str | None) -> None:
        """Forget ids listed ahead and not written (``user_id=None``: only in this
        process, asking the store nothing)."""
        ...

    def delete(self, ids: Sequence[str], *, user_id: str) -> None:
        """Erase the user's facts ``ids`` with their vectors (other users' ids: untouched)."""
        ...

    def drop_user(self, user_id: str) -> int:
        """Erase the user whole, facts and profiles, without reading the facts; returns
        how many facts there were. The write sequence stays: it holds nothing of theirs."""
        ...

    def drop_facts(self, user_id: str) -> None:
        """Erase the user's facts without reading them, keeping the profiles: the first
        step of a repair, once :meth:`FactReads.salvage` is journaled."""
        ...

    def save_profile(self, profile: Profile) -> None:
        """Replace the profile of ``profile.user_id`` and ``profile.agent_id``."""
        ...

    def record_write(self, user_id: str, revision: int) -> int:
        """Claim the user's next number for a write already stored, by a writer whose
        index reflected ``revision``; returns what that index reflects now: the number
        if it follows ``revision``, else ``revision`` (another writer came between)."""
        ...

    def record_writes(self, users: Sequence[str]) -> None:
        """Claim a number for each user's stored write, for a writer keeping no index."""
        ...

    def compact(self, user_id: str) -> int:
        """Drop bookkeeping of the user's that no read needs any more; how many records."""
        ...

    def scrub(self) -> None:
        """Leave no byte of erased facts in the store's files."""
        ...

    def announce(self, serve_url: str, *, open_access: bool) -> None:
        """Name the service serving this store where a second opener reads who owns it."""
        ...

    def close(self) -> None:
        """Release the store (idempotent)."""
        ...


class CopyLinkRecords(Protocol):
    """Which users hold copies of a user's facts, so that "forget me" reaches them
    (:mod:`recallmem.persistence.erased_copies`)."""

    def note(self, source: str, destination: str) -> None:
        """Record that ``destination`` now holds copies of ``source``'s facts."""
        ...

    def holders(self, source: str) -> list[str]:
        """The users holding copies of ``source``'s facts."""
        ...

    def forget(self, source: str) -> None:
        """Forget where ``source``'s copies are (once they name it no more)."""
        ...


class FactStore(FactReads, FactWrites, Protocol):
    """A backend: both sides, and its record of copies between users."""

    @property
    def copy_links(self) -> CopyLinkRecords:
        """Which users hold copies of whose facts."""
        ...
