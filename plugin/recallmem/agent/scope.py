"""Whose memory a run may touch, read from the run itself, never from the model.

The scope comes from ``config["configurable"]`` (``user_id``, ``agent_id``,
``thread_id``, and the user's ``timezone``) or from the LangChain 1.x runtime context
given to ``agent.invoke(..., context={"user_id": ..., "timezone": "Asia/Shanghai"})``.
Nothing the model writes into tool arguments can change it.

>>> resolve_scope({"configurable": {"user_id": "ada", "thread_id": "t1"}})
Scope(user_id='ada', agent_id=None, thread_id='t1', timezone=None)
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from langchain_core.runnables import RunnableConfig

from recallmem.errors import MissingScopeError

_RUNTIME_KEY = "__pregel_runtime"  # where LangGraph keeps the Runtime in a run's config


@dataclass(frozen=True)
class Scope:
    """The user (and optionally agent and thread) a run acts for, and the user's timezone
    (an IANA name: where "today" and "yesterday" are; None for the caller's default)."""

    user_id: str
    agent_id: str | None = None
    thread_id: str | None = None
    timezone: str | None = None


def _lookup(source: object, key: str) -> str | None:
    value = source.get(key) if isinstance(source, Mapping) else getattr(source, key, None)
    return value if isinstance(value, str) and value else None


def _sources(config: RunnableConfig | None, context: object) -> list[object]:
    configurable: Mapping[str, Any] = (config or {}).get("configurable") or {}
    runtime = configurable.get(_RUNTIME_KEY)
    runtime_context = getattr(runtime, "context", None) if runtime is not None else None
    return [s for s in (context, runtime_context, configurable) if s is not None]


def resolve_scope(config: RunnableConfig | None, context: object = None) -> Scope:
    """The run's scope; an explicit ``context`` wins over the runtime's, then ``configurable``."""
    sources = _sources(config, context)

    def first(key: str) -> str | None:
        return next((v for s in sources if (v := _lookup(s, key)) is not None), None)

    user_id = first("user_id")
    if user_id is None:
        raise MissingScopeError(
            "no user_id for this run: pass it as agent.invoke(..., context={'user_id': ...}) "
            "or config={'configurable': {'user_id': ...}}"
        )
    return Scope(
        user_id=user_id,
        agent_id=first("agent_id"),
        thread_id=first("thread_id"),
        timezone=first("timezone"),
    )
