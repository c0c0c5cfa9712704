"""A write brings this process's index up to date without a reload, before it claims its
revision, and a search after it ranks as one over a freshly loaded index."""

from __future__ import annotations

from typing import Any

import pytest
from recallmem.memory import Memory


def test_the_index_holds_a_write_before_its_revision_is_claimed(
    memory: Memory, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Between the claim and the index taking its number, a read of this process sees the
    # index behind and reloads the whole user: the write must be in the index by then.
    repository, seen = memory.repository, []
    memory.remember("Keeps bees on the roof", user_id="ada", category="identity")
    memory.recall("bees", user_id="ada")  # the derived arrays built, as after a search
    claim = repository.store.record_write

    def record_write(user_id: str, revision: int) -> Any:
        seen.append([f.content for f in repository._indexes.get(user_id).facts()])
        return claim(user_id, revision)

    monkeypatch.setattr(repository.store, "record_write", record_write)
    loads = []
    load = repository.store.load_user
    monkeypatch.setattr(repository.store, "load_user", lambda u: loads.append(u) or load(u))
    memory.remember("Drinks oolong, no sugar", user_id="ada", category="preference")
    assert seen == [["Keeps bees on the roof", "Drinks oolong, no sugar"]]
    hits = memory.recall("what tea do I drink", user_id="ada", k=1, min_score=None)
    assert [h.fact.content for h in hits] == ["Drinks oolong, no sugar"] and loads == []


def test_a_search_after_writes_ranks_as_one_after_a_fresh_load(memory: Memory) -> None:
    for text in ("Lives in Munich", "Runs a half marathon every spring", "喜欢喝乌龙茶"):
        memory.remember(text, user_id="ada", category="context")
    memory.recall("tea", user_id="ada")
    old = memory.remember("Lives in Berlin now", user_id="ada", category="context")
    memory.forget(memory.list(user_id="ada")[0].id)
    memory.update(old.id, content="Moved to Berlin in May", user_id="ada")
    queries = ["where do I live", "茶", "marathon", "Berlin"]
    warm = [[(h.fact.id, h.score) for h in memory.recall(q, user_id="ada", min_score=None)]
            for q in queries]  # fmt: skip
    memory.repository._indexes.drop("ada")  # the next read loads the user afresh
    cold = [[(h.fact.id, h.score) for h in memory.recall(q, user_id="ada", min_score=None)]
            for q in queries]  # fmt: skip
    assert warm == cold
