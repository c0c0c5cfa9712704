"""Nothing of one user ever reaches another, whatever the query, filter or id."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from recallmem import Memory, MemoryConfig, MemoryToolkit
from recallmem.errors import FactNotFoundError, InvalidInputError
from recallmem.testing import HashingEmbeddings

BOB_SECRET = "Bob's bank PIN hint is purple-otter"


@pytest.fixture(scope="module")
def shared(tmp_path_factory: pytest.TempPathFactory) -> tuple[Memory, str]:
    home: Path = tmp_path_factory.mktemp("iso")
    memory = Memory(MemoryConfig(home=home), embeddings=HashingEmbeddings())
    memory.remember("Alice likes purple otters", user_id="alice", category="preference")
    bob = memory.remember(BOB_SECRET, user_id="bob", category="context")
    memory.remember("Bob agent note purple-otter", user_id="bob", category="context", agent_id="x")
    return memory, bob.id


crafted = st.one_of(
    st.text(max_size=40),
    st.sampled_from(["bob", "bob ", "BOB", "alice\x00bob", '"bob"', "{'$ne': 'alice'}", "*", "%",
                     "alice' OR '1'='1", "rev:\"bob\"", "purple-otter"]),
)  # fmt: skip


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(query=crafted, agent=st.one_of(st.none(), crafted), text=st.one_of(st.none(), crafted))
def test_alice_never_sees_bob(
    shared: tuple[Memory, str], query: str, agent: str | None, text: str | None
) -> None:
    memory, _ = shared
    try:
        hits = memory.recall(query, user_id="alice", agent_id=agent, k=20, include_inactive=True)
    except InvalidInputError:
        hits = []
    assert all(h.fact.user_id == "alice" for h in hits)
    try:
        listed = memory.list(user_id="alice", agent_id=agent, text=text, status=None)
    except InvalidInputError:  # an empty or overlong id or filter is refused, as by the API
        listed = []
    assert all(f.user_id == "alice" for f in listed)
    try:
        near = memory.nearest([query or "x"], user_id="alice", agent_id=agent, k=10)
    except InvalidInputError:
        near = []
    for rows in near:
        assert all(h.fact.user_id == "alice" for h in rows)
    try:
        exported = memory.export(user_id="alice", agent_id=agent)["facts"]
    except InvalidInputError:  # an agent id with a control or hidden character
        exported = []
    assert all(f["user_id"] == "alice" for f in exported)


def test_id_lookups_are_scoped(shared: tuple[Memory, str]) -> None:
    memory, bob_id = shared
    with pytest.raises(FactNotFoundError):
        memory.get(bob_id, user_id="alice")
    with pytest.raises(FactNotFoundError):
        memory.update(bob_id, user_id="alice", content="hijacked")
    with pytest.raises(FactNotFoundError):
        memory.forget(bob_id, user_id="alice", purge=True)
    assert memory.get(bob_id).content == BOB_SECRET


def test_forgetting_alice_leaves_bob(shared: tuple[Memory, str]) -> None:
    memory, bob_id = shared
    memory.forget(user_id="alice", purge=False)
    assert memory.get(bob_id).status.value == "active"


def test_import_cannot_overwrite_another_users_fact(shared: tuple[Memory, str]) -> None:
    memory, bob_id = shared
    forged = memory.export(user_id="bob")
    forged["facts"][0]["user_id"] = "mallory"
    forged["facts"][0]["content"] = "overwritten"
    with pytest.raises(Exception, match="belongs to another user"):
        memory.import_(forged)
    assert memory.get(bob_id).content == BOB_SECRET


def test_tool_scope_comes_from_the_run_not_the_model(shared: tuple[Memory, str]) -> None:
    memory, _ = shared
    memory.remember("Alice keeps purple otter plushies", user_id="alice", category="context")
    recall, _ = MemoryToolkit(memory=memory).get_tools()
    config = {"configurable": {"user_id": "alice"}}
    # Extra arguments a model might invent are rejected, not used.
    out = recall.invoke({"query": "purple otter", "user_id": "bob"}, config)
    assert "purple-otter" not in out and "Bob" not in out
    out = recall.invoke({"query": "purple otter"}, config)
    assert "Alice keeps purple otter plushies" in out and "PIN" not in out
