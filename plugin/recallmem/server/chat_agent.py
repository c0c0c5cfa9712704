"""The chat agent and the translation of what it does into client events.

The agent is LangChain's ``create_agent`` with
:class:`~recallmem.agent.middleware.MemoryMiddleware` (which also registers the
``recall`` and ``remember`` tools); it is built once per app and scoped per run through
its context, never per user. Two sources feed the client: the graph's ``updates``
(assistant messages, tool results) and the middleware's ``memory_retrieval`` /
``memory_extraction`` callback events, gathered by :class:`EventCollector`. The
translations are pure: only assistant text becomes a ``message`` event; everything
memory did is a ``memory`` event. Hidden memory messages never become chat.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any
from uuid import UUID

from langchain_core.callbacks import AsyncCallbackHandler
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, ToolMessage

from recallmem.errors import ModelNotConfiguredError
from recallmem.extraction.chain import model_from_config
from recallmem.persistence.forget_ledger import now as ledger_now
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
    timezone: str | None = None
    began: float = field(default_factory=ledger_now)  # on the forget ledger's clock

    def context(self) -> dict[str, str]:
        """The run scope the tools and the middleware read."""
        scope = {"user_id": self.user_id, "thread_id": self.thread_id}
        if self.agent_id:
            scope["agent_id"] = self.agent_id
        if self.timezone:
            scope["timezone"] = self.timezone
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
        model = resolve_model(state)
        from langchain.agents import create_agent

        from recallmem.agent.middleware import MemoryMiddleware

        state.agent = create_agent(model, middleware=[MemoryMiddleware(memory=state.memory)])
    return state.agent


def _hit(hit: ScoredFact) -> dict[str, Any]:
    return {
        "id": hit.fact.id,
        "content": hit.fact.content,
        "category": hit.fact.category.value,
        "score": round(hit.score, 4),
        "parts": hit.parts.model_dump(),
        "weights": None if hit.weights is None else hit.weights.model_dump(),
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


def memory_event(name: str, data: Mapping[str, Any]) -> Event | None:
    """The client event for one of the middleware's callback events.

    Recalls by the ``recall`` tool are reported from the tool's result instead, which
    carries the hits themselves.

    >>> memory_event("memory_retrieval", {"trigger": "injection", "hits": 3})
    ('memory', {'kind': 'injection', 'trigger': 'injection', 'hits': 3})
    """
    if name == "memory_retrieval":
        trigger = data.get("trigger")
        if trigger == "tool":
            return None
        kind = "injection" if trigger == "injection" else "recall"
        return "memory", {"kind": kind, **_jsonable(data)}
    if name == "memory_extraction":
        return "memory", {"kind": "extraction", **_jsonable(data)}
    return None


def _jsonable(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {str(k): _jsonable(v) for k, v in value.items() if k != "user_id"}
    if isinstance(value, list | tuple):
        return [_jsonable(v) for v in value]
    if isinstance(value, str | int | float | bool) or value is None:
        return value
    return str(value)


class EventCollector(AsyncCallbackHandler):
    """Gathers the middleware's memory events during a run, for the stream to send."""

    def __init__(self) -> None:
        self.events: list[Event] = []

    async def on_custom_event(
        self,
        name: str,
        data: Any,
        *,
        run_id: UUID,
        tags: list[str] | None = None,
        metadata: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> None:
        """Keep a memory event (other custom events are not ours to show)."""
        if isinstance(data, Mapping) and (event := memory_event(name, data)) is not None:
            self.events.append(event)

    def drain(self) -> list[Event]:
        """The events gathered since the last drain."""
        drained, self.events = self.events, []
        return drained


def translate(chunk: Any, turn: ChatTurn) -> list[Event]:
    """The client events for one ``updates`` chunk of the agent's stream."""
    if not isinstance(chunk, Mapping):
        return []
    events: list[Event] = []
    for update in chunk.values():
        if isinstance(update, Mapping):
            events += _message_events(update.get("messages") or [], turn)
    return events
