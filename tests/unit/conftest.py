"""Unit tests need no Chroma: their ``memory`` keeps its facts in the process
(``MemoryConfig(store="memory")``), whose behaviour tests/conformance/ holds to Chroma's."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from recallmem.config import MemoryConfig
from recallmem.memory import Memory
from recallmem.testing import HashingEmbeddings


@pytest.fixture
def memory() -> Iterator[Memory]:
    """A Memory on the in-memory store with fast hashing embeddings."""
    with Memory(MemoryConfig(store="memory"), embeddings=HashingEmbeddings()) as mem:
        yield mem


@pytest.fixture
def use_memory() -> Iterator[Memory]:
    """A Memory on the in-memory store with the real offline multilingual encoder."""
    with Memory(MemoryConfig(store="memory")) as mem:
        yield mem
