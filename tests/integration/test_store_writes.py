"""How facts reach Chroma: each user's collection and its vector index settings, and the
id directory."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import chromadb
import numpy as np
import pytest
from recallmem import Fact, Memory, MemoryConfig
from recallmem.errors import InvalidInputError
from recallmem.store.chroma.adapter import ChromaFactStore
from recallmem.store.chroma.client import chroma_settings
from recallmem.store.chroma.layout import USER_HNSW, user_collection
from recallmem.testing import HashingEmbeddings


def _client(config: MemoryConfig) -> Any:
    return chromadb.PersistentClient(path=str(config.chroma_path), settings=chroma_settings())


def test_a_users_facts_are_a_collection_of_their_own_with_a_cheap_vector_index(
    memory: Memory,
) -> None:
    ada = memory.remember("Likes green tea", user_id="ada", category="preference")
    bob = memory.remember("Likes coffee", user_id="bob", category="preference")
    client = _client(memory.config)
    prefix = memory.config.collection
    collection = client.get_collection(user_collection(prefix, "ada"))
    assert collection.get(include=[])["ids"] == [ada.id]
    hnsw = collection.configuration_json["hnsw"]
    assert (hnsw["ef_construction"], hnsw["max_neighbors"], hnsw["space"]) == (
        USER_HNSW["ef_construction"], USER_HNSW["max_neighbors"], "cosine"
    )  # fmt: skip
    assert hnsw["sync_threshold"] == USER_HNSW["sync_threshold"]  # no replay at cold open
    directory = client.get_collection(f"{prefix}_ids").get(include=["metadatas"])
    assert dict(zip(directory["ids"], [m["user_id"] for m in directory["metadatas"]],
                    strict=True)) == {ada.id: "ada", bob.id: "bob"}  # fmt: skip
    assert memory.repository.store.count() == 2


def test_a_user_who_never_wrote_gets_no_collection_from_a_read(memory: Memory) -> None:
    assert memory.recall("tea", user_id="carol") == []
    assert memory.list(user_id="carol") == []
    names = {c.name for c in _client(memory.config).list_collections()}
    assert user_collection(memory.config.collection, "carol") not in names


def _counting(monkeypatch: pytest.MonkeyPatch, target: Any, *methods: str) -> list[str]:
    """Record each call of ``target``'s ``methods``; the real methods still run."""
    calls: list[str] = []
    for method in methods:
        real = getattr(target, method)

        def counted(*args: Any, _real: Any = real, _name: str = method, **kwargs: Any) -> Any:
            calls.append(_name)
            return _real(*args, **kwargs)

        monkeypatch.setattr(target, method, counted)
    return calls


def test_a_cold_recall_reads_the_write_sequence_once(
    memory: Memory, monkeypatch: pytest.MonkeyPatch
) -> None:
    memory.remember("Likes green tea", user_id="ada", category="preference")
    reopened = Memory(memory.config, embeddings=HashingEmbeddings())
    reads = _counting(monkeypatch, reopened.repository.store.revisions, "latest", "is_current")
    assert len(reopened.recall("tea", user_id="ada")) == 1  # loads ada
    assert reads == ["latest"]
    reopened.recall("tea", user_id="ada")  # cached: one check that nothing came after
    assert reads == ["latest", "is_current"]


def test_a_write_that_lands_during_a_load_is_seen_by_the_next_recall(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    writer = Memory(MemoryConfig(home=home), embeddings=HashingEmbeddings())
    reader = Memory(MemoryConfig(home=home), embeddings=HashingEmbeddings())
    writer.remember("Likes green tea", user_id="ada", category="preference")
    real_load = reader.repository.store.load_user
    late: list[str] = []

    def load_then_race(user_id: str) -> Any:
        loaded = real_load(user_id)  # the revision was read before, the facts now
        late.append(writer.remember("Drinks tea at noon", user_id="ada", category="preference").id)
        return loaded

    monkeypatch.setattr(reader.repository.store, "load_user", load_then_race)
    assert len(reader.list(user_id="ada")) == 1  # the load missed the racing write
    monkeypatch.setattr(reader.repository.store, "load_user", real_load)
    assert late[0] in {f.id for f in reader.list(user_id="ada")}  # the token moved: reload


def test_a_user_larger_than_a_page_is_read_and_erased_in_pages(home: Path) -> None:
    # A store reading 10 records per Chroma call, as if SQLite's variable cap were tiny:
    # a first page, the remaining ids, then pages by id; deletes go in pages too.
    store = ChromaFactStore(chromadb.PersistentClient(path=str(home), settings=chroma_settings()), "paged",
                      "hashing-v1", read_page=10)  # fmt: skip
    facts = [Fact(content=f"Fact {n} zebra{n} okapi{n * 7}", category="context", user_id="ada")
             for n in range(27)] + [Fact(content="Someone else's", category="context", user_id="bob")]  # fmt: skip
    texts = [f.content for f in facts]
    vectors = np.asarray(HashingEmbeddings().embed_documents(texts), dtype=np.float32)
    store.upsert(facts, vectors)
    loaded, matrix = store.load_user("ada")
    assert sorted(f.id for f in loaded) == sorted(f.id for f in facts[:27])
    written = {f.id: vector for f, vector in zip(facts, vectors, strict=True)}
    assert all(np.allclose(row, written[f.id]) for f, row in zip(loaded, matrix, strict=True))
    ids = [f.id for f in facts]
    assert len(store.get(ids, user_id="ada")) == 27 and len(store.get(ids)) == 28
    store.delete(ids, user_id="ada")  # bob's id is in the list, but not his to erase
    assert store.count() == 1 and store.load_user("ada")[0] == []
    store.close()


def test_isolation_does_not_rest_on_the_collection_name(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Were two users' names ever to hash alike, every read still filters on user_id.
    from recallmem.store.chroma import layout

    monkeypatch.setattr(layout, "user_collection", lambda prefix, user_id: f"{prefix}_ushared")
    with Memory(MemoryConfig(home=home), embeddings=HashingEmbeddings()) as memory:
        ada = memory.remember("Likes green tea", user_id="ada", category="preference")
        memory.remember("Likes green tea a lot", user_id="bob", category="preference")
        assert [f.id for f in memory.list(user_id="ada")] == [ada.id]
        memory.repository._indexes.drop("ada")  # reload ada from Chroma
        assert [h.fact.id for h in memory.recall("green tea", user_id="ada", k=5)] == [ada.id]
        store = memory.repository.store
        assert [f.id for f in store.get([ada.id], user_id="bob")] == []
        assert ada.id not in [f.id for f in store.load_user("bob")[0]]


def test_a_put_cannot_take_over_another_users_fact_id(memory: Memory) -> None:
    ada = memory.remember("Keeps bees on the roof", user_id="ada", category="identity")
    bob = Fact(id=ada.id, content="Bob owns this id now", category="identity", user_id="bob")
    mine = Fact(content="Plays the cello", category="identity", user_id="bob")
    with pytest.raises(InvalidInputError, match="already belongs to another user"):
        memory.put([mine, bob])
    assert memory.get(ada.id).user_id == "ada"  # the id-only lookup still finds ada's fact
    assert memory.list(user_id="bob") == []  # nothing of the call was written
    memory.put([ada.model_copy(update={"content": "Keeps two hives on the roof"})])
    assert memory.get(ada.id, user_id="ada").content == "Keeps two hives on the roof"


@pytest.mark.parametrize("fact_id", ["../x", "a/b", "two words", "ada\u200b", "x" * 300])
def test_a_put_refuses_an_id_no_api_path_can_name(memory: Memory, fact_id: str) -> None:
    good = Fact(content="Plays the cello", category="identity", user_id="bob")
    bad = Fact(id=fact_id, content="Keeps bees on the roof", category="identity", user_id="bob")
    with pytest.raises(InvalidInputError, match=r"cannot name a fact.*nothing was written"):
        memory.put([good, bad])
    assert memory.list(user_id="bob") == []
    memory.put([good.model_copy(update={"id": "cello-1"})])  # a nameable id of one's own
    assert memory.get("cello-1", user_id="bob").content == "Plays the cello"


def test_write_sequence_records_keep_no_user_id_after_forget_me(memory: Memory) -> None:
    user = "zq-user-7781"
    memory.remember("Likes green tea", user_id=user, category="preference")
    memory.remember("Walks at noon", user_id=user, category="behavior")
    memory.forget(user_id=user, purge=True)
    scopes = _client(memory.config).get_collection(f"{memory.config.collection}_scopes")
    records = scopes.get(include=["metadatas"])
    assert len(records["ids"]) >= 2  # the sequence stays (a number is never reused)
    assert not any(user in record_id for record_id in records["ids"])
    assert not any(user in json.dumps(meta) for meta in records["metadatas"])


@pytest.mark.parametrize("bad", [float("nan"), float("inf"), [float("-inf")]])
def test_an_item_value_that_json_cannot_hold_is_refused(memory: Memory, bad: object) -> None:
    item = {"namespace": ["notes"], "key": "k", "value": {"content": "Limits", "x": bad}}
    with pytest.raises(InvalidInputError, match=r"JSON has no NaN or Infinity.*nothing was stored"):
        memory.remember_many([{"content": "Limits", "category": "context", "item": item}],
                             user_id="ada")  # fmt: skip
    assert memory.list(user_id="ada") == []
