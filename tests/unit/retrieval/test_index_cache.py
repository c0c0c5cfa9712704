"""The hot index cache: loads once, drops least recently used users past its fact budget."""

from __future__ import annotations

import numpy as np
from recallmem.retrieval.index import IndexCache, UserIndex
from recallmem.types import Fact


def _index(user: str, size: int) -> UserIndex:
    facts = [Fact(content=f"fact {n}", category="context", user_id=user) for n in range(size)]
    return UserIndex(user, facts, np.zeros((size, 4), dtype=np.float32))


def test_loads_once_and_evicts_least_recently_used_past_the_budget() -> None:
    loads: list[str] = []

    def load(user: str) -> UserIndex:
        loads.append(user)
        return _index(user, 40)

    cache = IndexCache(100, load)
    first = cache.get("a")
    cache.get("b")
    assert cache.get("a") is first  # no second load; "a" is now the most recent
    cache.get("c")  # 120 facts > 100: "b", the least recently used, goes
    cache.get("a")
    cache.get("b")
    assert loads == ["a", "b", "c", "b"]


def test_a_user_larger_than_the_budget_is_still_served() -> None:
    cache = IndexCache(10, lambda user: _index(user, 50))
    assert len(cache.get("big")) == 50
    assert len(cache.get("big")) == 50


def test_dedup_lookups_after_a_write_do_not_build_the_lexical_index() -> None:
    # nearest() runs for every remember_many batch; BM25 is only needed by search().
    index = _index("u", 3)
    vectors = np.eye(4, dtype=np.float32)[:2]
    index.upsert([Fact(content="new fact", category="context", user_id="u")], vectors[:1])
    assert [len(hits) for hits in index.nearest(vectors, agent_id=None, k=2)] == [2, 2]
    assert "lexical" not in vars(index._derived)
