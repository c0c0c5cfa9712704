"""The store contract, run on every backend: the in-memory store, embedded Chroma and a
Chroma server (stores.py says how the server is found).

Two layers: the backend seam itself (:class:`~recallmem.store.fact_store.FactStore`, what
FactRepository relies on), and Memory on top of it. Cases about several processes on one
store (Memory objects that see each other's writes, two service processes) are Chroma's:
an in-memory store belongs to one Memory.
"""

from __future__ import annotations

import contextlib
import subprocess
import sys
import textwrap
import time
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import httpx
import numpy as np
import pytest
from recallmem.errors import EmbeddingMismatchError, StoreError
from recallmem.memory import Memory
from recallmem.store.chroma.opening import open_store
from recallmem.store.fact_store import FactStore
from recallmem.store.in_memory import InMemoryFactStore
from recallmem.types import Category, Fact, Profile, ProfileSection, Revision, Source, Status

from tests.conformance.stores import (
    ALL_STORES,
    CHROMA_STORES,
    CHROMA_URL,
    Opener,
    close_chroma_http_sessions,
    config_for,
    free_port,
    needs_server,
    open_memory,
)

__all__ = ["open_memory"]  # the fixture, used by the tests below


@pytest.fixture(params=ALL_STORES)
def store_kind(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def store(open_memory: Opener) -> Memory:
    return open_memory()


@pytest.fixture
def backend(store_kind: str, tmp_path: Path) -> Iterator[FactStore]:
    """The backend itself, as FactRepository sees it."""
    if store_kind == "memory":
        yield InMemoryFactStore("hashing")
        return
    config = config_for(store_kind, tmp_path / "home", f"seam_{uuid.uuid4().hex[:12]}")
    opened = open_store(config, "hashing", None)
    yield opened
    opened.close()
    if store_kind == "server":
        close_chroma_http_sessions()


def full_fact(**changes: object) -> Fact:
    when = datetime(2025, 3, 1, 8, 30, tzinfo=UTC)
    fact = Fact(
        id=uuid.uuid4().hex, content="改用 Vue 3 写前端报告", category=Category.DECISION,
        confidence=0.82, user_id="ada", agent_id="writer", thread_id="t-7",
        sources=(Source(thread_id="t-7", message_ids=("m1", "m2"), quote="以后都用 Vue 3",
                        at=when, extractor="gpt-x", prompt_version="extract@4"),),
        source_error="用 React 写", status=Status.ACTIVE, supersedes="old-id", pinned=True,
        confirmations=2,
        history=(Revision(content="用 Vue 2", category=Category.DECISION, at=when, reason="edit"),),
        created_at=when, updated_at=when + timedelta(days=1),
        last_confirmed_at=when + timedelta(days=2),
    )  # fmt: skip
    return fact.model_copy(update=changes)


# the seam ------------------------------------------------------------------------------


def fact(user_id: str = "ada", **changes: object) -> Fact:
    made = Fact(content=f"fact {uuid.uuid4().hex[:6]}", category="identity", user_id=user_id)
    return made.model_copy(update=changes)


def unit_rows(n: int, dimension: int = 4) -> np.ndarray:
    rows = np.random.default_rng(n).normal(size=(n, dimension)).astype(np.float32)
    return rows / np.linalg.norm(rows, axis=1, keepdims=True)


def test_the_seam_round_trips_records_and_vectors_per_user(backend: FactStore) -> None:
    ada, bob = [full_fact(), full_fact(pinned=False)], [fact("bob")]
    vectors = unit_rows(3)
    backend.upsert([*ada, *bob], vectors)
    facts, loaded = backend.load_user("ada")
    rows = {f.id: row for f, row in zip(facts, loaded, strict=True)}
    assert sorted(f.id for f in facts) == sorted(f.id for f in ada)
    assert [f for f in facts if f.id == ada[0].id] == [ada[0]]  # every field
    assert np.allclose(rows[ada[1].id], vectors[1], atol=1e-6)
    assert backend.get([ada[0].id, bob[0].id], user_id="bob") == bob  # the user's only
    assert {f.id for f in backend.get([ada[0].id, bob[0].id])} == {ada[0].id, bob[0].id}
    assert backend.users() == ["ada", "bob"] and backend.count() == 3
    assert backend.ids_with_prefix(bob[0].id[:10]) == [bob[0].id]
    assert backend.load_user("carol")[0] == [] and backend.dimension == 4


def test_the_seam_refuses_vectors_of_another_size(backend: FactStore) -> None:
    backend.upsert([fact()], unit_rows(1, dimension=4))
    with pytest.raises(EmbeddingMismatchError):
        backend.check_dimension(5)
    backend.check_dimension(4)


def test_records_rewritten_and_times_touched_keep_their_vectors(backend: FactStore) -> None:
    first = fact()
    vectors = unit_rows(1)
    backend.upsert([first], vectors)
    backend.update_records([first.model_copy(update={"pinned": True})])
    at = datetime(2025, 5, 1, 12, 0, tzinfo=UTC)
    backend.touch([(first.id, at.timestamp())], user_id="ada")
    (stored,), loaded = backend.load_user("ada")
    assert stored.pinned and stored.last_accessed_at == at and stored.content == first.content
    assert np.allclose(loaded[0], vectors[0], atol=1e-6)


def test_deletes_touch_only_the_named_users_facts(backend: FactStore) -> None:
    mine, theirs = fact(), fact("bob")
    backend.upsert([mine, theirs], unit_rows(2))
    backend.delete([mine.id, theirs.id], user_id="ada")
    assert backend.get([mine.id, theirs.id]) == [theirs]
    backend.save_profile(Profile(user_id="bob", recent=ProfileSection(summary="Sailing")))
    backend.save_profile(Profile(user_id="bob", agent_id="coach"))
    backend.drop_facts("bob")
    assert backend.load_user("bob")[0] == [] and backend.load_profile("bob", None) is not None
    backend.upsert([theirs], unit_rows(1))
    assert backend.drop_user("bob") == 1
    assert backend.load_profile("bob", None) is None
    assert backend.load_profile("bob", "coach") is None
    assert backend.users() == [] and backend.count() == 0


def test_profiles_are_kept_per_user_and_agent(backend: FactStore) -> None:
    shared = Profile(user_id="ada", work_context=ProfileSection(summary="Front-end team"))
    coach = Profile(user_id="ada", agent_id="coach", background=ProfileSection(summary="Runs"))
    backend.save_profile(shared)
    backend.save_profile(coach)
    assert backend.load_profile("ada", None) == shared
    assert backend.load_profile("ada", "coach") == coach
    assert backend.load_profile("bob", None) is None


def test_write_sequences_give_each_number_once(backend: FactStore) -> None:
    assert backend.latest_revision("ada") == 0 and backend.is_current("ada", 0)
    assert backend.record_write("ada", 0) == 1
    # A writer whose index still reflects 0: it gets number 2, but its index does not
    # reflect 1, so it keeps 0 and reloads at its next read.
    assert backend.record_write("ada", 0) == 0
    assert backend.latest_revision("ada") == 2
    assert not backend.is_current("ada", 1) and backend.is_current("ada", 2)
    backend.record_writes(["ada", "bob", "ada"])
    assert backend.latest_revision("ada") == 3 and backend.latest_revision("bob") == 1
    assert backend.compact("ada") >= 0 and backend.latest_revision("ada") == 3


def test_a_salvage_reads_back_every_record(backend: FactStore, store_kind: str) -> None:
    stored = [fact(), fact()]
    backend.upsert(stored, unit_rows(2))
    if store_kind == "server":  # its files are the server's
        with pytest.raises(StoreError, match="restore that collection"):
            backend.salvage("ada")
        return
    assert sorted(f.id for f in backend.salvage("ada")) == sorted(f.id for f in stored)


def test_a_backend_reports_its_kind_and_hold(backend: FactStore, store_kind: str) -> None:
    backend.probe()
    kinds = {"memory": "memory", "embedded": "chroma-embedded", "server": "chroma-server"}
    assert backend.kind == kinds[store_kind]
    hold = backend.hold()
    assert hold.held and hold.mode == ("home-lock" if store_kind == "embedded" else "none")


# Memory on the backend -----------------------------------------------------------------


def test_a_fact_round_trips_every_field(store: Memory) -> None:
    fact = full_fact()
    store.put([fact])
    assert store.get(fact.id, user_id="ada") == fact
    assert store.list(user_id="ada", agent_id="writer") == [fact]


def test_recall_reads_only_the_users_own_facts(store: Memory) -> None:
    store.remember("Likes green tea in the morning", user_id="ada", category="preference")
    store.remember("Likes green tea in the evening", user_id="bob", category="preference")
    hits = store.recall("green tea", user_id="ada", k=10)
    assert [h.fact.user_id for h in hits] == ["ada"]
    with pytest.raises(KeyError):
        store.get(hits[0].fact.id, user_id="bob")


def test_edits_are_re_embedded_and_history_kept(store: Memory) -> None:
    fact = store.remember("Drives a red bicycle", user_id="ada", category="identity")
    store.update(fact.id, user_id="ada", content="Drives a blue scooter")
    assert [h.fact.id for h in store.recall("scooter", user_id="ada")] == [fact.id]
    assert store.get(fact.id).history[0].content == "Drives a red bicycle"


def test_soft_forget_and_purge(store: Memory) -> None:
    keep = store.remember("Plays chess on Sundays", user_id="ada", category="behavior")
    gone = store.remember("Owns a sailing boat", user_id="ada", category="identity")
    assert store.forget(gone.id, user_id="ada") == 1
    assert store.get(gone.id).status is Status.DELETED
    assert store.recall("sailing boat", user_id="ada") == [] or all(
        h.fact.id != gone.id for h in store.recall("sailing boat", user_id="ada")
    )
    assert store.forget(gone.id, user_id="ada", purge=True) == 1
    with pytest.raises(KeyError):
        store.get(gone.id)
    assert [f.id for f in store.list(user_id="ada", status=None)] == [keep.id]


def test_profiles_and_forget_me(store: Memory) -> None:
    profile = Profile(user_id="ada", work_context=ProfileSection(summary="Front-end team"))
    store.set_profile(profile)
    store.set_profile(Profile(user_id="bob", background=ProfileSection(summary="Detective")))
    assert store.get_profile(user_id="ada") == profile
    store.remember("Writes TypeScript", user_id="ada", category="knowledge")
    store.forget(user_id="ada", purge=True)
    assert store.list(user_id="ada", status=None) == []
    assert store.get_profile(user_id="ada").work_context.summary == ""
    assert store.get_profile(user_id="bob").background.summary == "Detective"


def test_export_import_round_trip(open_memory: Opener, tmp_path: Path) -> None:
    source = open_memory()
    source.put([full_fact(), full_fact(status=Status.SUPERSEDED, pinned=False)])
    source.set_profile(Profile(user_id="ada", recent=ProfileSection(summary="Shipped v2")))
    document = source.export(user_id="ada")
    source.forget(user_id="ada", purge=True)
    report = source.import_(document)
    assert report.imported == 2 and report.profiles == 1
    again = source.export(user_id="ada")
    assert again["facts"] == document["facts"] and again["profiles"] == document["profiles"]


def test_every_write_changes_the_revision_token(store: Memory) -> None:
    seen = {store.revision("ada")}
    fact = store.remember("Has a cat named Mochi", user_id="ada", category="identity")
    seen.add(store.revision("ada"))
    store.update(fact.id, user_id="ada", pinned=True)
    seen.add(store.revision("ada"))
    store.forget(fact.id, user_id="ada")
    seen.add(store.revision("ada"))
    assert len(seen) == 4 and None in seen


@pytest.mark.parametrize("store_kind", CHROMA_STORES)
def test_two_memories_on_one_store_see_each_others_writes(open_memory: Opener) -> None:
    first, second = open_memory(), open_memory()
    assert second.recall("anything at all", user_id="ada") == []  # warm second's index
    fact = first.remember("Moved to Hangzhou in May", user_id="ada", category="context")
    assert [h.fact.id for h in second.recall("Hangzhou", user_id="ada")] == [fact.id]
    second.update(fact.id, user_id="ada", content="Moved to Suzhou in May")
    assert [h.fact.content for h in first.recall("Suzhou", user_id="ada")] == [
        "Moved to Suzhou in May"
    ]
    second.forget(fact.id, user_id="ada", purge=True)
    assert first.recall("Suzhou", user_id="ada") == []


SERVICE = textwrap.dedent(
    """
    import sys, uvicorn
    from recallmem import Memory, MemoryConfig
    from recallmem.server.app import create_app
    from recallmem.testing import HashingEmbeddings
    url, prefix, home, port = sys.argv[1:5]
    memory = Memory(MemoryConfig(home=home, chroma_url=url, collection=prefix),
                    embeddings=HashingEmbeddings())
    uvicorn.run(create_app(memory), host="127.0.0.1", port=int(port), log_level="warning")
    """
)


def stop_all(services: list[subprocess.Popen[bytes]]) -> None:
    for service in services:
        service.terminate()
        service.wait(timeout=20)


@pytest.mark.chroma_server
@needs_server
def test_two_service_processes_on_one_chroma_server(tmp_path: Path) -> None:
    prefix = f"svc_{uuid.uuid4().hex[:12]}"
    services, urls = [], []
    with contextlib.ExitStack() as stack:
        stack.callback(stop_all, services)
        for n in range(2):
            port = free_port()
            args = [CHROMA_URL, prefix, str(tmp_path / f"home{n}"), str(port)]
            services.append(subprocess.Popen([sys.executable, "-c", SERVICE, *args]))
            urls.append(f"http://127.0.0.1:{port}")
        clients = [stack.enter_context(httpx.Client(base_url=url, timeout=10)) for url in urls]
        for client, service in zip(clients, services, strict=True):
            deadline = time.monotonic() + 60
            while True:
                assert service.poll() is None, "a service process died at start"
                try:
                    if client.get("/v1/health").json()["store"] == "chroma-server":
                        break
                except httpx.TransportError:
                    pass
                assert time.monotonic() < deadline, "a service did not start"
                time.sleep(0.2)
        a, b = clients
        b.post("/v1/users/ada/search", json={"query": "warm the index"})
        fact = a.post(
            "/v1/users/ada/facts",
            json={"content": "Keeps bees on the roof", "category": "identity"},
        ).json()
        hits = b.post("/v1/users/ada/search", json={"query": "bees roof"}).json()["hits"]
        assert [h["fact"]["id"] for h in hits] == [fact["id"]]
        b.patch(f"/v1/users/ada/facts/{fact['id']}", json={"content": "Keeps goats on the roof"})
        assert a.get(f"/v1/users/ada/facts/{fact['id']}").json()["fact"]["content"] == (
            "Keeps goats on the roof"
        )
        b.delete(f"/v1/users/ada/facts/{fact['id']}", params={"purge": True})
        assert a.post("/v1/users/ada/search", json={"query": "goats"}).json()["hits"] == []
