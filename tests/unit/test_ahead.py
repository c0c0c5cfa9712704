"""prepared_ahead: in order, overlapped, errors at their item, nothing prepared after a stop."""

from __future__ import annotations

import threading
from contextlib import closing

import pytest
from recallmem.persistence.ahead import prepared_ahead


def test_items_come_back_in_order_with_their_preparation() -> None:
    assert list(prepared_ahead(list(range(20)), lambda n: -n)) == [(n, -n) for n in range(20)]
    assert list(prepared_ahead([], lambda n: n)) == []


def test_the_next_item_is_prepared_while_this_one_is_used() -> None:
    second_started = threading.Event()

    def prepare(n: int) -> int:
        if n == 2:
            second_started.set()
        return n

    for n, _ in prepared_ahead([1, 2], prepare):
        if n == 1:  # still consuming item 1: item 2 is being prepared on the other thread
            assert second_started.wait(timeout=10)


def test_a_failed_preparation_raises_at_its_item_after_the_earlier_ones() -> None:
    def prepare(n: int) -> int:
        if n == 3:
            raise ValueError("embedder down")
        return n

    used: list[int] = []

    def consume() -> None:
        for n, _ in prepared_ahead([1, 2, 3, 4], prepare):
            used.append(n)

    with pytest.raises(ValueError, match="embedder down"):
        consume()
    assert used == [1, 2]


def test_nothing_further_is_prepared_once_the_caller_stops() -> None:
    prepared: list[int] = []
    with closing(prepared_ahead(list(range(10)), lambda n: prepared.append(n))) as ready:
        for n, _ in ready:
            if n == 1:
                break
    # Item 2 was submitted (and may have started) while item 1 was used; nothing after it.
    assert prepared in ([0, 1], [0, 1, 2])


def test_meanwhile_runs_on_the_callers_thread_while_the_first_item_is_prepared() -> None:
    released = threading.Event()
    waited: list[bool] = []

    def prepare(n: int) -> int:
        if n == 1:
            waited.append(released.wait(timeout=10))  # only meanwhile releases it
        return n

    def meanwhile() -> None:
        assert threading.current_thread() is threading.main_thread()
        released.set()

    assert list(prepared_ahead([1, 2], prepare, meanwhile)) == [(1, 1), (2, 2)]
    assert waited == [True]
    once: list[int] = []
    assert list(prepared_ahead([7], lambda n: n, lambda: once.append(1))) == [(7, 7)]
    assert once == [1]
