"""``POST /v1/users/{user}/copy``: across users for admins only, within a user for its token."""

from __future__ import annotations

from typing import Any

from fastapi.testclient import TestClient
from recallmem.memory import Memory


def test_copying_across_users_needs_an_admin(
    ada: TestClient, bob: TestClient, admin: TestClient, memory: Memory, add_fact: Any
) -> None:
    add_fact(bob, "Bob lives on Baker Street", category="identity")
    refused = ada.post("/v1/users/me/copy", json={"from_user_id": "bob"})
    assert refused.status_code == 403 and "admin" in refused.json()["detail"]
    assert memory.list(user_id="ada", status=None) == []

    done = admin.post("/v1/users/ada/copy", json={"from_user_id": "bob", "to_agent_id": "x"})
    assert done.status_code == 200, done.text
    body = done.json()
    assert (body["copied"], body["confirmed"]) == (1, 0)
    assert body["facts"][0]["copied_from"]["user_id"] == "bob"
    assert body["facts"][0]["agent_id"] == "x"


def test_a_user_copies_between_its_own_agents(ada: TestClient, add_fact: Any) -> None:
    fact = add_fact(ada, "Prefers short answers", agent_id="writer")
    done = ada.post("/v1/users/me/copy", json={"from_agent_id": "writer", "to_agent_id": "coder",
                                               "ids": [fact["id"]]})  # fmt: skip
    assert done.status_code == 200 and done.json()["facts"][0]["agent_id"] == "coder"
    same = ada.post("/v1/users/me/copy", json={"from_agent_id": "writer", "to_agent_id": "writer"})
    assert same.status_code == 400 and "same scope" in same.json()["detail"]
    bad = ada.post("/v1/users/me/copy", json={"categories": ["hobby"]})
    assert bad.status_code == 422
