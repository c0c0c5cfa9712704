"""Fixtures of the service tests: an app over real embedded Chroma and clients per token."""

from __future__ import annotations

from typing import Any

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient
from recallmem.memory import Memory
from recallmem.server.app import create_app
from serverkit import ADA, ADMIN, BOB, LiveServer, add_fact, client_for, token_settings


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


@pytest.fixture(name="add_fact")
def add_fact_fixture() -> Any:
    """``add_fact(client, content, user="me", **fields)``: POST a fact, assert 201, return it."""
    return add_fact


@pytest.fixture
def live_server() -> type[LiveServer]:
    return LiveServer
