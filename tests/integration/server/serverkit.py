"""Helpers shared by the service tests: tokens, clients and a live loopback server."""

from __future__ import annotations

import threading
import time
from typing import Any

import uvicorn
from fastapi import FastAPI
from fastapi.testclient import TestClient
from recallmem.server.settings import ServerSettings

ADA = "tok-ada-0123456789abcdef"
BOB = "tok-bob-0123456789abcdef"
ADMIN = "tok-admin-0123456789abcdef"
# What every POST, PUT and PATCH must declare, bodyless ones (pin, retry) included.
JSON = {"Content-Type": "application/json"}


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


def add_fact(client: TestClient, content: str, user: str = "me", **fields: Any) -> dict[str, Any]:
    body = {"content": content, "category": fields.pop("category", "preference"), **fields}
    response = client.post(f"/v1/users/{user}/facts", json=body)
    assert response.status_code == 201, response.text
    fact: dict[str, Any] = response.json()
    return fact


class LiveServer:
    """A uvicorn server for ``app`` on a free loopback port, in a thread."""

    def __init__(self, app: FastAPI) -> None:
        config = uvicorn.Config(app, host="127.0.0.1", port=0, log_level="warning", lifespan="on")
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
