"""The durable extraction queue: a SQLite file that survives crashes and restarts.

Per conversation thread (of one user and agent) it keeps the kept messages in arrival
order (``seq``) and a **watermark**, the last ``seq`` already extracted. A **window** is
the messages after the watermark; it is **due** after ``debounce`` seconds without a
new message, after ``max_wait`` seconds of steady traffic, at ``flush_count`` pending
messages, or at once when a message asks to be remembered.

- Nothing is lost: messages are written before ``observe`` returns, and the watermark
  moves only after the window's facts are written.
- Nothing is sent twice: a message seen again (same id, or same role and text) is
  ignored, and the plan computed from a window is journaled before it is applied, so a
  crash between extraction and write is finished after a restart without calling the
  model again.
- Two workers never extract the same window: claiming takes a lease (in one SQLite
  transaction); a lease held by a dead process on this host, or expired, is taken over.
- Failures retry with exponential backoff; after ``max_attempts`` the window moves to
  the dead letters with the reason, and the thread goes on.

>>> import tempfile, pathlib
>>> queue = QueueStore(pathlib.Path(tempfile.mkdtemp()) / "q.sqlite3", Timing(debounce=30))
>>> from recallmem.extraction.threads import Utterance
>>> scope = ThreadScope(user_id="u1", thread_id="t1")
>>> queue.add(scope, [Utterance(id="a", role="user", content="I use TypeScript")])
1
>>> queue.claim() is None, queue.claim(force=True).hi  # not due yet; forced, one message
(True, 1)
"""

from __future__ import annotations

import json
import os
import socket
import sqlite3
import threading
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any

from recallmem.durability.whole_files import disk_full_refused
from recallmem.errors import InvalidInputError, StoreError

# ThreadScope, Timing and Window are re-exported: they used to live here.
from recallmem.extraction.queue_schema import SCHEMA, add_missing_columns, owner_is_dead
from recallmem.extraction.threads import ThreadScope as ThreadScope
from recallmem.extraction.threads import Timing as Timing
from recallmem.extraction.threads import Utterance, first_day, said_time
from recallmem.extraction.threads import Window as Window
from recallmem.persistence.forget_ledger import ForgetLedger
from recallmem.persistence.forget_ledger import now as ledger_now

PENDING = "t.next_seq - 1 > t.watermark"
# A journaled plan belongs to its exact window; otherwise the next claim may take more.
_KEEP_JOURNALED_WINDOW = "window_hi = CASE WHEN journal IS NULL THEN NULL ELSE window_hi END"
URGENT = (
    "EXISTS (SELECT 1 FROM messages m WHERE m.key = t.key AND m.seq > t.watermark AND m.urgent)"
)


class QueueStore:
    """The queue's SQLite file; safe to share between threads and processes. ``forgets``
    (the home's forget ledger) refuses a turn forgotten since its work began."""

    def __init__(
        self,
        path: Path,
        timing: Timing,
        *,
        clock: Callable[[], float] = time.time,
        forgets: ForgetLedger | None = None,
    ) -> None:
        self.path, self.timing, self.clock = Path(path), timing, clock
        self.forgets = forgets
        self.owner = f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"
        self._lock = threading.RLock()
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._db = sqlite3.connect(
                self.path, timeout=30, isolation_level=None, check_same_thread=False
            )
            self._db.row_factory = sqlite3.Row
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=FULL")
            self._db.executescript(SCHEMA)
            add_missing_columns(self._db)
        except sqlite3.Error as exc:
            raise StoreError(
                f"could not open the extraction queue at {self.path}: {exc}. Check that the "
                "directory is writable, or set RECALLMEM_HOME to another data directory."
            ) from exc

    @contextmanager
    def tx(self) -> Iterator[sqlite3.Connection]:
        """One write transaction; on a full disk, DiskFullError (it did not happen)."""
        with self._lock, disk_full_refused(str(self.path), "write to the extraction queue"):
            self._db.execute("BEGIN IMMEDIATE")
            try:
                yield self._db
            except BaseException:
                with suppress(sqlite3.Error):  # a failed statement may have ended it
                    self._db.execute("ROLLBACK")
                raise
            self._db.execute("COMMIT")

    def read(self, sql: str, args: Sequence[Any] = ()) -> list[sqlite3.Row]:
        with self._lock:
            return list(self._db.execute(sql, args))

    def close(self) -> None:
        """Close the file; pending work stays in it."""
        with self._lock:
            self._db.close()

    # -- writing ------------------------------------------------------------------

    def add(
        self, scope: ThreadScope, messages: Sequence[Utterance], urgent: Sequence[bool] = ()
    ) -> int:
        """Queue the messages not seen before in this thread; returns how many were new.

        Each message keeps the time it was queued, the time it was said if it says so,
        and ``scope.timezone``, the user's zone.
        """
        if not scope.user_id or not scope.thread_id:
            raise InvalidInputError("user_id and thread_id are required to queue messages")
        flags = list(urgent) or [False] * len(messages)
        now = self.clock()
        with self.tx() as db:
            if self.forgets is not None:  # in the transaction a purge's deletion takes
                self.forgets.admit(scope.user_id, scope=(scope.thread_id, scope.agent_id))
            db.execute(
                "INSERT OR IGNORE INTO threads (key, user_id, agent_id, thread_id) "
                "VALUES (?,?,?,?)",
                (scope.key, scope.user_id, scope.agent_id, scope.thread_id),
            )
            (next_seq,) = db.execute(
                "SELECT next_seq FROM threads WHERE key=?", (scope.key,)
            ).fetchone()
            added = 0
            for message, flag in zip(messages, flags, strict=True):
                cursor = db.execute(
                    "INSERT OR IGNORE INTO messages (key, seq, msg_id, role, content, urgent, "
                    "observed_at, timezone, said_at) VALUES (?,?,?,?,?,?,?,?,?)",
                    (
                        scope.key,
                        next_seq + added,
                        message.id,
                        message.role,
                        message.content,
                        flag,
                        now,
                        scope.timezone,
                        message.said_at,
                    ),
                )
                added += cursor.rowcount
            db.execute(
                "UPDATE threads SET next_seq = next_seq + ?, "
                "last_observed_at = COALESCE(?, last_observed_at), "
                "first_pending_at = COALESCE(first_pending_at, ?) WHERE key = ?",
                (added, now if added else None, now if added else None, scope.key),
            )
        return added

    def _due_sql(self, force: bool) -> tuple[str, list[Any]]:
        now = self.clock()
        lease_free = "(t.lease_owner IS NULL OR t.lease_until < ?)"
        if force:
            return f"{PENDING} AND {lease_free}", [now]
        t = self.timing
        due = (
            f"(t.journal IS NOT NULL OR {URGENT} OR t.next_seq - 1 - t.watermark >= ? "
            "OR t.last_observed_at <= ? OR t.first_pending_at <= ?)"
        )
        backoff = "(t.next_attempt_at IS NULL OR t.next_attempt_at <= ?)"
        sql = f"{PENDING} AND {lease_free} AND {backoff} AND {due}"
        return sql, [now, now, t.flush_count, now - t.debounce, now - t.max_wait]

    def _steal_dead_leases(self, db: sqlite3.Connection) -> None:
        for row in db.execute(
            f"SELECT key, lease_owner FROM threads t WHERE {PENDING} AND lease_owner IS NOT NULL"
        ):
            if owner_is_dead(row["lease_owner"], self.owner):
                db.execute("UPDATE threads SET lease_until = 0 WHERE key = ?", (row["key"],))

    def claim(
        self,
        key: str | None = None,
        *,
        force: bool = False,
        exclude: Sequence[str] = (),
        user_id: str | None = None,
    ) -> Window | None:
        """Lease the next due window (``force``: any pending one; ``user_id``: that user's
        only), or None."""
        sql, args = self._due_sql(force)
        if key is not None:
            sql, args = f"{sql} AND t.key = ?", [*args, key]
        if user_id is not None:
            sql, args = f"{sql} AND t.user_id = ?", [*args, user_id]
        if exclude:
            sql += f" AND t.key NOT IN ({','.join('?' * len(exclude))})"
            args += list(exclude)
        with self.tx() as db:
            self._steal_dead_leases(db)
            while True:
                row = db.execute(
                    f"SELECT * FROM threads t WHERE {sql} ORDER BY t.first_pending_at LIMIT 1", args
                ).fetchone()
                if row is None:
                    return None
                window = self._lease(db, row)
                if window.attempts <= self.timing.max_attempts:
                    return window
                # Every earlier attempt died with its worker (a crash, not an error).
                reason = row["last_error"] or "the worker stopped while extracting this window"
                self._bury(db, window, f"{reason} ({window.attempts - 1} attempts)")

    def _lease(self, db: sqlite3.Connection, row: sqlite3.Row) -> Window:
        # Attempts are counted when a window is claimed, so a window that crashes the
        # process every time still ends in the dead letters instead of looping forever.
        hi = row["window_hi"] or min(row["next_seq"] - 1, row["watermark"] + self.timing.window_cap)
        messages = db.execute(
            "SELECT seq, msg_id, role, content, observed_at, timezone, said_at FROM messages "
            "WHERE key=? AND seq>? AND seq<=? ORDER BY seq",
            (row["key"], row["watermark"], hi),
        ).fetchall()
        if row["window_hi"] is None:
            messages = first_day(messages)
            hi = messages[-1]["seq"] if messages else hi
        db.execute(
            "UPDATE threads SET lease_owner=?, lease_until=?, window_hi=?, attempts=attempts+1 "
            "WHERE key=?",
            (self.owner, self.clock() + self.timing.lease, hi, row["key"]),
        )
        # The window is as of its last message: its zone, and the time it was said.
        zone = messages[-1]["timezone"] if messages else None
        said_at = said_time(messages[-1]) if messages else self.clock()
        scope = ThreadScope(
            user_id=row["user_id"],
            thread_id=row["thread_id"],
            agent_id=row["agent_id"],
            timezone=zone,
        )
        utterances = tuple(
            Utterance(id=m["msg_id"], role=m["role"], content=m["content"], said_at=m["said_at"])
            for m in messages
        )
        attempts = row["attempts"] + 1
        # In the transaction a purge's deletion takes: a later forget refuses its writes.
        return Window(
            scope, row["watermark"], hi, utterances, attempts, row["journal"], self.owner,
            said_at=said_at, began=ledger_now(),
        )  # fmt: skip

    def journal(self, window: Window, payload: str, usage: dict[str, Any]) -> None:
        """Record what the model produced for a window before anything is written."""
        with self.tx() as db:
            if not db.execute(
                "UPDATE threads SET journal=? WHERE key=? AND watermark=? AND lease_owner=?",
                (payload, window.scope.key, window.lo, window.owner),
            ).rowcount:
                return  # the thread was forgotten (or taken over): no usage to keep of it
            self._log_usage(db, window.scope.key, window.scope.user_id, usage)

    def log_usage(self, key: str, user_id: str, usage: dict[str, Any]) -> None:
        """Record a model call made for a user outside a window (``key`` says what for:
        ``keying:<user>`` for the keying step), counted in the extraction cost figures."""
        with self.tx() as db:
            self._log_usage(db, key, user_id, usage)

    def _log_usage(
        self, db: sqlite3.Connection, key: str, user_id: str, usage: dict[str, Any]
    ) -> None:
        db.execute(
            "INSERT INTO usage_log (key, user_id, at, model, calls, input_tokens, "
            "output_tokens) VALUES (?,?,?,?,?,?,?)",
            (key, user_id, self.clock(), usage.get("model"), usage.get("calls", 0),
             usage.get("input_tokens", 0), usage.get("output_tokens", 0)),
        )  # fmt: skip

    def _advance(self, db: sqlite3.Connection, window: Window) -> bool:
        moved = db.execute(
            "UPDATE threads SET watermark=?, window_hi=NULL, journal=NULL, attempts=0, "
            "next_attempt_at=NULL, last_error=NULL, lease_owner=NULL, lease_until=NULL, "
            "first_pending_at=(SELECT MIN(observed_at) FROM messages WHERE key=? AND seq>?) "
            "WHERE key=? AND watermark=?",
            (window.hi, window.scope.key, window.hi, window.scope.key, window.lo),
        ).rowcount
        # The text is no longer needed; the ids stay so a resent message is recognised.
        db.execute(
            "UPDATE messages SET content=NULL WHERE key=? AND seq<=?", (window.scope.key, window.hi)
        )
        return bool(moved)

    def complete(self, window: Window) -> bool:
        """Move the watermark past a window whose plan was applied."""
        with self.tx() as db:
            return self._advance(db, window)

    def release(self, window: Window) -> None:
        """Give a window back untouched (no model, or shutting down)."""
        with self.tx() as db:
            db.execute(
                "UPDATE threads SET lease_owner=NULL, lease_until=NULL, attempts=attempts-1, "
                f"{_KEEP_JOURNALED_WINDOW} WHERE key=? AND lease_owner=?",
                (window.scope.key, window.owner),
            )

    def _bury(self, db: sqlite3.Connection, window: Window, reason: str) -> None:
        messages = json.dumps([m.model_dump() for m in window.messages], ensure_ascii=False)
        db.execute(
            "INSERT INTO dead_letters (key, user_id, agent_id, thread_id, messages, "
            "reason, attempts, at, timezone) VALUES (?,?,?,?,?,?,?,?,?)",
            (window.scope.key, window.scope.user_id, window.scope.agent_id,
             window.scope.thread_id, messages, reason, window.attempts, self.clock(),
             window.scope.timezone),
        )  # fmt: skip
        self._advance(db, window)

    def fail(self, window: Window, reason: str) -> bool:
        """Record a failure; returns True when the window went to the dead letters."""
        with self.tx() as db:
            if not db.execute(
                "SELECT 1 FROM threads WHERE key=? AND watermark=?", (window.scope.key, window.lo)
            ).fetchone():
                return False  # forgotten (or finished) meanwhile: its words must not stay
            if window.attempts >= self.timing.max_attempts:
                self._bury(db, window, reason)
                return True
            db.execute(
                "UPDATE threads SET last_error=?, next_attempt_at=?, "
                f"lease_owner=NULL, lease_until=NULL, {_KEEP_JOURNALED_WINDOW} "
                "WHERE key=? AND watermark=?",
                (
                    reason,
                    self.clock() + self.timing.backoff(window.attempts),
                    window.scope.key,
                    window.lo,
                ),
            )
            return False

    def pending_count(self, scope: ThreadScope) -> int:
        """How many messages of a thread wait for extraction."""
        rows = self.read("SELECT next_seq - 1 - watermark FROM threads WHERE key=?", (scope.key,))
        return int(rows[0][0]) if rows else 0

    def in_progress_here(self, exclude: Sequence[str] = ()) -> int:
        """Pending threads leased right now by a worker of this process (any instance)."""
        here = self.owner.rsplit(":", 1)[0] + ":%"
        rows = self.read(
            f"SELECT key FROM threads t WHERE {PENDING} AND lease_owner LIKE ? "
            "AND lease_until >= ?",
            (here, self.clock()),
        )
        return sum(row[0] not in exclude for row in rows)
