"""The extraction queue's SQLite schema, the columns added to it since its first
release, and whose lease a claim may take over (:mod:`recallmem.extraction.window_queue`)."""

from __future__ import annotations

import os
import socket
import sqlite3

SCHEMA = """
CREATE TABLE IF NOT EXISTS threads (
  key TEXT PRIMARY KEY, user_id TEXT NOT NULL, agent_id TEXT, thread_id TEXT NOT NULL,
  next_seq INTEGER NOT NULL DEFAULT 1, watermark INTEGER NOT NULL DEFAULT 0,
  first_pending_at REAL, last_observed_at REAL,
  attempts INTEGER NOT NULL DEFAULT 0, next_attempt_at REAL, last_error TEXT,
  lease_owner TEXT, lease_until REAL, window_hi INTEGER, journal TEXT);
CREATE TABLE IF NOT EXISTS messages (
  key TEXT NOT NULL, seq INTEGER NOT NULL, msg_id TEXT NOT NULL, role TEXT NOT NULL,
  content TEXT, urgent INTEGER NOT NULL DEFAULT 0, observed_at REAL NOT NULL,
  timezone TEXT, said_at REAL, PRIMARY KEY (key, seq), UNIQUE (key, msg_id));
CREATE TABLE IF NOT EXISTS dead_letters (
  id INTEGER PRIMARY KEY AUTOINCREMENT, key TEXT NOT NULL, user_id TEXT NOT NULL,
  agent_id TEXT, thread_id TEXT NOT NULL, messages TEXT NOT NULL, reason TEXT NOT NULL,
  attempts INTEGER NOT NULL, at REAL NOT NULL, timezone TEXT);
CREATE TABLE IF NOT EXISTS usage_log (
  id INTEGER PRIMARY KEY AUTOINCREMENT, key TEXT NOT NULL, user_id TEXT NOT NULL,
  at REAL NOT NULL, model TEXT, calls INTEGER NOT NULL, input_tokens INTEGER NOT NULL,
  output_tokens INTEGER NOT NULL);
"""
# Columns added since the first release: a queue file written before them gains them at
# open, and its rows read NULL (no zone given: UTC, as they were extracted then; no time
# said: the time observed).
ADDED_COLUMNS = (
    ("messages", "timezone", "TEXT"),
    ("dead_letters", "timezone", "TEXT"),
    ("messages", "said_at", "REAL"),
)


def add_missing_columns(db: sqlite3.Connection) -> None:
    """Add the columns an older queue file lacks (once, whichever process opens it)."""
    db.execute("BEGIN IMMEDIATE")  # two processes opening an old file add each column once
    try:
        for table, column, kind in ADDED_COLUMNS:
            present = {row[1] for row in db.execute(f"PRAGMA table_info({table})")}
            if column not in present:
                db.execute(f"ALTER TABLE {table} ADD COLUMN {column} {kind}")
    except BaseException:
        db.execute("ROLLBACK")
        raise
    db.execute("COMMIT")


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def owner_is_dead(owner: str | None, me: str) -> bool:
    """Whether a lease owner (``host:pid:nonce``) is a dead process on this host."""
    if not owner or owner == me:
        return False
    host, pid, _ = [*owner.split(":"), "", "", ""][:3]
    if host != socket.gethostname() or not pid.isdigit() or int(pid) == os.getpid():
        return False
    return not _pid_alive(int(pid))
