"""Access times noted by recalls, held per user until a write carries them to Chroma.

A recall stays a read: it only notes ``(fact_id, timestamp)`` pairs here. The
repository writes a user's pairs with that user's next write (under its lock) and
everyone's at close. A crash loses the access times noted since, which only feed
eviction order; the facts themselves are never at risk.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable


class AccessTimes:
    """The latest access time of each fact recalled since the last write, per user."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._pending: dict[str, dict[str, float]] = {}

    def add(self, user_id: str, touched: Iterable[tuple[str, float]]) -> None:
        """Note accesses of the user's facts."""
        with self._lock:
            self._pending.setdefault(user_id, {}).update(touched)

    def take(self, user_id: str) -> list[tuple[str, float]]:
        """The user's noted accesses, forgotten here (the caller writes them)."""
        with self._lock:
            return list(self._pending.pop(user_id, {}).items())

    def users(self) -> list[str]:
        """Users with noted accesses."""
        with self._lock:
            return list(self._pending)
