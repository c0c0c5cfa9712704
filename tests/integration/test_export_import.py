"""The versioned export round-trips every field; a bad import writes nothing."""

from __future__ import annotations

import json

import pytest
from recallmem import Memory, MemoryConfig, Profile
from recallmem.errors import ImportRejectedError, InvalidInputError
from recallmem.testing import HashingEmbeddings
from recallmem.types import ProfileSection, Source, utcnow


def _seed(memory: Memory) -> None:
    memory.remember("Prefers reports in Chinese", user_id="ada", category="preference",
                    source=Source(thread_id="t1", message_ids=("m1",), quote="报告用中文"))  # fmt: skip
    fact = memory.remember("Edits the tech desk", user_id="ada", category="identity", agent_id="w")
    memory.update(fact.id, content="Edits the product desk", reason="job change")
    memory.remember("Likes tea", user_id="ada", category="preference")
    memory.remember("Owns a small bakery", user_id="ada", category="context", pinned=True)
    gone = memory.remember("Old todo", user_id="ada", category="todo")
    memory.forget(gone.id)
    memory.set_profile(
        Profile(user_id="ada", work_context=ProfileSection(summary="Editor", updated_at=utcnow()))
    )


def test_round_trip_keeps_every_field(memory: Memory, tmp_path) -> None:  # type: ignore[no-untyped-def]
    _seed(memory)
    exported = memory.export(user_id="ada")
    text = json.dumps(exported)
    other = Memory(MemoryConfig(home=tmp_path / "other"), embeddings=HashingEmbeddings())
    report = other.import_(json.loads(text))
    assert (
        report.imported == len(exported["facts"]) == 5
        and report.profiles == 1
        and report.users == ["ada"]
    )
    again = other.export(user_id="ada")
    assert again["facts"] == exported["facts"]
    assert again["profiles"] == exported["profiles"]
    assert (
        other.recall("product desk", user_id="ada", agent_id="w")[0].fact.history[0].content
        == "Edits the tech desk"
    )


def test_corrupt_rows_are_named_and_nothing_is_written(memory: Memory) -> None:
    memory.remember("Existing fact", user_id="ada", category="context")
    before = memory.export(user_id="ada")["facts"]
    good = {"content": "New fact", "category": "context", "user_id": "ada"}
    data = {"format": "recallmem.export", "version": 1, "facts": [
        good,
        {"content": "", "category": "context", "user_id": "ada"},
        {"content": "x", "category": "hobby", "user_id": "ada"},
        {"content": "x", "category": "context", "user_id": "ada", "confidence": 7},
    ], "profiles": []}  # fmt: skip
    with pytest.raises(ImportRejectedError) as caught:
        memory.import_(data)
    assert [row for row, _ in caught.value.rejected] == [1, 2, 3]
    assert "row 2" in str(caught.value) and "category" in str(caught.value)
    assert memory.export(user_id="ada")["facts"] == before


@pytest.mark.parametrize(
    "payload",
    [None, [], "text", {"format": "other"}, {"format": "recallmem.export", "version": 99, "facts": []},
     {"format": "recallmem.export", "version": 1, "facts": "nope"}],
)  # fmt: skip
def test_garbage_payloads_are_rejected(memory: Memory, payload: object) -> None:
    with pytest.raises(ImportRejectedError):
        memory.import_(payload)


def test_an_import_keeps_the_limits_every_other_write_keeps(memory: Memory) -> None:
    base = {"category": "context", "user_id": "ada"}
    data = {"format": "recallmem.export", "version": 1, "facts": [
        {**base, "content": "Fine"},
        {**base, "content": "A fact no path can name", "id": "../../x"},
        {**base, "content": "An invisible id", "id": "f\u200b1"},
        {**base, "content": "A huge agent", "agent_id": "a" * 5000},
    ], "profiles": [
        {"user_id": "ada", "work_context": {"summary": "s" * 10_000}},
    ]}  # fmt: skip
    with pytest.raises(ImportRejectedError) as caught:
        memory.import_(data)
    reasons = dict(caught.value.rejected[:3])
    assert sorted(reasons) == [1, 2, 3] and "API's paths" in reasons[1] + reasons[2]
    assert "agent_id" in reasons[3]
    assert "work_context" in caught.value.rejected[3][1]
    assert memory.export(user_id="ada")["facts"] == []  # nothing was written
    with pytest.raises(InvalidInputError, match="work_context"):  # the library's own rule
        memory.set_profile(Profile(user_id="ada", work_context=ProfileSection(summary="s" * 4001)))
