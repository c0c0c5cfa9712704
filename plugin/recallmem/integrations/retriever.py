"""``MemoryRetriever``: a user's memory as a LangChain retriever, for RAG chains and tools.

The user (and agent) come from the run, as for the memory tools
(:mod:`recallmem.agent.scope`): ``config={"configurable": {"user_id": ...}}`` or the
LangGraph runtime context. ``user_id`` given to the constructor is the fallback for runs
that carry none. Each ``Document`` is one recalled fact: its content, ``id`` the fact id,
and in ``metadata`` the fact id, category, confidence, the score and its parts.

>>> import tempfile
>>> from recallmem import Memory, MemoryConfig
>>> from recallmem.testing import HashingEmbeddings
>>> memory = Memory(MemoryConfig(home=tempfile.mkdtemp()), embeddings=HashingEmbeddings())
>>> _ = memory.remember("Prefers reports in Chinese", user_id="ada", category="preference")
>>> retriever = MemoryRetriever(memory=memory, k=3)
>>> (doc,) = retriever.invoke("report language", {"configurable": {"user_id": "ada"}})
>>> doc.page_content, doc.metadata["category"], doc.metadata["score_parts"]["newer"]
('Prefers reports in Chinese', 'preference', 0.0)
"""

from __future__ import annotations

from typing import Any

from langchain_core.callbacks import (
    AsyncCallbackManagerForRetrieverRun,
    CallbackManagerForRetrieverRun,
)
from langchain_core.documents import Document
from langchain_core.retrievers import BaseRetriever
from langchain_core.runnables import RunnableConfig, ensure_config
from pydantic import ConfigDict, Field

from recallmem.agent.scope import Scope, resolve_scope
from recallmem.errors import MissingScopeError
from recallmem.memory import Memory
from recallmem.types import Category, ScoredFact

_SCOPE = "recallmem_scope"  # the keyword invoke hands the run's scope down with


def as_document(hit: ScoredFact) -> Document:
    """One recalled fact as a ``Document``."""
    fact = hit.fact
    metadata = {
        "fact_id": fact.id,
        "category": fact.category.value,
        "confidence": fact.confidence,
        "score": hit.score,
        "score_parts": hit.parts.model_dump(),
        "agent_id": fact.agent_id,
        "created_at": fact.created_at.isoformat(),
    }
    return Document(id=fact.id, page_content=fact.content, metadata=metadata)


class MemoryRetriever(BaseRetriever):
    """The run user's facts most relevant to a query, best first (``Memory.recall``).

    Args:
        memory: the memory to recall from.
        k: how many facts to return (``invoke(query, k=...)`` overrides it per call).
        user_id: the user when the run names none; the run's user wins.
        categories: only facts of these categories.
        min_score: only facts scoring at least this.
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    memory: Memory
    k: int = Field(default=6, ge=1, le=100)
    user_id: str | None = None
    categories: list[Category] | None = None
    min_score: float | None = None

    def _scope(self, config: RunnableConfig | None) -> Scope:
        try:
            return resolve_scope(ensure_config(config))
        except MissingScopeError:
            if self.user_id is None:
                raise MissingScopeError(
                    "MemoryRetriever has no user for this run: invoke it with "
                    "config={'configurable': {'user_id': ...}} (or the agent's context), "
                    "or build it with MemoryRetriever(memory=..., user_id=...)"
                ) from None
            return Scope(user_id=self.user_id)

    def invoke(
        self, input: str, config: RunnableConfig | None = None, **kwargs: Any
    ) -> list[Document]:
        """Recall for the run's user (see the class docstring)."""
        return super().invoke(input, config, **{_SCOPE: self._scope(config), **kwargs})

    async def ainvoke(
        self, input: str, config: RunnableConfig | None = None, **kwargs: Any
    ) -> list[Document]:
        """``invoke``, awaited."""
        return await super().ainvoke(input, config, **{_SCOPE: self._scope(config), **kwargs})

    def _recall_args(self, query: str, scope: Scope | None, k: int | None) -> dict[str, Any]:
        scope = scope or self._scope(None)
        return {"query": query, "user_id": scope.user_id, "agent_id": scope.agent_id,
                "k": k or self.k, "categories": self.categories,
                "min_score": self.min_score}  # fmt: skip

    def _get_relevant_documents(
        self,
        query: str,
        *,
        run_manager: CallbackManagerForRetrieverRun,
        recallmem_scope: Scope | None = None,
        k: int | None = None,
    ) -> list[Document]:
        hits = self.memory.recall(**self._recall_args(query, recallmem_scope, k))
        return [as_document(hit) for hit in hits]

    async def _aget_relevant_documents(
        self,
        query: str,
        *,
        run_manager: AsyncCallbackManagerForRetrieverRun,
        recallmem_scope: Scope | None = None,
        k: int | None = None,
    ) -> list[Document]:
        hits = await self.memory.arecall(**self._recall_args(query, recallmem_scope, k))
        return [as_document(hit) for hit in hits]
