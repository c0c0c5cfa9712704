"""Opening the backend a configuration names: Chroma (``store="chroma"``, embedded or
a server) or the process's memory (``store="memory"``)."""

from __future__ import annotations

import tempfile
from pathlib import Path

from langchain_core.embeddings import Embeddings

from recallmem.config import MemoryConfig
from recallmem.embedders import embedder_name
from recallmem.store.chroma.opening import open_store
from recallmem.store.fact_store import FactStore
from recallmem.store.in_memory import InMemoryFactStore


def open_fact_store(config: MemoryConfig, embeddings: Embeddings) -> FactStore:
    """The store ``config`` names, for vectors of ``embeddings``.

    Opening embeds nothing: an embedder that does not declare its dimension has it read
    from the store, or recorded by the first write.
    """
    declared = getattr(embeddings, "dimension", None)
    dimension = declared if isinstance(declared, int) else None
    if config.store == "memory":
        return InMemoryFactStore(embedder_name(embeddings), dimension)
    return open_store(config, embedder_name(embeddings), dimension)


def scratch_config(config: MemoryConfig) -> MemoryConfig:
    """``config`` itself, or for ``store="memory"`` a copy whose home is a new temporary
    directory: a memory kept in this process must not share a queue or journals with a
    home on disk (its queued windows would be extracted into another store)."""
    if config.store != "memory":
        return config
    home = Path(tempfile.mkdtemp(prefix="recallmem-memory-"))
    return config.model_copy(update={"home": home})
