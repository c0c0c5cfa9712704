"""Clients nobody here wrote run unmodified on RecallmemStore: LangMem's tools, create_agent."""

from __future__ import annotations

import json
import warnings
from typing import Any

from langchain.agents import create_agent
from langchain.tools import ToolRuntime, tool
from langchain_core.messages import AIMessage, ToolMessage
from recallmem.integrations.langgraph import RecallmemStore
from recallmem.memory import Memory
from recallmem.testing import FakeChatModel

with warnings.catch_warnings():
    # trustcall, a LangMem dependency, imports Send from where LangGraph 1.0 deprecated it.
    warnings.filterwarnings("ignore", message="Importing Send from langgraph.constants")
    from langmem import create_manage_memory_tool, create_search_memory_tool

NAMESPACE = ("memories", "{user_id}")


def call(name: str, args: dict[str, Any], call_id: str) -> AIMessage:
    return AIMessage(content="", tool_calls=[{"name": name, "args": args, "id": call_id}])


def tools_of(messages: list[Any]) -> list[str]:
    return [str(m.content) for m in messages if isinstance(m, ToolMessage)]


def test_langmem_tools_create_search_update_delete(memory: Memory) -> None:
    store = RecallmemStore(memory)
    manage = create_manage_memory_tool(namespace=NAMESPACE, store=store)
    search = create_search_memory_tool(namespace=NAMESPACE, store=store)
    config = {"configurable": {"user_id": "ada"}}
    created = manage.invoke({"content": "Prefers reports written in Chinese"}, config)
    key = created.removeprefix("created memory ")
    (fact,) = memory.list(user_id="ada")
    assert fact.content == "Prefers reports written in Chinese" and fact.item.key == key  # type: ignore[union-attr]
    found = json.loads(search.invoke({"query": "which language for reports?"}, config))
    assert [(f["key"], f["value"]["content"]) for f in found] == [
        (key, "Prefers reports written in Chinese")
    ]
    assert found[0]["score"] > 0
    manage.invoke(
        {"content": "Prefers reports in English now", "action": "update", "id": key}, config
    )
    assert memory.get(fact.id).content == "Prefers reports in English now"
    manage.invoke({"action": "delete", "id": key}, config)
    assert json.loads(search.invoke({"query": "reports"}, config)) == []
    other = json.loads(search.invoke({"query": "reports"}, {"configurable": {"user_id": "bob"}}))
    assert other == []


def test_create_agent_with_the_store_runs_langmem_tools(memory: Memory) -> None:
    store = RecallmemStore(memory)
    model = FakeChatModel(
        responses=[
            call("manage_memory", {"content": "Works as a front-end engineer"}, "c1"),
            "Noted.",
            call("search_memory", {"query": "what does the user do for work?"}, "c2"),
            "You work as a front-end engineer.",
            call("search_memory", {"query": "what does the user do for work?"}, "c3"),
            "I don't know yet.",
        ]
    )
    agent = create_agent(
        model,
        tools=[
            create_manage_memory_tool(namespace=NAMESPACE),
            create_search_memory_tool(namespace=NAMESPACE),
        ],
        store=store,
    )
    ada = {"configurable": {"user_id": "ada"}}
    agent.invoke({"messages": [{"role": "user", "content": "I'm a front-end dev"}]}, ada)
    (fact,) = memory.list(user_id="ada")
    assert fact.content == "Works as a front-end engineer"
    result = agent.invoke({"messages": [{"role": "user", "content": "What do I do?"}]}, ada)
    (found,) = json.loads(tools_of(result["messages"])[-1])
    assert found["value"]["content"] == "Works as a front-end engineer"
    assert found["namespace"] == ["memories", "ada"]
    bob = {"configurable": {"user_id": "bob"}}
    result = agent.invoke({"messages": [{"role": "user", "content": "What do I do?"}]}, bob)
    assert json.loads(tools_of(result["messages"])[-1]) == []
    assert memory.list(user_id="bob") == []


async def test_create_agent_async_path(memory: Memory) -> None:
    store = RecallmemStore(memory)
    model = FakeChatModel(
        responses=[call("manage_memory", {"content": "Drinks green tea every morning"}, "c1"), "ok"]
    )
    agent = create_agent(model, tools=[create_manage_memory_tool(namespace=NAMESPACE)], store=store)
    await agent.ainvoke(
        {"messages": [{"role": "user", "content": "tea person here"}]},
        {"configurable": {"user_id": "ada"}},
    )
    hits = await store.asearch(("memories", "ada"), query="tea")
    assert [h.value["content"] for h in hits] == ["Drinks green tea every morning"]


def test_a_tool_reading_runtime_store_in_create_agent(memory: Memory) -> None:
    @tool
    def what_do_you_know(query: str, runtime: ToolRuntime) -> str:
        """Look the user up in the agent's store."""
        assert runtime.store is not None
        user = runtime.config["configurable"]["user_id"]
        hits = runtime.store.search(("memories", user), query=query, limit=1)
        return hits[0].value["content"] if hits else "nothing"

    memory.remember("Lives in Lyon", user_id="ada", category="identity")
    model = FakeChatModel(
        responses=[call("what_do_you_know", {"query": "where do they live?"}, "c1"), "Lyon."] * 2
    )
    agent = create_agent(model, tools=[what_do_you_know], store=RecallmemStore(memory))
    for user, expected in [("ada", "Lives in Lyon"), ("bob", "nothing")]:
        result = agent.invoke(
            {"messages": [{"role": "user", "content": "Where do I live?"}]},
            {"configurable": {"user_id": user}},
        )
        assert tools_of(result["messages"]) == [expected]
