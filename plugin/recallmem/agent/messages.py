"""The messages the memory middleware adds to a thread, and how it reads a turn. Pure.

Everything the middleware adds is a user-role message marked hidden two ways, so chat
UIs can leave it out: ``additional_kwargs["recallmem"]["hidden"]`` is true, and its id
starts with ``do-not-render-`` (the prefix LangChain's agent-chat-ui skips). Neither
reaches the model provider: only the text does.

>>> note = hidden_message("<memory>...</memory>", "recall")
>>> is_hidden(note), kind_of(note), note.id.startswith(DO_NOT_RENDER)
(True, 'recall', True)
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence
from typing import Any, Literal

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage

DO_NOT_RENDER = "do-not-render-"
_KEY = "recallmem"

Kind = Literal["block", "hint", "recall", "turn", "recent"]


def hidden_message(
    text: str, kind: Kind, *, id: str | None = None, meta: Mapping[str, Any] | None = None
) -> HumanMessage:
    """A user-role message carrying memory, marked hidden for user interfaces."""
    marker = {"hidden": True, "kind": kind, **(meta or {})}
    message_id = id or f"{DO_NOT_RENDER}recallmem-{kind}-{uuid.uuid4().hex}"
    return HumanMessage(content=text, id=message_id, additional_kwargs={_KEY: marker})


def marker(message: BaseMessage) -> dict[str, Any]:
    """The middleware's marker on a message (empty for anyone else's message)."""
    value = message.additional_kwargs.get(_KEY)
    return dict(value) if isinstance(value, Mapping) else {}


def is_hidden(message: BaseMessage) -> bool:
    """Whether the middleware added this message."""
    return bool(marker(message).get("hidden"))


def kind_of(message: BaseMessage) -> str | None:
    """``block``, ``hint``, ``recall``, ``turn`` or ``recent`` for the middleware's
    messages, else None."""
    kind = marker(message).get("kind")
    return kind if isinstance(kind, str) else None


def visible(messages: Sequence[BaseMessage]) -> list[BaseMessage]:
    """The conversation as the user and the agent wrote it, without our notes."""
    return [m for m in messages if not is_hidden(m)]


def _is_user_turn(message: BaseMessage) -> bool:
    return isinstance(message, HumanMessage) and not is_hidden(message)


def current_turn(messages: Sequence[BaseMessage]) -> tuple[HumanMessage | None, list[BaseMessage]]:
    """The latest user message and everything after it (the turn so far)."""
    for index in range(len(messages) - 1, -1, -1):
        message = messages[index]
        if _is_user_turn(message):
            assert isinstance(message, HumanMessage)
            return message, list(messages[index + 1 :])
    return None, []


def first_user_message(messages: Sequence[BaseMessage]) -> HumanMessage | None:
    """The thread's first user message (what the start-of-thread block is about)."""
    return next((m for m in messages if _is_user_turn(m)), None)  # type: ignore[return-value]


def block_message(messages: Sequence[BaseMessage]) -> HumanMessage | None:
    """The thread's memory block, if one was injected."""
    found = next((m for m in messages if kind_of(m) == "block"), None)
    return found if isinstance(found, HumanMessage) else None


def recall_ran(turn: Sequence[BaseMessage]) -> bool:
    """Whether memory was recalled in this turn (by the planner or by the middleware)."""
    for message in turn:
        if kind_of(message) == "recall" or marker(message).get("recalled"):
            return True
        if isinstance(message, AIMessage) and any(
            c["name"] == "recall" for c in message.tool_calls
        ):
            return True
    return False


def last_reply(messages: Sequence[BaseMessage]) -> AIMessage | None:
    """The final AI message of a model call (None if it asks for tools)."""
    reply = next((m for m in reversed(messages) if isinstance(m, AIMessage)), None)
    return None if reply is None or reply.tool_calls else reply


def remembered_below(turn: Sequence[BaseMessage], threshold: float) -> list[str]:
    """Contents the planner saved this turn with ``remember`` below ``threshold`` confidence.

    Only calls whose tool result was not an error count.
    """
    failed = {m.tool_call_id for m in turn if isinstance(m, ToolMessage) and m.status == "error"}
    answered = {m.tool_call_id for m in turn if isinstance(m, ToolMessage)}
    found: list[str] = []
    for message in turn:
        if not isinstance(message, AIMessage):
            continue
        for call in message.tool_calls:
            if call["name"] != "remember" or call["id"] in failed or call["id"] not in answered:
                continue
            confidence = call["args"].get("confidence", 0.9)
            content = call["args"].get("content")
            if isinstance(confidence, int | float) and confidence < threshold and content:
                found.append(str(content))
    return found


__all__ = [
    "DO_NOT_RENDER",
    "Kind",
    "block_message",
    "current_turn",
    "first_user_message",
    "hidden_message",
    "is_hidden",
    "kind_of",
    "last_reply",
    "marker",
    "recall_ran",
    "remembered_below",
    "visible",
]
