"""The stores the conformance suite runs on, and how to open Memory objects on one.

The Chroma server runs are marked ``chroma_server`` and need ``RECALLMEM_TEST_CHROMA_URL``
(scripts/test.sh starts ``chroma run`` on loopback and sets it). Each opener uses its own
collection prefix, so runs on one server never see each other.
"""

from __future__ import annotations

import os
import socket
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from recallmem.config import MemoryConfig
from recallmem.memory import Memory
from recallmem.testing import HashingEmbeddings

CHROMA_URL = os.environ.get("RECALLMEM_TEST_CHROMA_URL")
needs_server = pytest.mark.skipif(
    not CHROMA_URL, reason="set RECALLMEM_TEST_CHROMA_URL (scripts/test.sh starts a server)"
)
SERVER = pytest.param("server", id="chroma-server", marks=[pytest.mark.chroma_server, needs_server])
CHROMA_STORES = [pytest.param("embedded", id="embedded"), SERVER]
ALL_STORES = [pytest.param("memory", id="memory"), *CHROMA_STORES]

Opener = Callable[[], Memory]


def config_for(kind: str, home: Path, prefix: str) -> MemoryConfig:
    """The configuration of a Memory on store ``kind`` ("memory", "embedded", "server")."""
    if kind == "memory":
        return MemoryConfig(store="memory")
    url = CHROMA_URL if kind == "server" else None
    return MemoryConfig(home=home, chroma_url=url, collection=prefix)


@pytest.fixture
def open_memory(store_kind: str, tmp_path: Path) -> Iterator[Opener]:
    """Opens Memory objects on one store (one per simulated service process) of the kind
    the ``store_kind`` fixture or parameter names."""
    kind = store_kind
    prefix = f"contract_{uuid.uuid4().hex[:12]}"
    opened: list[Memory] = []

    def open_one() -> Memory:
        memory = Memory(config_for(kind, tmp_path / "home", prefix), embeddings=HashingEmbeddings())
        opened.append(memory)
        return memory

    yield open_one
    for memory in opened:
        memory.close()
    if kind == "server":
        close_chroma_http_sessions()


def close_chroma_http_sessions() -> None:
    """Close the HTTP sessions of Chroma's server clients.

    chromadb 1.5's ``HttpClient`` never closes its httpx session, not even in
    ``close()``; left to the garbage collector it is a ResourceWarning, which this
    suite treats as an error. (Memory does not expose its Chroma client either.)
    """
    from chromadb.api.fastapi import FastAPI as ChromaHttpApi
    from chromadb.api.shared_system_client import SharedSystemClient

    for system in list(SharedSystemClient._identifier_to_system.values()):
        for component in system.components():
            if isinstance(component, ChromaHttpApi):
                component._session.close()
    SharedSystemClient.clear_system_cache()


def free_port() -> int:
    """A TCP port on loopback that nothing listens on."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])
