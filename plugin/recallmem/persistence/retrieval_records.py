"""The durable record of what reached a model: ``<home>/retrievals.sqlite3``.

One row per :class:`~recallmem.retrieval.shown.RetrievalRecord`, as JSON, with its user,
agent and thread beside it for lookups; a secret in its query (often the user's message)
is redacted first, as a conversation is before it is queued. The file is created by the
first record: reading a home where nothing was recorded creates nothing. Each write is
one transaction that also drops the user's oldest rows past ``retrievals_per_user``, so
a user's record stays bounded however long the service runs.

Several processes may share the file: SQLite's WAL mode and a busy timeout let the
workers of one host (which share a home on a Chroma server) write it at once, and every
read sees what all of them wrote. Hosts with homes of their own keep records of their
own (docs/deployment.md). ``synchronous=NORMAL``: a record survives a crash or a restart
of the process; a power cut may lose the last few, which only an audit would miss.

A record that cannot be written (a full disk, a file locked past the timeout) is logged
and dropped: recording never breaks an agent's turn. A purge is another matter: when it
cannot erase the records it must, it raises, as any purge that leaves text behind does.
What a purge erases: all of the user's records ("forget me"), those of the agent or
thread purged, and every record that names a purged fact, shown or dropped: its query
is what brought that fact up, so it is likely to quote it. ``secure_delete`` zeroes the
bytes of every deleted row (and every page freed), and a purge then checkpoints the
write-ahead log into the file and empties it, so no byte of an erased record stays in
either. Rewriting the file (``VACUUM``, as the queue's scrub does) would too, at a cost
that grows with every user's records (docs/decisions/0061).
"""

from __future__ import annotations

import logging
import sqlite3
import threading
from collections.abc import Collection, Iterator
from contextlib import contextmanager
from pathlib import Path

from recallmem.config import MemoryConfig
from recallmem.durability.erasure import Erasure
from recallmem.errors import StoreError
from recallmem.limits import check_page, check_scope_id, check_user_id
from recallmem.persistence.forget_ledger import ForgetLedger
from recallmem.retrieval.shown import RetrievalRecord
from recallmem.secrets.detector import load_secret_rules, redact

log = logging.getLogger("recallmem.store")

_SCHEMA = """
CREATE TABLE IF NOT EXISTS retrievals (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    user_id TEXT NOT NULL,
    agent_id TEXT,
    thread_id TEXT,
    record TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS retrievals_of_user ON retrievals (user_id, seq);
"""
_TIMEOUT_SECONDS = 10.0  # another process's write holds the file for milliseconds


class RetrievalRecords:
    """The records of one home; safe to share between threads and processes."""

    def __init__(self, config: MemoryConfig, erasure: Erasure | None = None) -> None:
        self.path = config.retrievals_path
        self.per_user = config.retrievals_per_user
        self.prompt_dir = config.prompt_dir
        self._db: sqlite3.Connection | None = None
        self._lock = threading.Lock()
        self._forgets = ForgetLedger.of(config.home)
        if erasure is not None:  # a purge of facts (or of the user) erases their entries
            erasure.quoting.append(self.forget)

    def _connection(self, create: bool) -> sqlite3.Connection | None:
        if self._db is None:
            if not create and not self.path.exists():
                return None
            self.path.parent.mkdir(parents=True, exist_ok=True)
            db = sqlite3.connect(
                self.path, timeout=_TIMEOUT_SECONDS, isolation_level=None, check_same_thread=False
            )
            try:
                db.execute("PRAGMA journal_mode=WAL")
                db.execute("PRAGMA synchronous=NORMAL")
                db.execute("PRAGMA secure_delete=ON")
                db.executescript(_SCHEMA)
            except sqlite3.Error:
                db.close()
                raise
            self._db = db
        return self._db

    @contextmanager
    def _using(
        self, what: str, *, create: bool = False, write: bool = True
    ) -> Iterator[sqlite3.Connection | None]:
        """The connection (None: no file, and ``create`` is false), in one transaction when
        ``write``; SQLite's and the disk's errors become a StoreError saying ``what``."""
        with self._lock:
            try:
                db = self._connection(create)
                if db is None or not write:
                    yield db
                    return
                db.execute("BEGIN IMMEDIATE")
                try:
                    yield db
                except BaseException:
                    db.execute("ROLLBACK")
                    raise
                db.execute("COMMIT")
            except (sqlite3.Error, OSError) as exc:
                raise StoreError(f"could not {what} in {self.path}: {exc}") from exc

    def add(self, record: RetrievalRecord) -> None:
        """Keep ``record``, dropping the user's oldest past the bound; a failure is logged."""
        if self.per_user == 0:
            return
        # A query is often the user's message: a secret in it never reaches the file.
        record = record.model_copy(
            update={"query": redact(record.query, load_secret_rules(self.prompt_dir))}
        )
        try:
            with self._using("write a retrieval record", create=True) as db:
                assert db is not None
                # Asked inside the write: a purge recorded before it is seen here, and one
                # recorded after it deletes this row with the user's others.
                scope = (record.thread_id, record.agent_id)
                if self._forgets.forgotten(record.user_id, scope=scope, purged=True):
                    return
                db.execute(
                    "INSERT INTO retrievals (user_id, agent_id, thread_id, record) "
                    "VALUES (?, ?, ?, ?)",
                    (record.user_id, record.agent_id, record.thread_id, record.model_dump_json()),
                )
                db.execute(
                    "DELETE FROM retrievals WHERE user_id = ?1 AND seq <= (SELECT seq FROM "
                    "retrievals WHERE user_id = ?1 ORDER BY seq DESC LIMIT 1 OFFSET ?2)",
                    (record.user_id, self.per_user),
                )
        except StoreError as exc:
            log.warning("recallmem: a retrieval record was not kept (the turn goes on): %s", exc)

    def latest(
        self, user_id: str, *, thread_id: str | None = None, limit: int = 50
    ) -> list[RetrievalRecord]:
        """The user's records (of one thread, if given), newest first."""
        user_id, thread_id = check_user_id(user_id), check_scope_id(thread_id, "thread_id")
        limit, _ = check_page(limit, 0)
        where, args = "user_id = ?", [user_id]
        if thread_id is not None:
            where, args = f"{where} AND thread_id = ?", [*args, thread_id]
        query = f"SELECT record FROM retrievals WHERE {where} ORDER BY seq DESC LIMIT ?"
        with self._using("read the retrieval records", write=False) as db:
            rows = [] if db is None else db.execute(query, (*args, limit)).fetchall()
        return [RetrievalRecord.model_validate_json(row) for (row,) in rows]

    def forget(self, user_id: str, fact_ids: Collection[str] | None) -> None:
        """Erase the user's records (``fact_ids`` None), or those naming these facts."""
        self._erase(user_id, None if fact_ids is None else set(fact_ids), {})

    def forget_scope(self, user_id: str, *, agent_id: str | None, thread_id: str | None) -> None:
        """Erase the user's records of one agent or thread (a purge of that scope: their
        queries are its words)."""
        scope = {k: v for k, v in (("agent_id", agent_id), ("thread_id", thread_id)) if v}
        if scope:
            self._erase(user_id, None, scope)

    def _erase(self, user_id: str, fact_ids: set[str] | None, scope: dict[str, str]) -> None:
        with self._using("erase retrieval records") as db:
            if db is None:
                return
            where = " AND ".join(["user_id = ?", *(f"{k} = ?" for k in scope)])
            args = (user_id, *scope.values())
            rows = db.execute(f"SELECT seq, record FROM retrievals WHERE {where}", args)
            doomed = [
                (seq,) for seq, text in rows.fetchall()
                if fact_ids is None or not fact_ids.isdisjoint(_names(text))
            ]  # fmt: skip
            db.executemany("DELETE FROM retrievals WHERE seq = ?", doomed)
        # Also when nothing was left to delete: a purge retried after a busy log empties it.
        with self._using("empty the write-ahead log", write=False) as db:
            assert db is not None
            _truncate_log(db, self.path)

    def close(self) -> None:
        """Close the file (a later call opens it again)."""
        with self._lock:
            if self._db is not None:
                self._db.close()
                self._db = None


def _names(record: str) -> set[str]:
    return RetrievalRecord.model_validate_json(record).names()


def _truncate_log(db: sqlite3.Connection, path: Path) -> None:
    """Copy the write-ahead log into the file and empty it, so the deleted rows' earlier
    pages leave with it (waiting, within the busy timeout, for readers to finish)."""
    busy, _, _ = db.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
    if busy:
        raise StoreError(
            f"the records are erased, but {path}'s write-ahead log could not be emptied "
            "while another process read it; purge again"
        )
