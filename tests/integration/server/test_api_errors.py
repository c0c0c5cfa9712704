"""Every error is a 4xx JSON problem body that says what was wrong."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient
from httpx import Response
from serverkit import ADA, JSON

PROBLEM = "application/problem+json"


def problem(response: Response, status: int) -> dict[str, Any]:
    assert response.status_code == status, response.text
    assert response.headers["content-type"].startswith(PROBLEM)
    body: dict[str, Any] = response.json()
    assert body["status"] == status
    assert body["title"]
    assert len(body["detail"]) > 10
    return body


def test_missing_token_is_401_with_a_challenge(anonymous: TestClient) -> None:
    response = anonymous.get("/v1/users/ada/facts")
    body = problem(response, 401)
    assert response.headers["www-authenticate"] == "Bearer"
    assert "Authorization: Bearer" in body["detail"]


def test_unknown_token_is_401(app: FastAPI) -> None:
    client = TestClient(app, headers={"Authorization": "Bearer tok-not-configured-at-all"})
    assert "not configured" in problem(client.get("/v1/users/me/facts"), 401)["detail"]


def test_basic_auth_is_401(app: FastAPI) -> None:
    client = TestClient(app, headers={"Authorization": "Basic YWRhOnNlY3JldA=="})
    problem(client.get("/v1/users/me/facts"), 401)


def test_a_user_token_naming_another_user_is_403(ada: TestClient) -> None:
    body = problem(ada.get("/v1/users/bob/facts"), 403)
    assert "'ada'" in body["detail"]


def test_admin_token_must_name_the_user(admin: TestClient) -> None:
    assert "name the user" in problem(admin.get("/v1/users/me/facts"), 400)["detail"]


def test_service_metrics_need_admin(ada: TestClient, admin: TestClient) -> None:
    problem(ada.get("/v1/metrics"), 403)
    assert admin.get("/v1/metrics").status_code == 200


def test_unknown_route_and_unknown_fact_are_404(ada: TestClient) -> None:
    assert "openapi" in problem(ada.get("/v1/nothing-here"), 404)["detail"]
    assert "no fact" in problem(ada.get("/v1/users/me/facts/0123456789abcdef"), 404)["detail"]
    for call in (
        lambda: ada.patch("/v1/users/me/facts/nope", json={"pinned": True}),
        lambda: ada.delete("/v1/users/me/facts/nope"),
        lambda: ada.post("/v1/users/me/facts/nope/pin", headers=JSON),
        lambda: ada.post("/v1/users/me/facts/nope/unpin", headers=JSON),
    ):
        problem(call(), 404)


def test_wrong_method_is_405(ada: TestClient) -> None:
    problem(ada.put("/v1/users/me/facts"), 405)


@pytest.mark.parametrize(
    ("body", "location"),
    [
        ({"content": "x", "category": "hobby"}, "body.category"),
        ({"content": "", "category": "preference"}, "body.content"),
        ({"content": "x" * 2001, "category": "preference"}, "body.content"),
        ({"content": "x", "category": "preference", "confidence": 1.5}, "body.confidence"),
        ({"content": "x", "category": "preference", "user_id": "bob"}, "body.user_id"),
        ({"category": "preference"}, "body.content"),
    ],
)
def test_invalid_fact_bodies_name_the_field(
    ada: TestClient, body: dict[str, Any], location: str
) -> None:
    found = problem(ada.post("/v1/users/me/facts", json=body), 422)
    assert location in [e["location"] for e in found["errors"]]


def test_blank_content_is_rejected_by_the_schema(ada: TestClient) -> None:
    for blank in ("   ", "\x1c\t"):
        body = {"content": blank, "category": "preference"}
        found = problem(ada.post("/v1/users/me/facts", json=body), 422)
        assert [e["location"] for e in found["errors"]] == ["body.content"]


def test_malformed_json_is_422(ada: TestClient) -> None:
    response = ada.post(
        "/v1/users/me/facts", content=b'{"content": ', headers={"Content-Type": "application/json"}
    )
    problem(response, 422)


def test_a_patch_that_changes_nothing_is_a_read(ada: TestClient, add_fact: Any) -> None:
    fact = add_fact(ada, "Likes jazz")
    response = ada.patch(f"/v1/users/me/facts/{fact['id']}", json={"reason": "x"})
    assert response.status_code == 200
    assert response.json() == fact


@pytest.mark.parametrize(
    "params",
    [{"limit": 0}, {"limit": 1001}, {"offset": -1}, {"status": "gone"}, {"text": "x" * 201}],
)
def test_page_and_filter_bounds(ada: TestClient, params: dict[str, Any]) -> None:
    problem(ada.get("/v1/users/me/facts", params=params), 422)


def test_search_bounds(ada: TestClient) -> None:
    problem(ada.post("/v1/users/me/search", json={"query": "x" * 1001}), 422)
    problem(ada.post("/v1/users/me/search", json={"query": "tea", "k": 101}), 422)
    problem(ada.post("/v1/users/me/search", json={"query": ""}), 422)


def test_an_oversized_body_is_413(ada: TestClient) -> None:
    body = b'{"content": "' + b"x" * 300_000 + b'", "category": "preference"}'
    response = ada.post(
        "/v1/users/me/facts", content=body, headers={"Content-Type": "application/json"}
    )
    assert "larger than" in problem(response, 413)["detail"]


def test_an_oversized_chunked_body_is_413(ada: TestClient) -> None:
    def chunks() -> Iterator[bytes]:
        yield b'{"content": "'
        for _ in range(40):
            yield b"y" * 10_000
        yield b'", "category": "preference"}'

    response = ada.post(
        "/v1/users/me/facts", content=chunks(), headers={"Content-Type": "application/json"}
    )
    problem(response, 413)
    assert ada.get("/v1/users/me/facts").json()["items"] == []


def test_chat_without_a_model_is_a_clear_problem(ada: TestClient) -> None:
    body = {"message": "hello"}
    found = problem(ada.post("/v1/chat/stream", json=body), 409)
    assert "RECALLMEM_LLM_MODEL" in found["detail"]


def test_chat_needs_a_message(ada: TestClient) -> None:
    problem(ada.post("/v1/chat/stream", json={"history": []}), 422)
    problem(ada.post("/v1/chat/stream", json={"message": " \n"}), 422)


def test_health_needs_no_token(anonymous: TestClient) -> None:
    response = anonymous.get("/v1/health")
    assert response.status_code == 200
    assert response.json()["auth"] == "bearer"


def test_an_unexpected_failure_is_a_500_problem_that_closes_the_connection(
    app: FastAPI, monkeypatch: pytest.MonkeyPatch
) -> None:
    memory = app.state.service.memory

    def broken(*_: object, **__: object) -> None:
        raise RuntimeError("disk controller on fire")

    monkeypatch.setattr(memory.repository, "index", broken)
    client = TestClient(app, raise_server_exceptions=False)
    response = client.get("/v1/users/ada/facts", headers={"Authorization": f"Bearer {ADA}"})
    body = problem(response, 500)
    assert "RuntimeError" in body["detail"] and "fire" not in body["detail"]  # no internals
    assert response.headers["connection"] == "close"
