"""Fixtures of the service tests: an app over real embedded Chroma, clients per token,
and a real uvicorn server on loopback for the streaming and browser tests."""

from __future__ import annotations

import threading
import time
from typing import Any

import pytest
import uvicorn
from fastapi import FastAPI
from fastapi.testclient import TestClient
from recallmem.memory import Memory
from recallmem.server.app import create_app
from recallmem.server.settings import ServerSettings

ADA = "tok-ada-0123456789abcdef"
BOB = "tok-bob-0123456789abcdef"
ADMIN = "tok-admin-0123456789abcdef"


def token_settings(**overrides: Any) -> ServerSettings:
    grants = [
        {"token": ADA, "user_id": "ada"},
        {"token": BOB, "user_id": "bob"},
        {"token": ADMIN, "admin": True},
    ]
    return ServerSettings(api_tokens=grants, **overrides)


def client_for(app: FastAPI, token: str | None) -> TestClient:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    return TestClient(app, headers=headers)


@pytest.fixture
def app(memory: Memory) -> FastAPI:
    return create_app(memory, token_settings())


@pytest.fixture
def ada(app: FastAPI) -> TestClient:
    return client_for(app, ADA)


@pytest.fixture
def bob(app: FastAPI) -> TestClient:
    return client_for(app, BOB)


@pytest.fixture
def admin(app: FastAPI) -> TestClient:
    return client_for(app, ADMIN)


@pytest.fixture
def anonymous(app: FastAPI) -> TestClient:
    return client_for(app, None)


def _add_fact(client: TestClient, content: str, user: str = "me", **fields: Any) -> dict[str, Any]:
    body = {"content": content, "category": fields.pop("category", "preference"), **fields}
    response = client.post(f"/v1/users/{user}/facts", json=body)
    assert response.status_code == 201, response.text
    fact: dict[str, Any] = response.json()
    return fact


@pytest.fixture
def add_fact() -> Any:
    """``add_fact(client, content, user="me", **fields)``: POST a fact, assert 201, return it."""
    return _add_fact


class LiveServer:
    """A uvicorn server for ``app`` on a free loopback port, in a thread."""

    def __init__(self, app: FastAPI) -> None:
        config = uvicorn.Config(app, host="127.0.0.1", port=0, log_level="warning", lifespan="off")
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(target=self.server.run, daemon=True)

    def __enter__(self) -> str:
        self.thread.start()
        deadline = time.monotonic() + 20
        while not self.server.started:
            if time.monotonic() > deadline or not self.thread.is_alive():
                raise RuntimeError("uvicorn did not start")
            time.sleep(0.02)
        port = self.server.servers[0].sockets[0].getsockname()[1]
        return f"http://127.0.0.1:{port}"

    def __exit__(self, *exc: object) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=20)


@pytest.fixture
def live_server() -> type[LiveServer]:
    return LiveServer
