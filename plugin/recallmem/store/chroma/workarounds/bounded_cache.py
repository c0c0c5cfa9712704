"""Chroma's embedded client with its cache of open vector indexes bounded.

Chroma keeps up to RLIMIT_NOFILE / 5 collections' vector indexes open per process
(4,000 here), about 1.5 MB each for a user of 100 facts: with a collection per user
(:mod:`recallmem.store.chroma.layout`) that is gigabytes no setting of ours bounds. The
process's hot indexes are recallmem's own (``index_cache_facts``); Chroma's cache only
spares a reopen while a user is being written, so a few dozen suffice.

chromadb 1.5 has no setting for it: its embedded API sizes the cache from
``resource.getrlimit`` when the client is built. So while recallmem builds its client,
that module sees a file limit of ``5 * CHROMA_OPEN_INDEXES``; nothing else is changed
(the process's real limit stays as it is).

Upstream behaviour worked around (chromadb==1.5.9): sizing its cache of open vector
indexes from the file limit;
tests/integration/chroma_upstream/test_upstream_bounded_cache.py fails the day that
changes.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

CHROMA_OPEN_INDEXES = 64
_FILES_PER_INDEX = 5  # how chromadb counts: 4 data files and 1 metadata file
_patching = threading.Lock()


class _BoundedLimits:
    """``resource`` as chromadb.api.rust sees it while a client is built."""

    def __init__(self, real: Any) -> None:
        self._real = real

    def __getattr__(self, name: str) -> Any:
        return getattr(self._real, name)

    def getrlimit(self, which: int) -> tuple[int, int]:
        soft, hard = self._real.getrlimit(which)
        if which == self._real.RLIMIT_NOFILE:
            return min(soft, CHROMA_OPEN_INDEXES * _FILES_PER_INDEX), hard
        return soft, hard


@contextmanager
def bounded_index_cache() -> Iterator[None]:
    """Build an embedded Chroma client inside this to bound its open vector indexes."""
    import chromadb.api.rust as rust

    with _patching:
        real = getattr(rust, "resource")  # noqa: B009 - not re-exported by chromadb
        setattr(rust, "resource", _BoundedLimits(real))  # noqa: B010
        try:
            yield
        finally:
            setattr(rust, "resource", real)  # noqa: B010
