"""The chat agent and the translation of its stream into client events.

The agent is LangChain's ``create_agent`` with the memory tools and
:class:`~recallmem.agent.middleware.MemoryMiddleware`; it is built once per app and
scoped per run through its context, never per user. :func:`translate` is pure: one
item of the agent's stream in, the events a client should see out. Only assistant
text becomes a ``message`` event; everything memory did is a ``memory`` event.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, ToolMessage

from recallmem.agent.tools import MemoryToolkit
from recallmem.errors import ModelNotConfiguredError
from recallmem.extraction.chain import model_from_config
from recallmem.server.state import ServiceState
from recallmem.types import ScoredFact

Event = tuple[str, dict[str, Any]]

NO_MODEL = (
    "chat needs a chat model and none is configured: set RECALLMEM_LLM_MODEL with "
    "RECALLMEM_OPENAI_API_KEY (and RECALLMEM_OPENAI_BASE_URL for another OpenAI-compatible "
    "endpoint), or pass create_app(memory, model=...)"
)


@dataclass
class ChatTurn:
    """One request's scope and conversation, and the replies streamed so far."""

    user_id: str
    agent_id: str | None
    thread_id: str
    messages: list[BaseMessage]
    replies: list[AIMessage] = field(default_factory=list)

    def context(self) -> dict[str, str]:
        """The run scope the tools and the middleware read."""
        scope = {"user_id": self.user_id, "thread_id": self.thread_id}
        if self.agent_id:
            scope["agent_id"] = self.agent_id
        return scope


def resolve_model(state: ServiceState) -> BaseChatModel:
    """The injected model, else the memory's, else one built from the configuration."""
    model = state.model or state.memory.model or model_from_config(state.memory.config)
    if model is None:
        raise ModelNotConfiguredError(NO_MODEL)
    return model


def chat_agent(state: ServiceState) -> Any:
    """The app's agent, built on first use."""
    if state.agent is None:
        from langchain.agents import create_agent

        from recallmem.agent.middleware import MemoryMiddleware

        tools = MemoryToolkit(memory=state.memory).get_tools()
        middleware = MemoryMiddleware(memory=state.memory)
        state.agent = create_agent(resolve_model(state), tools=tools, middleware=[middleware])
    return state.agent


def _hit(hit: ScoredFact) -> dict[str, Any]:
    return {
        "id": hit.fact.id,
        "content": hit.fact.content,
        "category": hit.fact.category.value,
        "score": round(hit.score, 4),
        "parts": hit.parts.model_dump(),
    }


def _tool_event(message: ToolMessage) -> Event | None:
    if message.name == "recall":
        artifact = message.artifact if isinstance(message.artifact, list) else []
        hits = [_hit(h) for h in artifact if isinstance(h, ScoredFact)]
        event: dict[str, Any] = {"kind": "recall", "trigger": "tool", "hits": hits}
        if message.status == "error":
            event["error"] = message.text
        return "memory", event
    if message.name == "remember":
        return "memory", {"kind": "remember", "ok": message.status != "error", "text": message.text}
    return None


def _message_events(messages: Sequence[Any], turn: ChatTurn) -> list[Event]:
    events: list[Event] = []
    for message in messages:
        if isinstance(message, ToolMessage):
            if (event := _tool_event(message)) is not None:
                events.append(event)
        elif isinstance(message, AIMessage) and message.text.strip():
            turn.replies.append(message)
            events.append(("message", {"id": message.id, "text": message.text}))
    return events


def _jsonable(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_jsonable(v) for v in value]
    if isinstance(value, str | int | float | bool) or value is None:
        return value
    if isinstance(value, ScoredFact):
        return _hit(value)
    return str(value)


def translate(mode: str, chunk: Any, turn: ChatTurn) -> list[Event]:
    """The client events for one ``(mode, chunk)`` of the agent's stream."""
    if mode == "custom" and isinstance(chunk, Mapping):
        return [("memory", _jsonable(chunk))]
    if mode != "updates" or not isinstance(chunk, Mapping):
        return []
    events: list[Event] = []
    for update in chunk.values():
        if isinstance(update, Mapping):
            events += _message_events(update.get("messages") or [], turn)
    return events
