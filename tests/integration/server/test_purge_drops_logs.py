"""A purge through the API drops what quotes the user's words: the recent extraction
reports this process keeps (``GET .../extractions``) and the records of what reached the
user's models (``GET .../retrievals``: all of them for "forget me", those naming the fact
for a fact's purge). A soft forget keeps them (the facts are kept too), and other users'
entries stay."""

from __future__ import annotations

import json
from typing import Any

import pytest
from fastapi.testclient import TestClient
from recallmem import Memory, MemoryConfig
from recallmem.server.app import create_app
from recallmem.testing import FakeChatModel, HashingEmbeddings
from serverkit import ADA, BOB, client_for, token_settings

SAID = "I live on Axolotlberg street"
FACT = "Lives on Axolotlberg street"
BOBS = "Bob keeps Hollowmere honey"


def _extraction(content: str, evidence: str) -> str:
    return json.dumps({"facts": [{"content": content, "category": "identity",
                                  "confidence": 0.95, "evidence": evidence}]})  # fmt: skip


def _logs(client: TestClient) -> str:
    return client.get("/v1/users/me/extractions").text + client.get("/v1/users/me/retrievals").text


@pytest.fixture
def clients(home: Any) -> Any:
    model = FakeChatModel(responses=[
        _extraction(FACT, SAID), _extraction(BOBS, BOBS),
        "It is a quiet street.", "It is very good.",
        *[json.dumps({"facts": []})] * 4,  # the chat turns, extracted in the background
    ])  # fmt: skip
    memory = Memory(MemoryConfig(home=home), embeddings=HashingEmbeddings(), model=model)
    memory.extract([{"role": "user", "content": SAID}], user_id="ada", thread_id="t1")
    memory.extract([{"role": "user", "content": BOBS}], user_id="bob", thread_id="b1")
    app = create_app(memory, token_settings(), model=model)
    ada, bob = client_for(app, ADA), client_for(app, BOB)
    for client, said in ((ada, "Is Axolotlberg street quiet?"), (bob, "Is Hollowmere honey good?")):
        assert client.post("/v1/chat/stream", json={"message": said, "thread_id": "c"}).is_success
    assert "Axolotlberg" in ada.get("/v1/users/me/extractions").text
    assert "Axolotlberg" in ada.get("/v1/users/me/retrievals").text
    assert "Hollowmere" in _logs(bob)
    yield memory, ada, bob
    memory.close()


def test_forget_me_drops_the_users_reports_and_retrievals(clients: Any) -> None:
    _, ada, bob = clients
    assert ada.delete("/v1/users/me/memory", params={"purge": "false"}).is_success
    assert "Axolotlberg" in _logs(ada)  # a soft forget keeps them, as it keeps the facts
    assert ada.delete("/v1/users/me/memory", params={"purge": "true"}).is_success
    assert ada.get("/v1/users/me/extractions").json() == []
    assert ada.get("/v1/users/me/retrievals").json() == {"records": [], "facts": {}}
    assert "Hollowmere" in _logs(bob)


def test_purging_one_fact_drops_the_users_reports_and_retrievals(clients: Any) -> None:
    memory, ada, bob = clients
    [fact] = memory.list(user_id="ada")
    assert fact.content == FACT
    assert ada.delete(f"/v1/users/me/facts/{fact.id}", params={"purge": "true"}).is_success
    assert "Axolotlberg" not in _logs(ada)
    assert "Hollowmere" in _logs(bob)
