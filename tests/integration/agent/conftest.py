"""Fixtures for the agent integration tests: Memory on real Chroma, the agent runner."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from recallmem.config import MemoryConfig
from recallmem.memory import Memory
from recallmem.testing import FakeChatModel, HashingEmbeddings

from .agent_helpers import Run


@pytest.fixture
def make_memory(tmp_path: Path) -> Iterator[Callable[..., Memory]]:
    """A Memory on real embedded Chroma (shared home per test), optionally with an extractor."""
    opened: list[Memory] = []

    def make(extractor: FakeChatModel | None = None, **config: Any) -> Memory:
        settings = MemoryConfig(home=tmp_path / "mem", **config)
        memory = Memory(settings, embeddings=HashingEmbeddings(), model=extractor)
        opened.append(memory)
        return memory

    yield make
    for memory in opened:
        memory.close()


@pytest.fixture
def run() -> Callable[..., Run]:
    return Run
