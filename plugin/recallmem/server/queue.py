"""``/v1/users/{user_id}/queue``: conversations waiting for extraction, and dead letters.

The API has its own shapes here, so the queue's internals can change without breaking
clients. Only the caller's user's entries are ever listed or retried.
"""

from __future__ import annotations

import asyncio
from datetime import datetime
from typing import Annotated, Any

from fastapi import APIRouter, Path
from pydantic import BaseModel, ConfigDict

from recallmem.memory import Memory
from recallmem.server.auth import UserId
from recallmem.server.problems import PROBLEM_RESPONSES, ProblemError, problem_response
from recallmem.server.state import MemoryDep

router = APIRouter(
    prefix="/v1/users/{user_id}/queue",
    tags=["queue"],
    responses={**PROBLEM_RESPONSES, 404: problem_response("No such letter")},
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


def _view(memory: Memory, user: str) -> QueueView:
    pending: list[Any] = memory.pending(user_id=user)
    letters: list[Any] = memory.dead_letters(user_id=user)
    return QueueView(
        pending=[PendingWindow.model_validate(p) for p in pending],
        dead_letters=[DeadLetterOut.model_validate(d) for d in letters],
    )


@router.get("", response_model=QueueView, summary="List pending windows and dead letters")
async def get_queue(user: UserId, memory: MemoryDep) -> QueueView:
    """What waits for extraction, oldest first, and what failed, newest first."""
    return await asyncio.to_thread(_view, memory, user)


def _retry(memory: Memory, user: str, letter_id: int) -> QueueView:
    owned = {d.id for d in memory.dead_letters(user_id=user)}
    if letter_id not in owned:
        raise ProblemError(
            404,
            "Dead letter not found",
            f"no dead letter {letter_id} for this user; list them with GET .../queue",
        )
    memory.retry_dead_letter(letter_id)
    return _view(memory, user)


@router.post(
    "/dead-letters/{letter_id}/retry", response_model=QueueView, summary="Retry a dead letter"
)
async def retry_dead_letter(
    user: UserId, memory: MemoryDep, letter_id: Annotated[int, Path(ge=1, le=2**62)]
) -> QueueView:
    """Queue a dead letter's messages again, due at once; returns the updated backlog."""
    return await asyncio.to_thread(_retry, memory, user, letter_id)
