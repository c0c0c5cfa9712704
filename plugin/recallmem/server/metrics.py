"""Recall latency and hit rate as this process served them, per user and in total.

Searches through the API are timed here; the chat agent's retrievals (injection, cue,
hedge and tool recalls) count toward the hit rate.

Samples are kept in bounded windows (the latest recalls of the latest users), so the
figures describe recent traffic and memory use stays flat however long the service runs.

>>> stats = RecallMetrics()
>>> stats.record("ada", seconds=0.004, hits=2)
>>> stats.record("ada", seconds=0.006, hits=0)
>>> view = stats.view("ada")
>>> view.count, view.with_hits, view.hit_rate
(2, 1, 0.5)
>>> stats.view("bob").count
0
"""

from __future__ import annotations

import threading
from collections import OrderedDict, deque

from recallmem.server.schemas import RecallStats

_SAMPLES = 1000
_USERS = 1024


class _Window:
    def __init__(self) -> None:
        self.latencies: deque[float] = deque(maxlen=_SAMPLES)
        self.hits: deque[bool] = deque(maxlen=_SAMPLES)

    def add(self, seconds: float | None, found: bool) -> None:
        if seconds is not None:
            self.latencies.append(seconds)
        self.hits.append(found)

    def view(self) -> RecallStats:
        count = len(self.hits)
        if not count:
            return RecallStats(count=0, with_hits=0, hit_rate=None, p50_ms=None, p95_ms=None)
        ordered = sorted(self.latencies)
        with_hits = sum(self.hits)
        return RecallStats(
            count=count,
            with_hits=with_hits,
            hit_rate=round(with_hits / count, 4),
            p50_ms=round(_percentile(ordered, 0.50) * 1000, 3) if ordered else None,
            p95_ms=round(_percentile(ordered, 0.95) * 1000, 3) if ordered else None,
        )


def _percentile(ordered: list[float], q: float) -> float:
    """Nearest-rank percentile of sorted values."""
    rank = max(0, min(len(ordered) - 1, round(q * len(ordered) + 0.5) - 1))
    return ordered[rank]


class RecallMetrics:
    """Thread-safe recall statistics for each user and for the whole process."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._all = _Window()
        self._users: OrderedDict[str, _Window] = OrderedDict()

    def record(self, user_id: str, *, seconds: float | None, hits: int) -> None:
        """Count one recall of ``user_id`` that found ``hits`` facts in ``seconds``
        (None when another component timed it: it then counts for the hit rate only)."""
        with self._lock:
            window = self._users.pop(user_id, None) or _Window()
            self._users[user_id] = window
            while len(self._users) > _USERS:
                self._users.popitem(last=False)
            window.add(seconds, hits > 0)
            self._all.add(seconds, hits > 0)

    def view(self, user_id: str | None = None) -> RecallStats:
        """The statistics of one user, or of every recall when ``user_id`` is None."""
        with self._lock:
            if user_id is None:
                return self._all.view()
            window = self._users.get(user_id)
            return window.view() if window else _Window().view()
