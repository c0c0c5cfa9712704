"""A token for one user gets nothing of another, whatever the path, query or body says."""

from __future__ import annotations

import json
from typing import Any

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from recallmem.memory import Memory
from serverkit import JSON

BOB_FACTS = ["Bob's bank PIN hint is his cat Mochi", "Bob lives on Baker Street 221b"]


@pytest.fixture
def bobs(bob: TestClient, add_fact: Any) -> list[dict[str, Any]]:
    facts = [
        add_fact(bob, text, category="identity", thread_id="bt", agent_id="ba")
        for text in BOB_FACTS
    ]
    bob.put("/v1/users/me/profile", json={"background": {"summary": "Bob is a detective"}})
    return facts


def bob_snapshot(memory: Memory) -> tuple[list[dict[str, Any]], Any]:
    facts = sorted(
        (
            f.model_dump(mode="json", exclude={"last_accessed_at"})
            for f in memory.list(user_id="bob", status=None)
        ),
        key=lambda f: f["id"],
    )
    return facts, memory.get_profile(user_id="bob").model_dump(mode="json")


def leaks(response_text: str, bobs: list[dict[str, Any]]) -> bool:
    secrets = [f["id"] for f in bobs] + BOB_FACTS + ["Bob is a detective", "Mochi"]
    return any(secret in response_text for secret in secrets)


def user_routes(app: FastAPI) -> list[tuple[str, str]]:
    schema = app.openapi()
    return [
        (method.upper(), path)
        for path, ops in schema["paths"].items()
        for method in ops
        if "{user_id}" in path
    ]


def test_every_user_route_refuses_another_users_path(
    app: FastAPI, ada: TestClient, bobs: list[dict[str, Any]], memory: Memory
) -> None:
    before = bob_snapshot(memory)
    routes = user_routes(app)
    assert len(routes) >= 15
    for method, path in routes:
        url = path.replace("{user_id}", "bob").replace("{fact_id}", bobs[0]["id"])
        url = url.replace("{letter_id}", "1")
        response = ada.request(method, url, json={"content": "x", "category": "preference"})
        assert response.status_code == 403, (method, url, response.text)
        assert not leaks(response.text, bobs)
    assert bob_snapshot(memory) == before


def test_bobs_fact_ids_are_not_found_through_adas_own_path(
    ada: TestClient, bobs: list[dict[str, Any]], memory: Memory
) -> None:
    before = bob_snapshot(memory)
    fact_id = bobs[0]["id"]
    calls = [
        ("GET", f"/v1/users/me/facts/{fact_id}", None),
        ("PATCH", f"/v1/users/me/facts/{fact_id}", {"content": "hijacked"}),
        ("DELETE", f"/v1/users/me/facts/{fact_id}?purge=true", None),
        ("POST", f"/v1/users/me/facts/{fact_id}/pin", None),
        ("POST", f"/v1/users/me/facts/{fact_id}/unpin", None),
        ("GET", f"/v1/users/ada/facts/{fact_id}", None),
    ]
    for method, url, body in calls:
        response = ada.request(method, url, json=body, headers=JSON)
        assert response.status_code == 404, (method, url)
        assert not leaks(response.text.replace(fact_id, ""), bobs)
    assert bob_snapshot(memory) == before


def test_search_list_export_profile_and_metrics_show_only_the_callers_memory(
    ada: TestClient, bobs: list[dict[str, Any]], add_fact: Any
) -> None:
    add_fact(ada, "Ada lives in Hangzhou", category="identity")
    searches = [
        ada.post(
            "/v1/users/me/search", json={"query": BOB_FACTS[0], "k": 50, "include_inactive": True}
        ),
        ada.post("/v1/users/me/search", json={"query": "Baker Street", "agent_id": "ba"}),
    ]
    texts = [
        *(json.dumps(r.json()["hits"]) for r in searches),
        ada.get("/v1/users/me/facts", params={"text": "Baker", "status": "all"}).text,
        ada.get("/v1/users/me/facts", params={"thread_id": "bt", "agent_id": "ba"}).text,
        ada.get("/v1/users/me/export").text,
        ada.get("/v1/users/me/export", params={"agent_id": "ba"}).text,
        ada.get("/v1/users/me/profile").text,
    ]
    for text in texts:
        assert not leaks(text, bobs)
    exported = ada.get("/v1/users/me/export").json()
    assert {f["user_id"] for f in exported["facts"]} == {"ada"}


def test_clear_by_thread_agent_and_user_never_reaches_another_user(
    ada: TestClient, bobs: list[dict[str, Any]], memory: Memory
) -> None:
    before = bob_snapshot(memory)
    for params in ({"thread_id": "bt"}, {"agent_id": "ba"}, {}, {"purge": True}):
        assert ada.delete("/v1/users/me/memory", params=params).json()["affected"] == 0
    assert bob_snapshot(memory) == before


def test_an_import_cannot_write_into_another_user(
    ada: TestClient, bob: TestClient, bobs: list[dict[str, Any]], memory: Memory
) -> None:
    before = bob_snapshot(memory)
    document = bob.get("/v1/users/me/export").json()
    response = ada.post("/v1/users/me/import", json=document)
    assert response.status_code == 422
    rejected = response.json()["rejected"]
    assert {r["row"] for r in rejected} >= {0, 1}
    assert all("bob" in r["reason"] for r in rejected)

    # Re-labelled as Ada's, Bob's ids still cannot be taken over.
    for row in document["facts"]:
        row["user_id"] = "ada"
    document["profiles"] = []
    response = ada.post("/v1/users/me/import", json=document)
    assert response.status_code == 422
    assert "another user" in json.dumps(response.json()["rejected"])
    assert bob_snapshot(memory) == before
    assert memory.list(user_id="ada", status=None) == []


def test_chat_cannot_act_for_another_user(ada: TestClient) -> None:
    body = {"message": "hi", "user_id": "bob"}
    assert ada.post("/v1/chat/stream", json=body).status_code == 403


def test_user_metrics_count_only_the_callers_facts(
    ada: TestClient, bobs: list[dict[str, Any]], add_fact: Any
) -> None:
    add_fact(ada, "Ada lives in Hangzhou", category="identity")
    assert ada.get("/v1/users/me/metrics").json()["facts"]["total"] == 1


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    user=st.sampled_from(
        ["bob", "Bob", "BOB", "bob ", "%62ob", "..%2Fbob", "bob%00", "me%2F..%2Fbob"]
    ),
    query=st.text(min_size=1, max_size=40),
)
@example(user="bob", query="\u200b")  # found by CI: invisible only, refused with a 400
def test_fuzzed_paths_and_queries_never_reach_bob(
    ada: TestClient, bobs: list[dict[str, Any]], user: str, query: str
) -> None:
    for response in (
        ada.get(f"/v1/users/{user}/facts"),
        ada.post(f"/v1/users/{user}/search", json={"query": query}),
        ada.get("/v1/users/me/facts", params={"text": query[:200], "status": "all"}),
    ):
        assert response.status_code < 500
        body = response.json()
        assert not leaks(json.dumps([body.get("items"), body.get("hits")]), bobs)
    if query.strip():
        response = ada.post("/v1/users/me/search", json={"query": query})
        # Only invisible characters ("\u200b", which str.strip keeps): a 400 saying so.
        assert response.status_code == 200 or response.json()["detail"]
        hits = response.json().get("hits", [])
        assert all(h["fact"]["user_id"] == "ada" for h in hits)
