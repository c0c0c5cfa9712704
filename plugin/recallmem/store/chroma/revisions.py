"""Per-user write sequences: which writes a process's index of a user reflects.

Every write to a user's memory claims the next number of that user's sequence by adding
the record ``seq:<user>:<n>`` to ``<prefix>_scopes``, after its facts are in Chroma
and before the write is acknowledged. Chroma has no transactions, but its ``add`` never
replaces a record: adding an id that exists leaves the first record as it is (Chroma
1.5.9, embedded and server; ``tests/integration/server/test_revisions.py`` checks it, so
an upgrade that changes it fails there). Reading the record back therefore tells the
writer whether the number is its own (the record holds its one-off token); if not,
another writer got it first and this one takes the next free number. So numbers are
claimed without gaps, each by exactly one write.

An index reflects every write up to ``n`` when it was loaded after reading ``n`` as the
latest number, or when it reflected ``n - 1`` and its own write claimed ``n``. It is
current exactly when ``n + 1`` is unclaimed: one read by id per recall. A write that had
to skip a number another process claimed leaves its index at the number it had, so the
next read reloads it: two processes writing one user at the same instant never keep an
index that misses the other's write (the last-writer-wins token this replaces could).

A number claimed twice could hide a write from an index, so a record is deleted only
once its whole *chunk* (``CHUNK`` numbers) is marked trimmed (:meth:`Revisions.trim`,
run by maintenance, leaves the last ``CHUNK`` to ``2 * CHUNK`` numbers): the marker
``trim:<user>:<chunk>`` is added before the chunk's records are deleted, and a number in
a marked chunk counts as claimed whether or not its record is left. Every read that
decides something reads the number's record and its chunk's marker in one call, so a
writer that adds a deleted number back (its index that old) sees the marker and takes a
later one, and an index that old is never current. Trimming keeps a user's records (and
the scopes collection's vector index, which Chroma holds in memory) to what the recent
writes need, instead of one record per write for ever. "Forget me" deletes none of
them either, as they hold nothing of the user: the record id carries a hash of
the user id (two users whose ids hashed alike would only share a sequence, which costs
reloads, never a stale read), the record a random token, and no ``user_id`` metadata,
which is what a purge of the scopes deletes by. They live in the scopes
collection rather than a collection of their own: every Chroma collection brings a
vector index whose files persist unused slots, which may hold stale heap bytes
(``store/chroma/workarounds/heap_perturb.py``), and another one would be another place
for purged text to turn up.

A head record per user, rewritten every :data:`HEAD_EVERY` claims (last writer wins),
only says where to start looking for the latest number; a stale head costs a longer
look, never a wrong answer.
"""

from __future__ import annotations

import uuid
from collections.abc import Collection, Sequence
from typing import Any

from recallmem.errors import StoreError
from recallmem.store.chroma.failures import store_errors
from recallmem.store.chroma.layout import hashed_id

HEAD_EVERY = 16  # claims between rewrites of the head hint
CHUNK = 64  # numbers trimmed together (store/chroma/revisions.py: markers)
_PROBE = 32  # numbers read per call when looking for the latest (at most CHUNK)
_TRIM_BATCH = 64  # chunks marked, then deleted, per call to Chroma
_VECTOR = [1.0]  # records are read by id only; Chroma requires a vector


class Revisions:
    """The users' write sequences, as records of ``collection`` (the scopes)."""

    def __init__(self, collection: Any, where: str) -> None:
        self._records = collection
        self._where = where

    def latest(self, user_id: str) -> int:
        """The number of the user's last write (0 if the user never wrote).

        One read answers for a user of fewer than ``_PROBE`` writes (a cold user's load
        pays one round trip, not two): the head and the first numbers together.
        """
        head_id, numbers, mark = _head_id(user_id), range(1, 1 + _PROBE), _mark_id(user_id, 1)
        with store_errors("read a revision head", self._where):
            got = self._records.get(ids=[head_id, mark, *(_slot_id(user_id, n) for n in numbers)],
                                    include=["metadatas"])  # fmt: skip
        found = dict(zip(got["ids"], got["metadatas"], strict=True))
        head = int(found[head_id]["seq"]) if head_id in found else 0
        run = _PROBE if mark in found else _run(user_id, numbers, found)
        if run < _PROBE and head <= run:
            return run
        return self._last_claimed(user_id, max(head, run))

    def is_current(self, user_id: str, revision: int) -> bool:
        """Whether an index reflecting writes up to ``revision`` misses none."""
        return not self._taken(user_id, range(revision + 1, revision + 2))

    def record_write(self, user_id: str, revision: int) -> int:
        """Claim a number for a write now in Chroma, made by a process whose index
        reflected writes up to ``revision``; returns what that index reflects with the
        write applied: the claimed number if it follows ``revision``, else ``revision``
        (another process wrote in between: the index reloads at its next read)."""
        number = revision + 1
        while not self._claim(user_id, number):
            number = self._last_claimed(user_id, number) + 1
        if number % HEAD_EVERY == 0:
            with store_errors("write a revision head", self._where):
                self._records.upsert(
                    ids=[_head_id(user_id)], embeddings=[_VECTOR], metadatas=[{"seq": number}]
                )
        return number if number == revision + 1 else revision

    def record_writes(self, users: Sequence[str]) -> None:
        """Claim a number for each user's write now in Chroma, for a writer that keeps no
        index of them (an import: their indexes reload at the next read). The claims of
        every user go in one ``add`` and one read back, where :meth:`record_write` would
        make a few calls per user; a number already taken sends that user up the sequence."""
        heads = self._heads(list(dict.fromkeys(users)))
        pending = {user: head + 1 for user, head in heads.items()}
        while pending:
            tokens = {user: uuid.uuid4().hex for user in pending}
            slots = {user: _slot_id(user, number) for user, number in pending.items()}
            with store_errors("claim revision numbers", self._where):
                self._records.add(ids=list(slots.values()), embeddings=[_VECTOR] * len(slots),
                                  metadatas=[{"writer": tokens[u]} for u in slots])  # fmt: skip
                marks = [_mark_id(user, number) for user, number in pending.items()]
                got = self._records.get(ids=[*slots.values(), *marks], include=["metadatas"])
            found = zip(got["ids"], got["metadatas"], strict=True)
            writers = {slot: meta.get("writer") for slot, meta in found}
            trimmed = {u for u, n in pending.items() if _mark_id(u, n) in writers}
            self._delete([slots[user] for user in trimmed])
            writers.update({slots[user]: None for user in trimmed})
            if lost := [slot for slot in slots.values() if slot not in writers]:
                raise StoreError(
                    f"revision records {lost[:3]} were added but cannot be read back from "
                    f"{self._where}; the writes themselves are stored. Check the Chroma "
                    "server's log."
                )
            mine = {user for user, slot in slots.items() if writers[slot] == tokens[user]}
            self._write_heads({user: pending[user] for user in mine})
            pending = {user: self._last_claimed(user, number) + 1
                       for user, number in pending.items() if user not in mine}  # fmt: skip

    def _heads(self, users: list[str]) -> dict[str, int]:
        with store_errors("read revision heads", self._where):
            got = self._records.get(ids=[_head_id(u) for u in users], include=["metadatas"])
        found = {i: int(m["seq"]) for i, m in zip(got["ids"], got["metadatas"], strict=True)}
        return {user: found.get(_head_id(user), 0) for user in users}

    def _write_heads(self, claimed: dict[str, int]) -> None:
        due = {user: number for user, number in claimed.items() if number % HEAD_EVERY == 0}
        if due:
            with store_errors("write revision heads", self._where):
                self._records.upsert(
                    ids=[_head_id(u) for u in due], embeddings=[_VECTOR] * len(due),
                    metadatas=[{"seq": n} for n in due.values()],
                )  # fmt: skip

    def _claim(self, user_id: str, number: int) -> bool:
        token = uuid.uuid4().hex
        slot, mark = _slot_id(user_id, number), _mark_id(user_id, number)
        with store_errors("claim a revision number", self._where):
            self._records.add(ids=[slot], embeddings=[_VECTOR], metadatas=[{"writer": token}])
            got = self._records.get(ids=[slot, mark], include=["metadatas"])
        found = dict(zip(got["ids"], got["metadatas"], strict=True))
        if mark in found:  # trimmed: claimed long ago, then deleted
            self._delete([slot])
            return False
        if slot not in found:
            raise StoreError(
                f"revision record {slot} was added but cannot be read back from "
                f"{self._where}; the write itself is stored. Check the Chroma server's log."
            )
        return bool(found[slot].get("writer") == token)

    def _last_claimed(self, user_id: str, after: int) -> int:
        """The last claimed number, looking upward from ``after`` (claimed, or 0)."""
        while True:
            numbers = range(after + 1, after + 1 + _PROBE)
            run = _run(user_id, numbers, self._taken(user_id, numbers))
            if run < _PROBE:
                return after + run
            after += _PROBE

    def trim(self, user_id: str) -> int:
        """Drop the records of the user's numbers that are at least ``CHUNK`` below the
        latest, a chunk at a time, each chunk marked before its records are deleted;
        returns how many numbers were newly trimmed. Marks form a prefix of the chunks
        (marked in order, in batches), so the first unmarked chunk is found by bisection;
        if the last marked chunk's last record is still there, a crash came between its
        batch's marks and its deletion, and that batch is deleted again."""
        old_enough = (self.latest(user_id) - CHUNK) // CHUNK  # chunks [0, old_enough)
        first = self._first_unmarked(user_id, old_enough)
        if first and self._records_left([_slot_id(user_id, first * CHUNK)]):
            self._delete(_chunk_slots(user_id, range(max(first - _TRIM_BATCH, 0), first)))
        for start in range(first, old_enough, _TRIM_BATCH):
            chunks = range(start, min(start + _TRIM_BATCH, old_enough))
            with store_errors("mark revision numbers trimmed", self._where):
                self._records.add(ids=[_chunk_mark(user_id, c) for c in chunks],
                                  embeddings=[_VECTOR] * len(chunks),
                                  metadatas=[{"trimmed": True}] * len(chunks))  # fmt: skip
            self._delete(_chunk_slots(user_id, chunks))
        return max(old_enough - first, 0) * CHUNK

    def _first_unmarked(self, user_id: str, below: int) -> int:
        low, high = 0, max(below, 0)
        while low < high:
            middle = (low + high) // 2
            marked = self._records_left([_chunk_mark(user_id, middle)])
            low, high = (middle + 1, high) if marked else (low, middle)
        return low

    def _records_left(self, ids: list[str]) -> bool:
        with store_errors("read revision trim records", self._where):
            return bool(self._records.get(ids=ids, include=[])["ids"])

    def _taken(self, user_id: str, numbers: range) -> set[str]:
        """The ids of ``numbers`` that are claimed: recorded, or in a trimmed chunk."""
        pairs = [(_slot_id(user_id, n), _mark_id(user_id, n)) for n in numbers]
        asked = {i for pair in pairs for i in pair}  # a chunk's mark once
        with store_errors("read revision records", self._where):
            found = set(self._records.get(ids=list(asked), include=[])["ids"])
        return {slot for slot, mark in pairs if slot in found or mark in found}

    def _delete(self, ids: list[str]) -> None:
        if ids:
            with store_errors("delete trimmed revision records", self._where):
                self._records.delete(ids=ids)


def _run(user_id: str, numbers: range, found: Collection[str]) -> int:
    """How many of ``numbers``, from the first, are claimed (their ids in ``found``)."""
    missing = (i for i, n in enumerate(numbers) if _slot_id(user_id, n) not in found)
    return next(missing, len(numbers))


def _slot_id(user_id: str, number: int) -> str:
    return f"seq:{hashed_id(user_id)}:{number}"


def _chunk_slots(user_id: str, chunks: range) -> list[str]:
    return [_slot_id(user_id, c * CHUNK + i) for c in chunks for i in range(1, CHUNK + 1)]


def _mark_id(user_id: str, number: int) -> str:
    return _chunk_mark(user_id, (number - 1) // CHUNK)


def _chunk_mark(user_id: str, chunk: int) -> str:
    return f"trim:{hashed_id(user_id)}:{chunk}"


def _head_id(user_id: str) -> str:
    return f"head:{hashed_id(user_id)}"
