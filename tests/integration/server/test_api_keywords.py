"""Search keywords through the HTTP API: written, shown, edited, bounded, screened."""

from __future__ import annotations

from fastapi.testclient import TestClient

MACHINE = "Bought a Breville espresso maker last week; it drips water"
TAGS = ["咖啡机", "漏水"]


def test_the_api_takes_edits_and_returns_keywords(ada: TestClient) -> None:
    client = ada
    created = client.post("/v1/users/me/facts", json={
        "content": MACHINE, "category": "context", "keywords": TAGS})  # fmt: skip
    assert created.status_code == 201 and created.json()["keywords"] == TAGS
    fact_id = created.json()["id"]
    detail = client.get(f"/v1/users/me/facts/{fact_id}").json()
    assert detail["fact"]["keywords"] == TAGS
    patched = client.patch(f"/v1/users/me/facts/{fact_id}", json={"keywords": ["咖啡机"]})
    assert patched.status_code == 200 and patched.json()["keywords"] == ["咖啡机"]
    too_long = client.post("/v1/users/me/facts", json={
        "content": "Likes tea", "category": "preference", "keywords": ["y" * 25]})  # fmt: skip
    assert too_long.status_code == 422
    secret = client.post("/v1/users/me/facts", json={"content": "Has wifi", "category": "context",
                         "keywords": ["password", "hunter2-oak"]})  # fmt: skip
    assert secret.status_code == 400 and "hunter2" not in secret.text  # as a secret in content
    assert "keywords" in secret.json()["detail"]
