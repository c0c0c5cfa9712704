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

    # One batch: the store embeds the whole batch in one call.
    store.batch([PutOp((NAMESPACE, user_id), doc.id, {"content": doc.text}) for doc in docs])


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
