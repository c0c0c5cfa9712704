"""Search keys through the HTTP API: written, shown, edited, dropped with the text,
bounded and screened."""

from __future__ import annotations

from fastapi.testclient import TestClient

CAT = "Has a ginger cat named Biscuit"
KEYS = ["What is my cat called?", "我的猫叫什么名字？"]


def test_the_api_takes_edits_and_returns_search_keys(ada: TestClient) -> None:
    client = ada
    created = client.post("/v1/users/me/facts", json={
        "content": CAT, "category": "identity", "questions": KEYS})  # fmt: skip
    assert created.status_code == 201
    assert created.json()["questions"] == KEYS and created.json()["keyed_by"] == "given"
    fact_id = created.json()["id"]
    assert client.get(f"/v1/users/me/facts/{fact_id}").json()["fact"]["questions"] == KEYS
    found = client.post("/v1/users/me/search", json={"query": "猫叫什么名字", "k": 1}).json()
    assert found["hits"][0]["fact"]["id"] == fact_id
    patched = client.patch(f"/v1/users/me/facts/{fact_id}", json={"questions": KEYS[:1]})
    assert patched.status_code == 200 and patched.json()["questions"] == KEYS[:1]
    moved = client.patch(f"/v1/users/me/facts/{fact_id}", json={"content": "Has a cat"})
    assert moved.json()["questions"] == [] and moved.json()["keyed_by"] is None
    too_long = client.post("/v1/users/me/facts", json={
        "content": "Likes tea", "category": "preference", "questions": ["y" * 201]})  # fmt: skip
    assert too_long.status_code == 422
    secret = client.post("/v1/users/me/facts", json={"content": "Has wifi", "category": "context",
                         "questions": ["wifi password", "hunter2-oak"]})  # fmt: skip
    assert secret.status_code == 400 and "hunter2" not in secret.text
    assert "questions" in secret.json()["detail"]
