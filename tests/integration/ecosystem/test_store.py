"""RecallmemStore keeps the BaseStore contract on real Chroma, one user per namespace."""

from __future__ import annotations

import asyncio

import pytest
from langgraph.store.base import GetOp, InvalidNamespaceError, PutOp, SearchOp
from recallmem.errors import InvalidInputError
from recallmem.integrations.langgraph import RecallmemStore
from recallmem.memory import Memory
from recallmem.types import Category, Status

ADA = ("memories", "ada")
BOB = ("memories", "bob")


@pytest.fixture
def store(memory: Memory) -> RecallmemStore:
    return RecallmemStore(memory)


def test_put_get_keeps_the_value_whole_and_embeds_its_text(
    store: RecallmemStore, memory: Memory
) -> None:
    value = {"content": "Prefers dark mode in every editor", "tags": ["ui"], "n": {"x": 1}}
    store.put(ADA, "k1", value)
    item = store.get(ADA, "k1")
    assert item is not None and (item.key, item.namespace, item.value) == ("k1", ADA, value)
    (fact,) = memory.list(user_id="ada")
    assert fact.content == "Prefers dark mode in every editor"
    assert fact.category is Category.CONTEXT and fact.item is not None
    assert store.get(ADA, "missing") is None


def test_text_comes_from_index_content_text_or_the_json(
    store: RecallmemStore, memory: Memory
) -> None:
    store.put(ADA, "a", {"text": "Owns a bicycle"})
    store.put(ADA, "b", {"title": "Stack", "body": "Rust"})
    store.put(ADA, "c", {"meta": {"title": "Lives in Lyon"}, "junk": 1}, index=["meta.title"])
    store.put(ADA, "d", {"content": {"topic": "chess", "level": "club"}})
    contents = {f.item.key: f.content for f in memory.list(user_id="ada") if f.item}
    assert contents == {
        "a": "Owns a bicycle",
        "b": '{"body": "Rust", "title": "Stack"}',
        "c": "Lives in Lyon",
        "d": '{"level": "club", "topic": "chess"}',
    }


def test_a_valid_category_in_the_value_is_used(store: RecallmemStore, memory: Memory) -> None:
    store.put(ADA, "k", {"content": "Wants to learn Go", "category": "goal"})
    store.put(ADA, "j", {"content": "Reads sci-fi", "category": "hobby"})
    by_key = {f.item.key: f.category for f in memory.list(user_id="ada") if f.item}
    assert by_key == {"k": Category.GOAL, "j": Category.CONTEXT}


def test_put_of_a_known_key_updates_the_fact_and_keeps_history(
    store: RecallmemStore, memory: Memory
) -> None:
    store.put(ADA, "k1", {"content": "Uses Vim"})
    store.put(ADA, "k1", {"content": "Uses Neovim with Lua config", "v": 2})
    (fact,) = memory.list(user_id="ada")
    assert fact.content == "Uses Neovim with Lua config" and fact.history[0].content == "Uses Vim"
    item = store.get(ADA, "k1")
    assert item is not None and item.value == {"content": "Uses Neovim with Lua config", "v": 2}


def test_none_value_deletes_softly(store: RecallmemStore, memory: Memory) -> None:
    store.put(ADA, "k1", {"content": "Uses Vim"})
    store.delete(ADA, "k1")
    assert store.get(ADA, "k1") is None
    assert store.search(ADA) == []
    (fact,) = memory.list(user_id="ada", status=None)
    assert fact.status is Status.DELETED
    store.delete(ADA, "never-there")  # deleting nothing is not an error


def test_a_duplicate_put_confirms_the_fact_and_answers_to_both_keys(
    store: RecallmemStore, memory: Memory
) -> None:
    store.put(ADA, "k1", {"content": "Prefers reports in Chinese"})
    store.put(ADA, "k2", {"content": "prefers reports in chinese"})
    (fact,) = memory.list(user_id="ada")
    assert fact.confirmations == 1
    first, second = store.get(ADA, "k1"), store.get(ADA, "k2")
    assert first is not None and second is not None and second.key == "k2"
    assert first.value == second.value == {"content": "Prefers reports in Chinese"}
    store.delete(ADA, "k1")
    assert store.get(ADA, "k1") is None and store.get(ADA, "k2") is not None
    assert len(memory.list(user_id="ada")) == 1
    store.delete(ADA, "k2")
    assert memory.list(user_id="ada") == []


def test_updating_a_confirming_key_to_new_text_splits_it_off(
    store: RecallmemStore, memory: Memory
) -> None:
    store.put(ADA, "k1", {"content": "Prefers reports in Chinese"})
    store.put(ADA, "k2", {"content": "Prefers reports in Chinese"})
    store.put(ADA, "k2", {"content": "Drinks green tea every morning"})
    first, second = store.get(ADA, "k1"), store.get(ADA, "k2")
    assert first is not None and first.value["content"] == "Prefers reports in Chinese"
    assert second is not None and second.value["content"] == "Drinks green tea every morning"
    assert len(memory.list(user_id="ada")) == 2


def test_search_is_recall_with_scores_filter_and_paging(store: RecallmemStore) -> None:
    store.put(ADA, "tea", {"content": "Drinks green tea every morning", "kind": "habit", "n": 1})
    store.put(ADA, "car", {"content": "Owns an electric car", "kind": "thing", "n": 2})
    store.put(ADA, "ts", {"content": "Writes TypeScript at work", "kind": "habit", "n": 3})
    hits = store.search(ADA, query="green tea in the morning")
    assert hits[0].key == "tea" and hits[0].score is not None
    assert [h.score for h in hits] == sorted((h.score or 0 for h in hits), reverse=True)
    habits = store.search(ADA, query="tea", filter={"kind": "habit"})
    assert {h.key for h in habits} == {"tea", "ts"}
    assert [h.key for h in store.search(ADA, filter={"n": {"$gte": 2}})] == ["ts", "car"]
    assert len(store.search(ADA, query="tea", limit=1)) == 1
    everything = [h.key for h in store.search(ADA, query="tea")]
    assert [h.key for h in store.search(ADA, query="tea", offset=1)] == everything[1:]
    with pytest.raises(InvalidInputError, match="unknown filter operator"):
        store.search(ADA, filter={"n": {"$near": 2}})


def test_facts_written_otherwise_are_items_in_the_root_namespace(
    store: RecallmemStore, memory: Memory
) -> None:
    fact = memory.remember("Works as a front-end engineer", user_id="ada", category="identity")
    (hit,) = store.search(ADA, query="what is their job")
    assert (hit.namespace, hit.key) == (ADA, fact.id)
    assert hit.value == {"content": "Works as a front-end engineer", "category": "identity"}
    store.put(ADA, fact.id, {"content": "Works as a senior front-end engineer"})
    assert memory.get(fact.id).content == "Works as a senior front-end engineer"


def test_sub_namespaces_and_list_namespaces(store: RecallmemStore) -> None:
    store.put((*ADA, "work"), "a", {"content": "Deploys on Kubernetes"})
    store.put((*ADA, "home"), "b", {"content": "Has a cat named Max"})
    store.put(ADA, "c", {"content": "Lives in Lyon"})
    assert [h.key for h in store.search((*ADA, "work"))] == ["a"]
    assert {h.key for h in store.search(ADA)} == {"a", "b", "c"}
    assert store.get(ADA, "a") is None and store.get((*ADA, "work"), "a") is not None
    assert store.list_namespaces(prefix=ADA) == [ADA, (*ADA, "home"), (*ADA, "work")]
    assert store.list_namespaces(prefix=ADA, suffix=("work",)) == [(*ADA, "work")]
    assert store.list_namespaces(prefix=ADA, max_depth=2) == [ADA]


def test_one_namespace_never_sees_another_users_items(
    store: RecallmemStore, memory: Memory
) -> None:
    store.put(ADA, "secret-plan", {"content": "Plans to move to Lisbon"})
    memory.remember("Plans to move to Lisbon next year", user_id="ada", category="goal")
    assert store.get(BOB, "secret-plan") is None
    assert store.search(BOB, query="move to Lisbon") == []
    assert store.search(BOB) == []
    assert store.list_namespaces(prefix=BOB) == []
    store.delete(BOB, "secret-plan")  # bob cannot delete ada's item by its key
    assert store.get(ADA, "secret-plan") is not None
    for wide in [("memories",), ("memories", "*")]:
        with pytest.raises(InvalidNamespaceError, match="names no single user"):
            store.search(wide, query="Lisbon")
    with pytest.raises(InvalidNamespaceError, match="prefix naming one user"):
        store.list_namespaces()
    with pytest.raises(InvalidNamespaceError, match="does not fit"):
        store.put(("notes", "ada"), "k", {"content": "x"})


def test_an_agent_template_scopes_items_to_the_agent(memory: Memory) -> None:
    store = RecallmemStore(memory, namespace=("memories", "{user_id}", "{agent_id}"))
    store.put(("memories", "ada", "writer"), "k", {"content": "Prefers short sentences"})
    (fact,) = memory.list(user_id="ada")
    assert fact.agent_id == "writer"
    assert store.search(("memories", "ada", "coder"), query="short sentences") == []
    assert len(store.search(("memories", "ada", "writer"), query="short sentences")) == 1
    with pytest.raises(ValueError, match="exactly once"):
        RecallmemStore(memory, namespace=("memories",))


def test_bad_values_are_refused_and_nothing_is_stored(
    store: RecallmemStore, memory: Memory
) -> None:
    with pytest.raises(InvalidInputError, match="must be JSON"):
        store.put(ADA, "k", {"content": "x", "when": object()})
    with pytest.raises(InvalidInputError, match=r"2500 characters.*at most 2000.*index="):
        store.put(ADA, "k", {"content": "word " * 500})
    with pytest.raises(InvalidNamespaceError, match="periods"):
        store.put(("memories", "a.b"), "k", {"content": "x"})
    assert memory.list(user_id="ada") == []


def _nested(levels: int) -> dict[str, object]:
    deep: dict[str, object] = {}
    node = deep
    for _ in range(levels):
        node["a"] = node = {}
    return deep


@pytest.mark.parametrize(
    ("value", "why"),
    [
        ({"content": "Scores NaN on the test", "score": float("nan")}, r"\['score'\] is nan"),
        ({"content": "Runs forever", "limits": [1, float("inf")]}, r"\['limits'\]\[1\] is inf"),
        ({"content": "Runs backwards", "limit": float("-inf")}, "no NaN or Infinity"),
        ({"content": "Deep value", "x": _nested(10_000)}, "more than 64 levels deep"),
    ],
)
def test_values_json_cannot_hold_are_refused_and_nothing_is_stored(
    store: RecallmemStore, memory: Memory, value: dict[str, object], why: str
) -> None:
    # NaN and Infinity are no JSON (an export turned Infinity into null), and Python's json
    # raised RecursionError on a value 10,000 deep.
    with pytest.raises(InvalidInputError, match=why) as caught:
        store.put(ADA, "k", value)
    assert "nothing was stored" in str(caught.value)
    assert memory.list(user_id="ada") == [] and store.get(ADA, "k") is None


def test_the_depth_limit_refuses_one_level_past_it_and_keeps_a_value_at_it_whole(
    store: RecallmemStore,
) -> None:
    with pytest.raises(InvalidInputError, match="more than 64 levels deep"):
        store.put(ADA, "k", {"content": "One level too deep", "x": _nested(64)})
    value = {"content": "Deep but allowed", "x": _nested(63), "n": 1e308}
    store.put(ADA, "k", value)
    item = store.get(ADA, "k")
    assert item is not None and item.value == value


def test_batch_and_abatch_answer_in_order(store: RecallmemStore) -> None:
    ops = [
        PutOp(ADA, "k", {"content": "Drinks green tea"}),
        GetOp(ADA, "k"),
        SearchOp(ADA, query="tea"),
        GetOp(ADA, "nope"),
    ]
    put, got, found, missing = store.batch(ops)
    assert put is None and got is not None and got.key == "k"
    assert [i.key for i in found] == ["k"] and missing is None  # type: ignore[union-attr]
    result = asyncio.run(store.abatch([GetOp(ADA, "k")]))
    assert result[0] is not None and result[0].value == {"content": "Drinks green tea"}  # type: ignore[union-attr]


def test_a_richer_duplicate_takes_over_the_text_and_the_item(
    store: RecallmemStore, memory: Memory
) -> None:
    store.put(ADA, "k1", {"content": "Prefers reports in Chinese"})
    store.put(ADA, "k2", {"content": "Prefers reports in Chinese with a summary"})
    (fact,) = memory.list(user_id="ada")
    assert fact.content == "Prefers reports in Chinese with a summary"
    assert fact.item is not None and fact.item.key == "k2"
    assert fact.item.aliases == ((ADA, "k1"),)
