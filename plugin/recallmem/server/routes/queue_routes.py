"""The extraction backlog of one user: what waits, what failed, what was extracted.

``/v1/users/{user_id}/queue`` lists conversations waiting for extraction and dead
letters (with retry); ``/v1/users/{user_id}/extractions`` lists the latest extractions
this process ran, with what they changed and what they cost. The API has its own
shapes here, so the queue's internals can change without breaking clients. Only the
caller's user's entries are ever listed or retried.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from datetime import datetime
from typing import Annotated

from fastapi import APIRouter, Path, Query
from pydantic import BaseModel, ConfigDict

from recallmem.extraction.report import Change, ExtractionReport
from recallmem.memory import Memory
from recallmem.server.admission import AdmittedRoute
from recallmem.server.auth import UserId
from recallmem.server.problems import PROBLEM_RESPONSES, ProblemError, problem_response
from recallmem.server.state import MemoryDep

router = APIRouter(
    prefix="/v1/users/{user_id}",
    tags=["queue"],
    responses={**PROBLEM_RESPONSES, 404: problem_response("No such letter")},
    route_class=AdmittedRoute,
)


class QueuedMessage(BaseModel):
    """A message kept for extraction."""

    model_config = ConfigDict(from_attributes=True)

    id: str
    role: str
    content: str


class PendingWindow(BaseModel):
    """A thread with messages waiting to be distilled into facts."""

    model_config = ConfigDict(from_attributes=True)

    agent_id: str | None
    thread_id: str
    messages: list[QueuedMessage]
    first_pending_at: datetime | None
    due_at: datetime | None
    attempts: int
    last_error: str | None
    in_progress: bool


class DeadLetterOut(BaseModel):
    """A window that failed too often, parked with the reason."""

    model_config = ConfigDict(from_attributes=True)

    id: int
    agent_id: str | None
    thread_id: str
    messages: list[QueuedMessage]
    reason: str
    attempts: int
    at: datetime


class QueueView(BaseModel):
    """The user's extraction backlog."""

    pending: list[PendingWindow]
    dead_letters: list[DeadLetterOut]


class Extraction(BaseModel):
    """One extraction: the facts it changed, what it dropped and why, and its cost."""

    thread_id: str
    agent_id: str | None
    messages: int
    added: list[str]
    confirmed: list[str]
    superseded: list[str]
    dropped: list[str]
    model: str | None
    prompt: str | None
    model_calls: int
    input_tokens: int
    output_tokens: int
    error: str | None


def _extraction(report: ExtractionReport) -> Extraction:
    def texts(changes: Sequence[Change]) -> list[str]:
        return [change.fact.content for change in changes]

    return Extraction(
        thread_id=report.thread_id,
        agent_id=report.agent_id,
        messages=report.messages,
        added=texts(report.added),
        confirmed=texts(report.confirmed),
        superseded=texts(report.superseded),
        dropped=[f"{d.content} ({d.reason})" for d in report.dropped],
        model=report.model,
        prompt=report.prompt,
        model_calls=report.usage.calls,
        input_tokens=report.usage.input_tokens,
        output_tokens=report.usage.output_tokens,
        error=report.error,
    )


@router.get(
    "/extractions", response_model=list[Extraction], summary="Recent extractions and their cost"
)
async def recent_extractions(
    user: UserId, memory: MemoryDep, limit: Annotated[int, Query(ge=1, le=100)] = 20
) -> list[Extraction]:
    """The latest extractions of the user's conversations run by this process, newest
    first (the process keeps the last 100 of all users)."""
    return [_extraction(r) for r in memory.queue.recent(user, limit)]


def _view(memory: Memory, user: str) -> QueueView:
    return QueueView(
        pending=[PendingWindow.model_validate(p) for p in memory.queue.pending(user_id=user)],
        dead_letters=[
            DeadLetterOut.model_validate(d) for d in memory.queue.dead_letters(user_id=user)
        ],
    )


@router.get("/queue", response_model=QueueView, summary="List pending windows and dead letters")
async def get_queue(user: UserId, memory: MemoryDep) -> QueueView:
    """What waits for extraction, oldest first, and what failed, newest first."""
    return await asyncio.to_thread(_view, memory, user)


def _owned(memory: Memory, user: str, letter_id: int) -> None:
    if letter_id not in {d.id for d in memory.queue.dead_letters(user_id=user)}:
        raise ProblemError(
            404,
            "Dead letter not found",
            f"no dead letter {letter_id} for this user; list them with GET .../queue",
        )


def _retry(memory: Memory, user: str, letter_id: int) -> QueueView:
    _owned(memory, user, letter_id)
    memory.queue.retry(letter_id)
    return _view(memory, user)


def _drop(memory: Memory, user: str, letter_id: int) -> QueueView:
    _owned(memory, user, letter_id)
    memory.queue.drop(letter_id)
    return _view(memory, user)


@router.post(
    "/queue/dead-letters/{letter_id}/retry", response_model=QueueView, summary="Retry a dead letter"
)
async def retry_dead_letter(
    user: UserId, memory: MemoryDep, letter_id: Annotated[int, Path(ge=1, le=2**62)]
) -> QueueView:
    """Queue a dead letter's messages again, due at once; returns the updated backlog."""
    return await asyncio.to_thread(_retry, memory, user, letter_id)


@router.delete(
    "/queue/dead-letters/{letter_id}", response_model=QueueView, summary="Discard a dead letter"
)
async def drop_dead_letter(
    user: UserId, memory: MemoryDep, letter_id: Annotated[int, Path(ge=1, le=2**62)]
) -> QueueView:
    """Discard a dead letter for good; returns the updated backlog."""
    return await asyncio.to_thread(_drop, memory, user, letter_id)
