"""The store contract, run against the embedded store and against a Chroma server.

The server runs are marked ``chroma_server`` and need ``RECALLMEM_TEST_CHROMA_URL``
(scripts/test.sh starts ``chroma run`` on loopback and sets it). Each test uses its own
collection prefix, so runs on one server never see each other. Two services on one
server (or two Memory objects on one embedded store) see each other's writes: a Memory
reloads a user when the user's revision token in Chroma changed.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import textwrap
import time
import uuid
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import httpx
import pytest
from recallmem.config import MemoryConfig
from recallmem.memory import Memory
from recallmem.testing import HashingEmbeddings
from recallmem.types import Category, Fact, Profile, ProfileSection, Revision, Source, Status

CHROMA_URL = os.environ.get("RECALLMEM_TEST_CHROMA_URL")
needs_server = pytest.mark.skipif(
    not CHROMA_URL, reason="set RECALLMEM_TEST_CHROMA_URL (scripts/test.sh starts a server)"
)
STORES = [
    pytest.param("embedded", id="embedded"),
    pytest.param("server", id="chroma-server", marks=[pytest.mark.chroma_server, needs_server]),
]

Opener = Callable[[], Memory]


@pytest.fixture(params=STORES)
def open_memory(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Opener]:
    """Opens Memory objects on one store (one per simulated service process)."""
    prefix = f"contract_{uuid.uuid4().hex[:12]}"
    url = CHROMA_URL if request.param == "server" else None
    opened: list[Memory] = []

    def open_one() -> Memory:
        config = MemoryConfig(home=tmp_path / "home", chroma_url=url, collection=prefix)
        memory = Memory(config, embeddings=HashingEmbeddings())
        opened.append(memory)
        return memory

    yield open_one
    for memory in opened:
        memory.close()
    if url is not None:
        close_chroma_http_sessions()


def close_chroma_http_sessions() -> None:
    """Close the HTTP sessions of Chroma's server clients.

    chromadb 1.5's ``HttpClient`` never closes its httpx session, not even in
    ``close()``; left to the garbage collector it is a ResourceWarning, which this
    suite treats as an error. (Memory does not expose its Chroma client either.)
    """
    from chromadb.api.fastapi import FastAPI as ChromaHttpApi
    from chromadb.api.shared_system_client import SharedSystemClient

    for system in list(SharedSystemClient._identifier_to_system.values()):
        for component in system.components():
            if isinstance(component, ChromaHttpApi):
                component._session.close()
    SharedSystemClient.clear_system_cache()


@pytest.fixture
def store(open_memory: Opener) -> Memory:
    return open_memory()


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


def free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


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
