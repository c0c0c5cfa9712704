"""Access times, buffered: recall stays a read, and the times reach Chroma in batches.

A crash loses at most the last few seconds of access times, which only feed
eviction order; the facts themselves are never at risk.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Iterable

from recallmem.errors import StoreError
from recallmem.store.chroma import FactStore

log = logging.getLogger("recallmem.store")

FLUSH_SECONDS = 10.0


class AccessTimes:
    """Collects ``(fact_id, timestamp)`` pairs and writes them at most every few seconds."""

    def __init__(self, store: FactStore, flush_seconds: float = FLUSH_SECONDS) -> None:
        self._store = store
        self._flush_seconds = flush_seconds
        self._lock = threading.Lock()
        self._pending: dict[str, float] = {}
        self._since = time.monotonic()

    def add(self, touched: Iterable[tuple[str, float]]) -> None:
        """Record accesses; writes the batch if the last write is old enough."""
        with self._lock:
            self._pending.update(touched)
            due = time.monotonic() - self._since >= self._flush_seconds
        if due:
            self.flush()

    def flush(self) -> None:
        """Write every buffered access time now."""
        with self._lock:
            pending, self._pending = self._pending, {}
            self._since = time.monotonic()
        try:
            self._store.touch(list(pending.items()))
        except StoreError as exc:
            # Recall is a read: it must keep working when the disk is full or the store
            # refuses writes. These times only order eviction, so they are dropped.
            log.warning("recallmem: %d access time(s) not recorded: %s", len(pending), exc)
