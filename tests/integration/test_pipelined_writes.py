"""remember_many writes in steps, embedding the next step while this one is stored.

The write protocol holds for every step: Chroma, then the revision, then the index,
under the user's lock; a step that fails drops the user's index, so what the process
shows is what Chroma holds, and nothing is acknowledged that is not stored.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
from recallmem import Memory, MemoryConfig
from recallmem.errors import StoreError
from recallmem.persistence import remember_steps as steps
from recallmem.store.chroma.adapter import ChromaFactStore
from recallmem.testing import HashingEmbeddings

FACTS = 120  # three steps of 50


@pytest.fixture(autouse=True)
def steps_of_fifty(monkeypatch: pytest.MonkeyPatch) -> None:
    """Calls of over 1,000 facts go in steps; these tests make steps of 50 to see them."""
    monkeypatch.setattr(steps, "WRITE_STEP", 50)


def items(n: int, start: int = 0) -> list[dict[str, Any]]:
    return [{"content": f"Fact number {i} about topic {i * 7}", "category": "context"}
            for i in range(start, start + n)]  # fmt: skip


def contents(memory: Memory, user: str) -> set[str]:
    return {f.content for f in memory.list(user_id=user, limit=1000)}


def test_a_call_of_many_steps_stores_every_fact_once(memory: Memory) -> None:
    stored = memory.remember_many(items(FACTS), user_id="ada")
    assert [f.content for f in stored] == [i["content"] for i in items(FACTS)]
    assert len({f.id for f in stored}) == FACTS
    again = memory.remember_many(items(FACTS), user_id="ada")  # duplicates of every step
    assert [f.id for f in again] == [f.id for f in stored]
    assert len(contents(memory, "ada")) == FACTS


def test_a_duplicate_in_a_later_step_folds_into_an_earlier_step(memory: Memory) -> None:
    batch = items(60)
    batch[55] = dict(batch[3])  # step 2 repeats a fact of step 1
    stored = memory.remember_many(batch, user_id="ada")
    assert stored[55].id == stored[3].id and stored[55].confirmations == 1
    assert len(contents(memory, "ada")) == 59
    assert memory.count() == 59  # the folded candidate left the id directory again


def _count_writes(memory: Memory, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Record each directory write and delete, and each revision claim; all still run."""
    calls: list[str] = []
    directory = memory.repository.store.collections.directory

    class CountedDirectory:
        def __getattr__(self, name: str) -> Any:
            if name in ("upsert", "add", "delete"):
                calls.append(f"directory {name}")
            return getattr(directory, name)

    claim = memory.repository.store.revisions.record_write

    def counted_claim(*args: Any) -> int:
        calls.append("claim")
        return claim(*args)

    monkeypatch.setattr(memory.repository.store.collections, "directory", CountedDirectory())
    monkeypatch.setattr(memory.repository.store.revisions, "record_write", counted_claim)
    return calls


def test_a_call_writes_the_directory_once_and_claims_one_revision(
    memory: Memory, monkeypatch: pytest.MonkeyPatch
) -> None:
    memory.remember("Was here before", user_id="ada", category="context")
    calls = _count_writes(memory, monkeypatch)
    memory.remember_many(items(FACTS), user_id="ada")
    assert calls == ["directory upsert", "claim"]  # three steps, one of each
    assert memory.revision("ada") == "2" and memory.count() == FACTS + 1
    calls.clear()
    batch = items(FACTS, start=FACTS)
    batch[110] = {"content": "Was here before", "category": "context"}  # folds: unlisted
    memory.remember_many(batch, user_id="ada")
    # (the stored fact it confirms is rewritten with its vector, and so registered again)
    assert calls.count("claim") == 1 and calls[0] == "directory upsert"
    assert calls[-1] == "directory delete" and calls.count("directory delete") == 1
    assert memory.revision("ada") == "3" and memory.count() == 2 * FACTS


def test_a_call_of_one_step_registers_only_what_it_writes(
    memory: Memory, monkeypatch: pytest.MonkeyPatch
) -> None:
    memory.remember("Was here before", user_id="ada", category="context")
    calls = _count_writes(memory, monkeypatch)
    memory.remember_many([{"content": "Was here before", "category": "context"}, *items(2)],
                         user_id="ada")  # fmt: skip
    assert calls == ["directory upsert", "claim"]  # nothing listed ahead, nothing to remove
    assert memory.count() == 3


def test_a_failure_in_the_second_step_drops_the_index_and_shows_what_chroma_holds(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = MemoryConfig(home=home)
    memory = Memory(config, embeddings=HashingEmbeddings())
    memory.remember("Was here before", user_id="ada", category="context")
    assert len(contents(memory, "ada")) == 1  # the index is loaded, as in a service
    upsert, calls = ChromaFactStore.upsert, []

    def second_fails_after_writing(self: ChromaFactStore, facts: Any, vectors: np.ndarray) -> None:
        calls.append(len(facts))
        upsert(self, facts, vectors)  # the step reaches Chroma...
        if len(calls) == 2:
            raise StoreError("could not write facts to Chroma: injected failure")  # ...then not

    monkeypatch.setattr(ChromaFactStore, "upsert", second_fails_after_writing)
    with pytest.raises(StoreError, match="injected failure"):
        memory.remember_many(items(FACTS), user_id="ada")
    monkeypatch.undo()
    assert calls == [50, 50]  # the third step was never written
    shown = contents(memory, "ada")
    # Had the index been kept, it would lack step 2, which Chroma holds: it was reloaded.
    assert shown == {"Was here before"} | {i["content"] for i in items(100)}
    memory.close()
    with Memory(config, embeddings=HashingEmbeddings()) as reopened:
        assert contents(reopened, "ada") == shown  # the process showed exactly the store
        reopened.remember_many(items(FACTS), user_id="ada")  # the retry completes it
        assert len(contents(reopened, "ada")) == FACTS + 1
