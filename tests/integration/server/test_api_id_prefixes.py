"""One id rule for the API and the CLI: a whole id, or any prefix unique among the user's
facts (the CLI took prefixes; the API refused them with 404)."""

from __future__ import annotations

from typing import Any

from fastapi.testclient import TestClient
from serverkit import JSON


def test_a_unique_prefix_names_the_fact_in_every_fact_route(ada: TestClient, add_fact: Any) -> None:
    fact = add_fact(ada, "Drinks green tea")
    short = fact["id"][:12]
    assert ada.get(f"/v1/users/me/facts/{short}").json()["fact"]["id"] == fact["id"]
    assert ada.post(f"/v1/users/me/facts/{short}/pin", headers=JSON).json()["pinned"] is True
    patched = ada.patch(f"/v1/users/me/facts/{short}", json={"confidence": 0.8})
    assert patched.json()["confidence"] == 0.8
    assert ada.delete(f"/v1/users/me/facts/{short}").json() == {"affected": 1, "purged": False}
    # Forgetting it again changes nothing, and says so.
    assert ada.delete(f"/v1/users/me/facts/{short}").json()["affected"] == 0


def test_an_ambiguous_prefix_lists_the_candidates_and_changes_nothing(
    ada: TestClient, add_fact: Any
) -> None:
    facts = [add_fact(ada, f"Fact number {n} about topic {n * 7}") for n in range(17)]
    by_first: dict[str, list[str]] = {}
    for fact in facts:
        by_first.setdefault(fact["id"][0], []).append(fact["id"])
    clash = max(by_first.values(), key=len)  # 17 ids, 16 hex digits: two share one
    response = ada.delete(f"/v1/users/me/facts/{clash[0][0]}")
    assert response.status_code == 409
    assert all(fact_id in response.json()["detail"] for fact_id in clash)
    assert len(ada.get("/v1/users/me/facts?limit=100").json()["items"]) == 17


def test_another_users_prefix_is_not_found(ada: TestClient, bob: TestClient, add_fact: Any) -> None:
    fact = add_fact(ada, "Ada's own fact")
    assert bob.get(f"/v1/users/me/facts/{fact['id'][:12]}").status_code == 404
    assert bob.delete(f"/v1/users/me/facts/{fact['id'][:12]}").status_code == 404
