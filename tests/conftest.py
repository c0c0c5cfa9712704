"""Shared fixtures. The network is closed for every test (pytest-socket, see pyproject)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

# Belt and braces: no library may try a hub or telemetry, even before a socket opens.
os.environ.update(
    HF_HUB_OFFLINE="1",
    TRANSFORMERS_OFFLINE="1",
    ANONYMIZED_TELEMETRY="False",
    MEM0_TELEMETRY="False",
    DO_NOT_TRACK="1",
)

from recallmem.config import MemoryConfig
from recallmem.memory import Memory
from recallmem.testing import HashingEmbeddings


@pytest.fixture(autouse=True)
def _isolated_home(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Nothing a test does may land in the developer's real data directory.
    monkeypatch.setenv("RECALLMEM_HOME", str(tmp_path_factory.mktemp("home")))


@pytest.fixture
def home(tmp_path: Path) -> Path:
    return tmp_path / "mem"


@pytest.fixture
def memory(home: Path) -> Iterator[Memory]:
    """A Memory on real embedded Chroma with fast hashing embeddings."""
    with Memory(MemoryConfig(home=home), embeddings=HashingEmbeddings()) as mem:
        yield mem


@pytest.fixture
def use_memory(home: Path) -> Iterator[Memory]:
    """A Memory with the real offline multilingual encoder."""
    with Memory(MemoryConfig(home=home)) as mem:
        yield mem


# tests/unit/conftest.py holds fixtures, no doctest; collected as a doctest module it
# would be imported by its base name, which tests/unit/bench/conftest.py already took.
collect_ignore = ["unit/conftest.py"]
