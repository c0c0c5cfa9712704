"""A read of a collection that another process is writing, retried until it settles.

A Chroma server answers a read with vectors that overlaps a write to the same
collection by another client with "Error finding id" now and then: for a moment its
vector index and its records disagree about the ids just written. Met in
``tests/integration/server/test_revisions.py`` (two services writing one user while
each reads the other's writes) on a loaded machine: one read in about a hundred. The
same read a moment later succeeds, so it is retried a few times, briefly; a state that
does not settle (a vector index a crash left broken) still raises as it did.

Upstream behaviour worked around (chromadb==1.5.9): a server read that races a write
failing with "Error finding id";
tests/integration/chroma_upstream/test_upstream_settling.py fails the day that changes.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TypeVar

_IN_FLIGHT = "error finding id"
SETTLE_TRIES = 5
SETTLE_PAUSE_SECONDS = 0.05  # doubled after each try: at most 0.75 s in all
T = TypeVar("T")


def is_in_flight(exc: BaseException) -> bool:
    """Whether Chroma failed a read because a write to the collection was in flight."""
    return _IN_FLIGHT in str(exc).lower()


def settled(read: Callable[[], T]) -> T:
    """``read()``, tried again after a pause while it meets a write in flight."""
    pause = SETTLE_PAUSE_SECONDS
    for _ in range(SETTLE_TRIES - 1):
        try:
            return read()
        except Exception as exc:
            if not is_in_flight(exc):
                raise
        time.sleep(pause)
        pause *= 2
    return read()
