"""Helpers for the agent integration tests: an event collector, scripted replies, a runner."""

from __future__ import annotations

import json
from typing import Any
from uuid import UUID

from langchain.agents import create_agent
from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.messages import AIMessage, BaseMessage
from langgraph.checkpoint.memory import InMemorySaver
from recallmem.agent.middleware import MemoryMiddleware
from recallmem.memory import Memory
from recallmem.testing import FakeChatModel

PLAN = "上次讨论的部署方案是在阿里云 ACK 上做蓝绿部署"  # a decision the user made earlier
HEDGE = "我无法访问之前的对话，能再说一下是哪个方案吗？"  # a reply that hedges about it


class EventLog(BaseCallbackHandler):
    """Collects the custom callback events a run dispatches."""

    def __init__(self) -> None:
        self.events: list[tuple[str, dict[str, Any]]] = []

    def on_custom_event(self, name: str, data: Any, *, run_id: UUID, **kwargs: Any) -> None:
        self.events.append((name, dict(data)))

    def named(self, name: str) -> list[dict[str, Any]]:
        return [data for event, data in self.events if event == name]


def extraction_reply(*facts: dict[str, Any]) -> str:
    """What an extraction model says for a window: the facts, nothing else changed."""
    return json.dumps(
        {"facts": list(facts), "supersede": [], "confirmed": [], "todos_done": [], "profile": {}},
        ensure_ascii=False,
    )


def tool_call(name: str, call_id: str = "c1", **args: Any) -> AIMessage:
    return AIMessage(content="", tool_calls=[{"name": name, "args": args, "id": call_id}])


class Run:
    """One agent and the helpers to talk to it as a given user."""

    def __init__(self, memory: Memory, model: FakeChatModel, **options: Any) -> None:
        self.memory, self.model, self.events = memory, model, EventLog()
        self.middleware = MemoryMiddleware(memory, **options)
        self.agent = create_agent(model, middleware=[self.middleware], checkpointer=InMemorySaver())

    def say(
        self, text: str, *, user: str = "ada", thread: str = "t1", **context: Any
    ) -> list[BaseMessage]:
        result = self.agent.invoke(
            {"messages": [("user", text)]},
            context={"user_id": user, **context},
            config={"configurable": {"thread_id": thread}, "callbacks": [self.events]},
        )
        return list(result["messages"])

    async def asay(self, text: str, *, user: str = "ada", thread: str = "t1") -> list[BaseMessage]:
        result = await self.agent.ainvoke(
            {"messages": [("user", text)]},
            context={"user_id": user},
            config={"configurable": {"thread_id": thread}, "callbacks": [self.events]},
        )
        return list(result["messages"])
