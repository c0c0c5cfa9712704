"""``POST /v1/chat/stream``: a memory-enabled agent, answered as server-sent events.

Events, in order of arrival:

- ``memory``: what memory did, never chat text: ``{"kind": "recall", ...}`` when facts
  were recalled (by the planner's tool or forced by the middleware), ``"injection"`` when
  the memory block was injected, ``"queued"`` when the turn was queued for extraction;
- ``message``: ``{"text": ...}`` for each assistant message the client should show;
- ``error``: a problem body if the agent failed mid-stream;
- ``done``: ``{"thread_id": ..., "ok": ...}``, always last.

The turn is queued for extraction (``memory.observe``) even when the client hangs up
mid-stream: the queueing runs shielded from the cancellation that the disconnect causes.

The turn is one unit of work from the moment the request arrived
(``persistence/forget_ledger.py``): if the user's memory (or the thread's) is purged
while the model answers, nothing of the turn is written after it: no fact, no queued
message, no retrieval log entry.
"""

from __future__ import annotations

import json
import logging
import uuid
from collections.abc import AsyncIterator
from typing import Any

import anyio
from fastapi import APIRouter
from fastapi.responses import StreamingResponse
from langchain_core.messages import AIMessage, AnyMessage, BaseMessage, HumanMessage

from recallmem.endpoints.failures import described
from recallmem.errors import ForgottenMeanwhileError, ModelUnreachableError
from recallmem.extraction.intake import WAITING_FOR_MODEL
from recallmem.persistence.forget_ledger import work_began
from recallmem.server.admission import AdmittedRoute
from recallmem.server.auth import Caller, Principal, resolve_user
from recallmem.server.chat_agent import ChatTurn, EventCollector, chat_agent, translate
from recallmem.server.chat_schemas import ChatRequest, history_message_id
from recallmem.server.problems import PROBLEM_RESPONSES, Problem, problem_response
from recallmem.server.state import ServiceState, State

log = logging.getLogger("recallmem.server.chat")

router = APIRouter(
    prefix="/v1/chat",
    tags=["chat"],
    responses={
        **PROBLEM_RESPONSES,
        409: problem_response("No chat model is configured"),
    },
    route_class=AdmittedRoute,
)


def sse(event: str, data: dict[str, Any]) -> bytes:
    """One server-sent event.

    >>> sse("done", {"ok": True})
    b'event: done\\ndata: {"ok": true}\\n\\n'
    """
    return f"event: {event}\ndata: {json.dumps(data, ensure_ascii=False)}\n\n".encode()


def _turn(body: ChatRequest, principal: Principal) -> ChatTurn:
    user = resolve_user(principal, body.user_id)
    thread_id = body.thread_id or uuid.uuid4().hex
    said = [*((m.role, m.content, m.id) for m in body.history),
            ("user", body.message, body.message_id)]  # fmt: skip
    messages: list[BaseMessage] = []
    for index, (role, content, given_id) in enumerate(said):
        ident = given_id or history_message_id(thread_id, index, role, content)
        kind = HumanMessage if role == "user" else AIMessage
        messages.append(kind(content=content, id=ident))
    return ChatTurn(user_id=user, agent_id=body.agent_id, thread_id=thread_id, messages=messages,
                    timezone=body.timezone)  # fmt: skip


async def _queue_turn(state: ServiceState, turn: ChatTurn) -> dict[str, Any] | None:
    """Queue the turn for extraction; never raises (the answer was already given)."""
    conversation: list[AnyMessage] = [*turn.messages, *turn.replies]  # type: ignore[list-item]
    try:
        observation = await state.memory.aobserve(
            conversation, user_id=turn.user_id, thread_id=turn.thread_id,
            agent_id=turn.agent_id, timezone=turn.timezone,
        )  # fmt: skip
    except ForgottenMeanwhileError as exc:
        log.info("recallmem: chat turn of thread %s not queued: %s", turn.thread_id, exc)
        return None
    except Exception:
        log.exception("recallmem: could not queue chat turn of thread %s", turn.thread_id)
        return None
    # The agent's middleware queues the turn first, so this call mostly finds its messages
    # queued already (observation.queued, its new ones, is then 0): say what waits.
    waiting = f"{observation.pending} message(s) of this thread"
    if observation.waiting_for_model:
        note = f"{waiting} {WAITING_FOR_MODEL}"
    else:
        note = f"the turn is queued: {waiting} wait for extraction"
    return {
        "kind": "queued",
        "thread_id": turn.thread_id,
        "pending": observation.pending,
        "waiting_for_model": observation.waiting_for_model,
        "note": note,
    }


def _count_retrieval(state: ServiceState, turn: ChatTurn, event: str, data: dict[str, Any]) -> None:
    """Feed the hit rate with the agent's retrievals (their latency is the middleware's;
    what they showed the middleware and the tools record: ``GET .../retrievals``)."""
    if event == "memory" and data.get("kind") in ("recall", "injection"):
        hits = data.get("hits")
        found = len(hits) if isinstance(hits, list) else int(hits or 0)
        if data.get("injected") is False:  # retrieved, but nothing of it reached the model
            found = 0
        state.recalls.record(turn.user_id, seconds=None, hits=found)


async def _events(state: ServiceState, turn: ChatTurn) -> AsyncIterator[bytes]:
    scope = {"user_id": turn.user_id, "thread_id": turn.thread_id, "agent_id": turn.agent_id}
    with work_began(turn.began, **scope):  # the agent's tasks copy this context
        async for event in _turn_events(state, turn):
            yield event


async def _turn_events(state: ServiceState, turn: ChatTurn) -> AsyncIterator[bytes]:
    agent = chat_agent(state)
    collector = EventCollector()
    finished = False
    try:
        stream = agent.astream(
            {"messages": turn.messages},
            context=turn.context(),
            config={"configurable": turn.context(), "callbacks": [collector]},
            stream_mode="updates",
        )
        async for chunk in stream:
            for event, data in [*collector.drain(), *translate(chunk, turn)]:
                _count_retrieval(state, turn, event, data)
                yield sse(event, data)
        for event, data in collector.drain():
            _count_retrieval(state, turn, event, data)
            yield sse(event, data)
        finished = True
        if state.model_status is not None:
            state.model_status.record_ok()
    except Exception as exc:
        status = state.model_status
        failure = described(exc, status.endpoint if status is not None else None)
        if isinstance(failure, ModelUnreachableError):
            detail, title = str(failure), "Chat model unreachable"
            if status is not None:
                status.record_failure(detail)
        else:
            detail, title = f"{type(exc).__name__}: {exc}", "Chat failed"
        # One line per failed turn: the endpoint and what to check, not a traceback.
        log.warning("recallmem: chat turn in thread %s failed: %s", turn.thread_id, detail)
        problem = Problem(status=502, title=title, detail=detail)
        yield sse("error", problem.model_dump(exclude_none=True))
    finally:
        # A disconnect cancels this generator; the turn is queued regardless.
        with anyio.CancelScope(shield=True):
            queued = await _queue_turn(state, turn)
    if queued is not None:
        yield sse("memory", queued)
    yield sse("done", {"thread_id": turn.thread_id, "ok": finished})


@router.post(
    "/stream",
    summary="Chat with a memory-enabled agent (server-sent events)",
    response_class=StreamingResponse,
    responses={200: {"content": {"text/event-stream": {}}, "description": "Event stream"}},
)
async def chat_stream(principal: Caller, state: State, body: ChatRequest) -> StreamingResponse:
    """Run the agent on the conversation and stream its events.

    ``user_id`` in the body is for admin tokens; a user's token always acts for its own
    user. Give the same ``thread_id`` on every turn of a conversation.
    """
    turn = _turn(body, principal)
    chat_agent(state)  # fails fast with a problem body when no model is configured
    return StreamingResponse(
        _events(state, turn),
        media_type="text/event-stream",
        headers={"Cache-Control": "no-store", "X-Accel-Buffering": "no"},
    )
