"""The systems under test, built by name (peers are imported only when asked for)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from langchain_core.embeddings import Embeddings

from bench.systems.base import BatchCachedEncoder, Hit, System

PEERS = ("dense-numpy", "bm25", "langgraph-store", "langmem", "mem0")
SYSTEM_NAMES = ("recallmem", *PEERS)

__all__ = ["PEERS", "SYSTEM_NAMES", "BatchCachedEncoder", "Hit", "System", "make_system"]


def make_system(name: str, embeddings: Embeddings, workdir: Path, **options: Any) -> System:
    """A fresh, empty system called ``name``; ``workdir`` holds any files it writes."""
    if name == "recallmem":
        from bench.systems.recallmem_system import RecallmemSystem

        return RecallmemSystem(embeddings, workdir, **options)
    if name == "dense-numpy":
        from bench.systems.dense import DenseNumpy

        return DenseNumpy(embeddings)
    if name == "bm25":
        from bench.systems.bm25 import BM25

        return BM25()
    if name == "langgraph-store":
        from bench.systems.langgraph_peer import LangGraphStore

        return LangGraphStore(embeddings)
    if name == "langmem":
        from bench.systems.langgraph_peer import LangMemTool

        return LangMemTool(embeddings)
    if name == "mem0":
        from bench.systems.mem0_peer import Mem0Peer

        return Mem0Peer(embeddings, workdir)
    raise ValueError(f"unknown system {name!r}; choose one of {', '.join(SYSTEM_NAMES)}")
