"""Recall latency and hit rate as this process served them, per user and in total.

Searches through the API are timed here; the chat agent's retrievals (injection, cue,
hedge and tool recalls) count toward the hit rate. A recall has a hit when something
reached the model: a fact at or above the recall floor (an API search's hits below it
would have been left out), or a memory block or recall note that was injected.

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

import statistics
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
        with_hits = sum(self.hits)
        p50, p95 = _p50_p95(list(self.latencies))
        return RecallStats(
            count=count,
            with_hits=with_hits,
            hit_rate=round(with_hits / count, 4),
            p50_ms=None if p50 is None else round(p50 * 1000, 3),
            p95_ms=None if p95 is None else round(p95 * 1000, 3),
        )


def _p50_p95(values: list[float]) -> tuple[float | None, float | None]:
    """The median and 95th percentile (interpolated; one value is both; none: None)."""
    if len(values) < 2:
        return (values[0], values[0]) if values else (None, None)
    cuts = statistics.quantiles(values, n=20, method="inclusive")
    return cuts[9], cuts[18]


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
