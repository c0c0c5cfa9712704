"""LangGraph's ``InMemoryStore`` with a vector index, directly and through LangMem's tool.

The index embeds only the ``content`` field: without ``fields`` the whole JSON value (ids
included) is embedded, which measured about three points of R@10 worse.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from langchain_core.embeddings import Embeddings

from bench.data import Doc
from bench.systems.base import Hit

NAMESPACE = "memories"


def _store(embeddings: Embeddings, dims: int) -> Any:
    from langgraph.store.memory import InMemoryStore

    return InMemoryStore(index={"dims": dims, "embed": embeddings, "fields": ["content"]})


def _put_all(store: Any, user_id: str, docs: Sequence[Doc]) -> None:
    from langgraph.store.base import PutOp

    # Batched: the store embeds a whole batch in one call. langgraph 1.x embeds each
    # distinct text once and then fails ("Number of embeddings (81) does not match number
    # of indices (83)") when a batch repeats a text, so a repeat goes to a later batch.
    for batch in _distinct_text_batches(docs):
        store.batch([PutOp((NAMESPACE, user_id), d.id, {"content": d.text}) for d in batch])


def _distinct_text_batches(docs: Sequence[Doc]) -> list[list[Doc]]:
    """Split docs into as few batches as possible, none repeating a text; order kept.

    >>> from bench.data import Doc
    >>> docs = [Doc(str(i), t, frozenset()) for i, t in enumerate("abac")]
    >>> [[d.id for d in b] for b in _distinct_text_batches(docs)]
    [['0', '1', '3'], ['2']]
    """
    batches: list[list[Doc]] = []
    seen: list[set[str]] = []
    for doc in docs:
        for batch, texts in zip(batches, seen, strict=True):
            if doc.text not in texts:
                batch.append(doc)
                texts.add(doc.text)
                break
        else:
            batches.append([doc])
            seen.append({doc.text})
    return batches


class LangGraphStore:
    """``InMemoryStore.search`` with a query."""

    name = "langgraph-store"

    def __init__(self, embeddings: Embeddings, dims: int = 512) -> None:
        self._store = _store(embeddings, dims)

    def add(self, user_id: str, docs: Sequence[Doc]) -> None:
        _put_all(self._store, user_id, docs)

    def search(self, user_id: str, query: str, k: int) -> list[Hit]:
        items = self._store.search((NAMESPACE, user_id), query=query, limit=k)
        return [frozenset({item.key}) for item in items]

    def close(self) -> None:
        return None


class LangMemTool:
    """LangMem's ``search_memory`` tool over the same kind of store, as an agent calls it."""

    name = "langmem"

    def __init__(self, embeddings: Embeddings, dims: int = 512) -> None:
        from langmem import create_search_memory_tool  # type: ignore[import-untyped]

        self._store = _store(embeddings, dims)
        self._tool = create_search_memory_tool(
            namespace=(NAMESPACE, "{langgraph_user_id}"), store=self._store
        )

    def add(self, user_id: str, docs: Sequence[Doc]) -> None:
        _put_all(self._store, user_id, docs)

    def search(self, user_id: str, query: str, k: int) -> list[Hit]:
        config = {"configurable": {"langgraph_user_id": user_id}}
        text = self._tool.invoke({"query": query, "limit": k}, config=config)
        return [frozenset({item["key"]}) for item in json.loads(text)]

    def close(self) -> None:
        return None
