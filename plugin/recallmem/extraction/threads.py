"""The queue's vocabulary: a kept message, a conversation thread, a claimed window, timing.

Shared by the filter (which produces utterances), the queue (which stores them per
thread and hands out windows) and the stages after it.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from recallmem.config import MemoryConfig

Role = Literal["user", "assistant"]


class Utterance(BaseModel):
    """One kept message: who said it and what, with a stable id."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    id: str = Field(min_length=1)
    role: Role
    content: str = Field(min_length=1)


@dataclass(frozen=True)
class Timing:
    """When windows are due and how failures are retried."""

    debounce: float = 30.0
    max_wait: float = 120.0
    flush_count: int = 20
    max_attempts: int = 5
    retry_base: float = 5.0
    retry_max: float = 600.0
    lease: float = 600.0

    @classmethod
    def from_config(cls, config: MemoryConfig) -> Timing:
        """The timing a configuration asks for."""
        return cls(
            debounce=config.debounce_seconds,
            max_wait=config.max_wait_seconds,
            flush_count=config.flush_message_count,
            max_attempts=config.max_attempts,
        )

    @property
    def window_cap(self) -> int:
        """Most messages sent in one model call."""
        return max(2 * self.flush_count, 10)

    def due_at(self, row: Any, *, urgent: bool, now: float) -> float:
        """When a thread's window is due (a ``threads`` row; the SQL in ``claim`` agrees)."""
        pending = row["next_seq"] - 1 - row["watermark"]
        if row["journal"] is not None or urgent or pending >= self.flush_count:
            due = now
        else:
            due = min(
                row["last_observed_at"] + self.debounce, row["first_pending_at"] + self.max_wait
            )
        return float(max(due, row["next_attempt_at"] or 0.0))

    def backoff(self, attempts: int) -> float:
        """Seconds to wait before attempt ``attempts + 1``."""
        return float(min(self.retry_max, self.retry_base * 2 ** max(attempts - 1, 0)))


@dataclass(frozen=True)
class ThreadScope:
    """One conversation thread of one user (and agent)."""

    user_id: str
    thread_id: str
    agent_id: str | None = None

    @property
    def key(self) -> str:
        """The thread's key in the queue."""
        return json.dumps([self.user_id, self.agent_id, self.thread_id])


@dataclass(frozen=True)
class Window:
    """A claimed window: messages ``(lo, hi]`` of a thread, and its journal if any."""

    scope: ThreadScope
    lo: int
    hi: int
    messages: tuple[Utterance, ...]
    attempts: int
    journal: str | None
    owner: str
