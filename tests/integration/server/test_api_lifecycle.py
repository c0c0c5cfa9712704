"""The lifecycle routes on real embedded Chroma: valid_until on writes, maintain per user
and for every user, with the same access rules as every other write."""

from __future__ import annotations

from typing import Any

from fastapi.testclient import TestClient
from serverkit import JSON

PAST = "2020-01-01T09:00:00+08:00"


def test_a_fact_written_with_a_past_valid_until_is_out_of_search_and_expires(
    ada: TestClient, add_fact: Any
) -> None:
    fact = add_fact(ada, "Trip to Lisbon", category="context", valid_until=PAST)
    assert fact["valid_until"] == "2020-01-01T01:00:00Z"
    hits = ada.post("/v1/users/me/search", json={"query": "Lisbon trip"}, headers=JSON).json()
    assert hits["hits"] == []
    report = ada.post("/v1/users/me/maintain", headers=JSON)
    assert report.status_code == 200, report.text
    assert report.json()["expired"] == [fact["id"]] and report.json()["consolidated"] == []
    again = ada.post("/v1/users/me/maintain", json={"now": report.json()["at"]}, headers=JSON)
    assert again.json()["expired"] == []
    listed = ada.get("/v1/users/me/facts", params={"status": "expired"}).json()
    assert [f["id"] for f in listed["items"]] == [fact["id"]]


def test_a_valid_until_without_an_offset_is_refused(ada: TestClient) -> None:
    body = {"content": "Trip to Lisbon", "category": "context", "valid_until": "2020-01-01T09:00"}
    response = ada.post("/v1/users/me/facts", json=body, headers=JSON)
    assert response.status_code == 422
    assert ada.get("/v1/users/me/facts").json()["items"] == []


def test_maintaining_every_user_takes_an_admin_token(
    ada: TestClient, bob: TestClient, admin: TestClient, add_fact: Any
) -> None:
    add_fact(ada, "Trip to Lisbon", category="context", valid_until=PAST)
    add_fact(bob, "Trip to Porto", category="context", valid_until=PAST)
    assert ada.post("/v1/maintain", headers=JSON).status_code == 403
    assert ada.post("/v1/users/bob/maintain", headers=JSON).status_code == 403
    report = admin.post("/v1/maintain", headers=JSON).json()
    assert report["users"] == ["ada", "bob"] and len(report["expired"]) == 2


def test_a_patch_moves_valid_until(ada: TestClient, add_fact: Any) -> None:
    fact = add_fact(ada, "Trip to Lisbon", category="context", valid_until=PAST)
    patched = ada.patch(f"/v1/users/me/facts/{fact['id']}",
                        json={"valid_until": "2100-01-01T00:00:00+00:00"}, headers=JSON)  # fmt: skip
    assert patched.status_code == 200 and patched.json()["valid_until"] == "2100-01-01T00:00:00Z"
    hits = ada.post("/v1/users/me/search", json={"query": "Lisbon trip"}, headers=JSON).json()
    assert [h["fact"]["id"] for h in hits["hits"]] == [fact["id"]]
