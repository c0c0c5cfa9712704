"""What is waiting in the extraction queue and what failed: listing and maintenance.

Read views over the same SQLite file as :class:`~recallmem.extraction.window_queue.QueueStore`:
threads with pending messages (each with its user, thread, messages, when it is due and
its last error), dead letters (with the reason), retrying or discarding a dead letter,
erasing a user's queued data, and the tokens recorded per model call.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable
from datetime import UTC, datetime

from pydantic import BaseModel, ConfigDict

from recallmem.errors import DeadLetterNotFoundError
from recallmem.extraction.threads import Utterance
from recallmem.extraction.window_queue import PENDING, URGENT, QueueStore, ThreadScope


class PendingEntry(BaseModel):
    """A thread with messages waiting for extraction."""

    model_config = ConfigDict(frozen=True)

    user_id: str
    agent_id: str | None
    thread_id: str
    messages: tuple[Utterance, ...]
    first_pending_at: datetime | None
    due_at: datetime | None
    attempts: int
    last_error: str | None
    in_progress: bool
    journaled: bool


class DeadLetter(BaseModel):
    """A window that failed ``max_attempts`` times, parked with the reason."""

    model_config = ConfigDict(frozen=True)

    id: int
    user_id: str
    agent_id: str | None
    thread_id: str
    messages: tuple[Utterance, ...]
    reason: str
    attempts: int
    at: datetime


# An empty queue's usage. ``keying_calls``: the keying step's share of ``calls`` (its
# tokens are in the totals too); ``windows`` counts extracted windows only.
NO_USAGE = {"windows": 0, "calls": 0, "input_tokens": 0, "output_tokens": 0, "keying_calls": 0}
KEYING_USAGE = "keying:"  # usage_log keys of the keying step's calls: keying:<user>


def _has_table(db: sqlite3.Connection, name: str) -> bool:
    found = db.execute("SELECT 1 FROM sqlite_master WHERE type='table' AND name=?", (name,))
    return found.fetchone() is not None


def _when(seconds: float | None) -> datetime | None:
    return None if seconds is None else datetime.fromtimestamp(seconds, UTC)


class Backlog:
    """Listing and maintenance of one queue file."""

    def __init__(self, queue: QueueStore) -> None:
        self.queue = queue

    def seconds_until_due(self) -> float | None:
        """How long until the next window is due (0 if one is), or None if none is pending."""
        rows = self.queue.read(f"SELECT t.*, {URGENT} AS urgent FROM threads t WHERE {PENDING}")
        if not rows:
            return None
        now = self.queue.clock()
        due = min(self.queue.timing.due_at(r, urgent=bool(r["urgent"]), now=now) for r in rows)
        return max(0.0, due - now)

    def pending(self, *, user_id: str | None = None) -> list[PendingEntry]:
        """Threads with messages waiting for extraction, oldest first."""
        where, args = (f"{PENDING} AND t.user_id = ?", [user_id]) if user_id else (PENDING, [])
        rows = self.queue.read(
            f"SELECT t.*, {URGENT} AS urgent FROM threads t WHERE {where} "
            "ORDER BY t.first_pending_at",
            args,
        )
        now = self.queue.clock()
        return [self._entry(row, now) for row in rows]

    def _entry(self, row: sqlite3.Row, now: float) -> PendingEntry:
        messages = self.queue.read(
            # Content is cleared once extracted; a window finished since `row` was read
            # has no text left and is no longer pending.
            "SELECT msg_id, role, content, said_at FROM messages "
            "WHERE key=? AND seq>? AND content IS NOT NULL ORDER BY seq",
            (row["key"], row["watermark"]),
        )
        return PendingEntry(
            user_id=row["user_id"],
            agent_id=row["agent_id"],
            thread_id=row["thread_id"],
            messages=tuple(
                Utterance(id=m[0], role=m[1], content=m[2], said_at=m[3]) for m in messages
            ),
            first_pending_at=_when(row["first_pending_at"]),
            due_at=_when(self.queue.timing.due_at(row, urgent=bool(row["urgent"]), now=now)),
            attempts=row["attempts"],
            last_error=row["last_error"],
            in_progress=bool(row["lease_owner"]) and (row["lease_until"] or 0) >= now,
            journaled=row["journal"] is not None,
        )

    def dead_letters(self, *, user_id: str | None = None) -> list[DeadLetter]:
        """Windows that failed too often, newest first."""
        where, args = ("WHERE user_id = ?", [user_id]) if user_id else ("", [])
        rows = self.queue.read(f"SELECT * FROM dead_letters {where} ORDER BY id DESC", args)
        return [
            DeadLetter(
                id=r["id"],
                user_id=r["user_id"],
                agent_id=r["agent_id"],
                thread_id=r["thread_id"],
                messages=tuple(Utterance(**m) for m in json.loads(r["messages"])),
                reason=r["reason"],
                attempts=r["attempts"],
                at=datetime.fromtimestamp(r["at"], UTC),
            )
            for r in rows
        ]

    @staticmethod
    def _dead_letter(db: sqlite3.Connection, letter_id: int) -> sqlite3.Row:
        row: sqlite3.Row | None = db.execute(
            "SELECT * FROM dead_letters WHERE id=?", (letter_id,)
        ).fetchone()
        if row is None:
            raise DeadLetterNotFoundError(letter_id)
        return row

    def retry_dead_letter(self, letter_id: int) -> ThreadScope:
        """Queue a dead letter's messages again, due at once; returns its thread."""
        with self.queue.tx() as db:
            row = self._dead_letter(db, letter_id)
            db.execute("DELETE FROM dead_letters WHERE id=?", (letter_id,))
        scope = ThreadScope(
            user_id=row["user_id"],
            thread_id=row["thread_id"],
            agent_id=row["agent_id"],
            timezone=row["timezone"],
        )
        # New ids: the originals stay known to the thread, so a resend of them is still ignored.
        messages = [
            Utterance(**{**m, "id": f"{m['id']}#retry{letter_id}"})
            for m in json.loads(row["messages"])
        ]
        self.queue.add(scope, messages, [True] * len(messages))
        return scope

    def drop_dead_letter(self, letter_id: int) -> None:
        """Discard a dead letter for good."""
        with self.queue.tx() as db:
            self._dead_letter(db, letter_id)
            db.execute("DELETE FROM dead_letters WHERE id=?", (letter_id,))

    def purge(
        self,
        user_id: str,
        *,
        thread_id: str | None = None,
        agent_id: str | None = None,
        erase: bool = False,
        inside: Callable[[], object] | None = None,
    ) -> int:
        """Erase a user's queued messages and dead letters (narrowed by thread or agent);
        ``erase`` (a purge of the whole user) also drops the user's maintenance record.
        ``inside`` runs in the same transaction, before the rows go (the forget ledger's
        record: a turn is then either deleted here or refused after).

        Returns how many not yet extracted messages were erased.
        """
        conditions, args = ["user_id = ?"], [user_id]
        for column, value in (("thread_id", thread_id), ("agent_id", agent_id)):
            if value is not None:
                conditions.append(f"{column} = ?")
                args.append(value)
        where = " AND ".join(conditions)
        whole_user = thread_id is None and agent_id is None
        with self.queue.tx() as db:
            if inside is not None:
                inside()
            keys = [r[0] for r in db.execute(f"SELECT key FROM threads WHERE {where}", args)]
            erased = 0
            for key in keys:
                erased += db.execute(
                    "DELETE FROM messages WHERE key=? AND content IS NOT NULL", (key,)
                ).rowcount
                db.execute("DELETE FROM messages WHERE key=?", (key,))
                db.execute("DELETE FROM threads WHERE key=?", (key,))
            db.execute(f"DELETE FROM dead_letters WHERE {where}", args)
            if whole_user:
                db.execute("DELETE FROM usage_log WHERE user_id = ?", (user_id,))
            # Maintenance (lifecycle/maintenance_journal.py) keeps a row per user in this
            # file, naming the user: erasing the user erases it, where it exists.
            if whole_user and erase and _has_table(db, "maintenance"):
                db.execute("DELETE FROM maintenance WHERE user_id = ?", (user_id,))
        return erased

    def usage(self, *, user_id: str | None = None) -> dict[str, int]:
        """Windows extracted, model calls and tokens recorded so far (the keying step's
        calls included, and counted apart in ``keying_calls``)."""
        where, args = ("WHERE user_id = ?", [user_id]) if user_id else ("", [])
        keying = f"key >= '{KEYING_USAGE}' AND key < '{KEYING_USAGE[:-1]};'"
        row = self.queue.read(
            f"SELECT COALESCE(SUM(NOT ({keying})),0), COALESCE(SUM(calls),0), "
            "COALESCE(SUM(input_tokens),0), COALESCE(SUM(output_tokens),0), "
            f"COALESCE(SUM(CASE WHEN {keying} THEN calls ELSE 0 END),0) FROM usage_log {where}",
            args,
        )[0]
        return {"windows": row[0], "calls": row[1], "input_tokens": row[2],
                "output_tokens": row[3], "keying_calls": row[4]}  # fmt: skip
