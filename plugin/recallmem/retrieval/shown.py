"""What reached a model: the record of one retrieval, the facts it showed and the ones
it left out, and why.

A :class:`RetrievalRecord` is written for every retrieval whose facts went before a
model: the memory block at the start of a thread (trigger ``block``), the note a later
turn gets (``turn``), a recall forced by a cue or a hedge (``cue``, ``hedge``), a
``recall`` tool answer (``tool``) and the note of turns not extracted yet (``recent``).
It names facts by id only, never by their text (``Memory.retrievals`` is read with the
facts as they are now). Records are kept by
:class:`~recallmem.persistence.retrieval_records.RetrievalRecords`.

>>> record = RetrievalRecord(user_id="ada", thread_id="t1", turn_id="m1", trigger="tool",
...     query="report language", shown=(ShownFact(fact_id="f1", role="recalled", score=0.8),))
>>> [(s.fact_id, s.role) for s in record.shown], record.trigger
([('f1', 'recalled')], 'tool')
"""

from __future__ import annotations

import uuid
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from recallmem.errors import RecallmemError
from recallmem.limits import MAX_QUERY_CHARS, check_user_id
from recallmem.types import ScoreParts, UtcDatetime, utcnow

Trigger = Literal["block", "turn", "cue", "hedge", "tool", "recent"]
Role = Literal["core", "relevant", "correction", "due", "recalled", "recent"]
DropReason = Literal["budget", "floor", "visible", "limit", "expired", "scope"]


class ShownFact(BaseModel):
    """A fact that reached the model, in what role, with its score if it was ranked."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    fact_id: str = Field(min_length=1)
    role: Role
    score: float | None = None
    parts: ScoreParts | None = None


class DroppedFact(BaseModel):
    """A fact considered but kept from the model, and why: no room left (``budget``),
    scored under the recall floor (``floor``), already in the thread (``visible``), past
    the count asked for (``limit``), expired, or out of the run's scope."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    fact_id: str = Field(min_length=1)
    reason: DropReason
    score: float | None = None


class RetrievalRecord(BaseModel):
    """One retrieval that reached a model: who, where, why, and which facts.

    ``turn_id`` is the id of the user message of the turn; ``query`` what was searched
    for (cut to ``MAX_QUERY_CHARS``); ``tokens`` what the injected text cost.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    id: str = Field(default_factory=lambda: uuid.uuid4().hex)
    at: UtcDatetime = Field(default_factory=utcnow)
    user_id: str
    agent_id: str | None = None
    thread_id: str | None = None
    turn_id: str | None = None
    trigger: Trigger
    query: str = ""
    shown: tuple[ShownFact, ...] = ()
    dropped: tuple[DroppedFact, ...] = ()
    tokens: int | None = Field(default=None, ge=0)

    @field_validator("user_id")
    @classmethod
    def _a_user_id(cls, value: str) -> str:
        try:
            return check_user_id(value)
        except RecallmemError as exc:  # pydantic reports a ValueError as a field error
            raise ValueError(str(exc)) from None

    @field_validator("query", mode="before")
    @classmethod
    def _bounded(cls, value: Any) -> Any:
        return value[:MAX_QUERY_CHARS] if isinstance(value, str) else value

    def fact_ids(self) -> tuple[str, ...]:
        """The ids of the facts shown, in order."""
        return tuple(s.fact_id for s in self.shown)

    def names(self) -> set[str]:
        """The ids of every fact the record names, shown or dropped."""
        return {s.fact_id for s in self.shown} | {d.fact_id for d in self.dropped}
