"""recallmem itself, through its public API only: ``remember_many`` and ``recall``."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from langchain_core.embeddings import Embeddings

from bench.data import Doc
from bench.systems.base import Hit

BATCH = 1000


class RecallmemSystem:
    """``Memory(MemoryConfig(home=workdir))`` with the shared embedder."""

    name = "recallmem"

    def __init__(
        self,
        embeddings: Embeddings,
        workdir: Path,
        weights: dict[str, Any] | None = None,
        **config: Any,
    ) -> None:
        from recallmem.config import MemoryConfig
        from recallmem.memory import Memory

        self._memory = Memory(MemoryConfig(home=workdir, **config), embeddings=embeddings)
        if weights:
            # Ablations and tuning switch ranking techniques through the public weights.
            self._memory.weights = replace(self._memory.weights, **weights)
        # A merged near-duplicate comes back as the existing fact: it then stands for
        # every document folded into it.
        self._docs_of_fact: dict[str, set[str]] = {}

    def add(self, user_id: str, docs: Sequence[Doc]) -> None:
        for start in range(0, len(docs), BATCH):
            chunk = docs[start : start + BATCH]
            items = [_item(d) for d in chunk]
            facts = self._memory.remember_many(items, user_id=user_id)
            for fact, doc in zip(facts, chunk, strict=True):
                self._docs_of_fact.setdefault(fact.id, set()).add(doc.id)

    def search(self, user_id: str, query: str, k: int) -> list[Hit]:
        found = self._memory.recall(query, user_id=user_id, k=k)
        return [frozenset(self._docs_of_fact.get(s.fact.id, ())) for s in found]

    def close(self) -> None:
        close = getattr(self._memory, "close", None)
        if callable(close):
            close()


def _item(doc: Doc) -> dict[str, Any]:
    """A ``remember_many`` item; the time the memory was said travels as its source."""
    from recallmem.types import Source

    item: dict[str, Any] = {"content": doc.text, "category": "context"}
    if doc.time is not None:
        item["source"] = Source(at=doc.time, extractor="benchmark")
    return item
