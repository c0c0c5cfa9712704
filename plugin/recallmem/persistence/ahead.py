"""Prepare the next item on a second thread while the caller consumes this one.

A write of many facts is embedding (numpy, which releases the GIL) then storing (Chroma);
overlapping the embedding of step ``i + 1`` with the storing of step ``i`` keeps both
cores busy. Items are handed back in order, each once its preparation is done; an error
in a preparation is raised when the caller reaches that item, and once the caller stops
(a failed write, an error, ``break``) nothing further is prepared.

>>> [(n, square) for n, square in prepared_ahead([1, 2, 3], lambda n: n * n)]
[(1, 1), (2, 4), (3, 9)]
"""

from __future__ import annotations

from collections.abc import Callable, Generator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from typing import TypeVar

Item = TypeVar("Item")
Prepared = TypeVar("Prepared")


def prepared_ahead(
    items: Sequence[Item],
    prepare: Callable[[Item], Prepared],
    meanwhile: Callable[[], object] | None = None,
) -> Generator[tuple[Item, Prepared], None, None]:
    """Each item with ``prepare(item)``, the next one prepared while this one is used;
    ``meanwhile`` runs on the caller's thread while the first item is prepared.

    A single item is prepared on the caller's thread: there is nothing to overlap.
    """
    if len(items) <= 1:
        if meanwhile is not None:
            meanwhile()
        for item in items:
            yield item, prepare(item)
        return
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="recallmem-ahead") as pool:
        pending: Future[Prepared] = pool.submit(prepare, items[0])
        try:
            if meanwhile is not None:
                meanwhile()
            for position, item in enumerate(items):
                prepared = pending.result()
                if position + 1 < len(items):
                    pending = pool.submit(prepare, items[position + 1])
                yield item, prepared
        finally:
            pending.cancel()  # the caller stopped early: the step after is not needed
