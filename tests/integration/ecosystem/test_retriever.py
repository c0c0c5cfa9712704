"""MemoryRetriever: LangChain's retriever standard suite, create_retriever_tool, LCEL."""

from __future__ import annotations

from typing import Any

import pytest
from langchain.agents import create_agent
from langchain_core.documents import Document
from langchain_core.messages import AIMessage, ToolMessage
from langchain_core.prompts import ChatPromptTemplate
from langchain_core.runnables import RunnableLambda, RunnablePassthrough
from langchain_core.tools import create_retriever_tool
from langchain_tests.integration_tests import RetrieversIntegrationTests
from recallmem import Memory, MemoryConfig, MemoryRetriever
from recallmem.errors import MissingScopeError
from recallmem.testing import FakeChatModel, HashingEmbeddings

FACTS = [
    ("Prefers reports written in Chinese", "preference"),
    ("Works as a front-end engineer", "identity"),
    ("Writes TypeScript with Vue at work", "knowledge"),
    ("Deploys on Kubernetes", "context"),
]


def fill(memory: Memory, user_id: str = "ada") -> None:
    memory.remember_many([{"content": c, "category": k} for c, k in FACTS], user_id=user_id)


class TestMemoryRetrieverStandard(RetrieversIntegrationTests):
    """The suite builds the retriever itself and invokes it without a run config."""

    @pytest.fixture(autouse=True)
    def _memory(self, tmp_path: Any) -> Any:
        memory = Memory(MemoryConfig(home=tmp_path / "std"), embeddings=HashingEmbeddings())
        fill(memory)
        self.memory = memory
        yield
        memory.close()

    @property
    def retriever_constructor(self) -> type[MemoryRetriever]:
        return MemoryRetriever

    @property
    def retriever_constructor_params(self) -> dict[str, Any]:
        return {"memory": self.memory, "user_id": "ada"}

    @property
    def retriever_query_example(self) -> str:
        return "what does the user work with?"


def test_documents_carry_the_fact_id_category_and_score_parts(memory: Memory) -> None:
    fill(memory)
    docs = MemoryRetriever(memory=memory, k=2).invoke(
        "report language", {"configurable": {"user_id": "ada"}}
    )
    assert docs[0].page_content == "Prefers reports written in Chinese"
    fact = memory.get(docs[0].metadata["fact_id"], user_id="ada")
    assert docs[0].id == fact.id and docs[0].metadata["category"] == "preference"
    parts = docs[0].metadata["score_parts"]
    assert set(parts) == {"dense", "lexical", "recency", "confidence", "time", "newer", "key"}
    assert docs[0].metadata["score"] >= docs[1].metadata["score"]


def test_the_user_comes_from_the_run(memory: Memory) -> None:
    fill(memory, "ada")
    memory.remember("Plays the cello", user_id="bob", category="behavior")
    retriever = MemoryRetriever(memory=memory)
    bob = retriever.invoke("music", {"configurable": {"user_id": "bob"}})
    assert [d.page_content for d in bob] == ["Plays the cello"]
    bound = MemoryRetriever(memory=memory, user_id="ada")
    assert "Plays the cello" not in [d.page_content for d in bound.invoke("music cello")]
    with pytest.raises(MissingScopeError, match="no user for this run"):
        retriever.invoke("music")


async def test_ainvoke_uses_the_run_user(memory: Memory) -> None:
    fill(memory, "ada")
    docs = await MemoryRetriever(memory=memory, k=1).ainvoke(
        "Kubernetes", {"configurable": {"user_id": "ada"}}
    )
    assert [d.page_content for d in docs] == ["Deploys on Kubernetes"]


def test_in_an_lcel_chain(memory: Memory) -> None:
    fill(memory)
    model = FakeChatModel(responses=["In Chinese."])
    prompt = ChatPromptTemplate.from_messages(
        [("system", "Known about the user:\n{memories}"), ("human", "{question}")]
    )

    def joined(docs: list[Document]) -> str:
        return "\n".join(d.page_content for d in docs)

    chain = (
        {
            "memories": MemoryRetriever(memory=memory, k=2) | RunnableLambda(joined),
            "question": RunnablePassthrough(),
        }
        | prompt
        | model
    )
    answer = chain.invoke("Which language for my report?", {"configurable": {"user_id": "ada"}})
    assert answer.content == "In Chinese."
    system = model.requests[0][0].content
    assert "Prefers reports written in Chinese" in system


@pytest.mark.parametrize(
    "run",
    [{"config": {"configurable": {"user_id": "ada"}}}, {"context": {"user_id": "ada"}}],
    ids=["configurable", "runtime-context"],
)
def test_as_a_retriever_tool_in_an_agent(memory: Memory, run: dict[str, Any]) -> None:
    fill(memory)
    memory.remember("Plays the cello", user_id="bob", category="behavior")
    tool = create_retriever_tool(
        MemoryRetriever(memory=memory, k=2), "user_memory", "What is known about the user."
    )
    call = {"name": "user_memory", "args": {"query": "reports language"}, "id": "c1"}
    model = FakeChatModel(responses=[AIMessage(content="", tool_calls=[call]), "Chinese."])
    agent = create_agent(model, tools=[tool])
    result = agent.invoke({"messages": [{"role": "user", "content": "Which language?"}]}, **run)
    (seen,) = [m.content for m in result["messages"] if isinstance(m, ToolMessage)]
    assert "Prefers reports written in Chinese" in seen and "cello" not in seen
