"""A plan of memory operations, and how it changes fact records. Pure.

Hygiene decides (``hygiene.py``); a plan records the decision; :func:`apply_plan` turns
it into the fact records to write, given the records as they are now. Applying is
idempotent: every operation recognises when it was already applied (the plan's
timestamp marks its confirmations), so a plan journaled before a crash can be applied
again after a restart without adding or counting anything twice.

>>> from recallmem.types import Fact
>>> new = Fact(content="Works in the product team", category="identity", user_id="u")
>>> old = Fact(content="Works in the tech desk", category="identity", user_id="u")
>>> plan = Plan(user_id="u", operations=(
...     Add(fact=new.model_copy(update={"supersedes": old.id}), reason="job change"),
...     Supersede(fact_id=old.id, by=new.id, reason="job change")))
>>> [(f.content, f.status.value) for f in apply_plan(plan, {old.id: old})]
[('Works in the product team', 'active'), ('Works in the tech desk', 'superseded')]
>>> apply_plan(plan, {old.id: apply_plan(plan, {old.id: old})[1], new.id: new})
[]
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field

from recallmem.facts.near_duplicates import confirm, enrich
from recallmem.types import Fact, Revision, Source, Status, UtcDatetime, utcnow


class _Op(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    reason: str


class Add(_Op):
    """Store a new fact."""

    op: Literal["add"] = "add"
    fact: Fact


class Confirm(_Op):
    """An existing fact was said again; with ``content``, a fuller text replaces its own."""

    op: Literal["confirm"] = "confirm"
    fact_id: str
    confidence: float = Field(ge=0.0, le=1.0)
    source: Source | None = None
    content: str | None = None
    keywords: tuple[str, ...] = ()
    questions: tuple[str, ...] = ()  # search keys, vetted; kept only by a fact without any
    keyed_by: str | None = None


class Supersede(_Op):
    """An existing fact is replaced (``by`` the new fact's id) or retracted; kept for audit.

    ``on``: when the change takes effect, if still ahead when the plan applies. The old
    fact stays true and active until then, linked to its replacement, with that instant
    as its ``valid_until``: it leaves recall by itself on the day.
    """

    op: Literal["supersede"] = "supersede"
    fact_id: str
    by: str | None = None
    on: UtcDatetime | None = None


class MarkDone(_Op):
    """A todo was finished."""

    op: Literal["done"] = "done"
    fact_id: str


class Evict(_Op):
    """A fact leaves recall to keep its scope under the cap."""

    op: Literal["evict"] = "evict"
    fact_id: str


Operation = Annotated[Add | Confirm | Supersede | MarkDone | Evict, Field(discriminator="op")]


class Dropped(BaseModel):
    """Something the model proposed that will not be stored, and why."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    content: str
    category: str | None = None
    reason: str


class ProfileChange(BaseModel):
    """A profile section rewritten."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    section: str
    summary: str


class Plan(BaseModel):
    """Everything one window changes in one user's memory."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    user_id: str
    agent_id: str | None = None
    thread_id: str | None = None
    at: UtcDatetime = Field(default_factory=utcnow)
    operations: tuple[Operation, ...] = ()
    dropped: tuple[Dropped, ...] = ()
    profile: tuple[ProfileChange, ...] = ()

    def targets(self) -> list[str]:
        """Ids of the existing facts this plan changes."""
        return [op.fact_id for op in self.operations if not isinstance(op, Add)]

    def count(self, kind: type[_Op]) -> int:
        """How many operations of one kind the plan holds."""
        return sum(isinstance(op, kind) for op in self.operations)


def _retire(fact: Fact, status: Status, reason: str, at: UtcDatetime, **extra: object) -> Fact:
    # The text does not change; the revision records why the fact left recall.
    note = Revision(content=fact.content, category=fact.category, at=at, reason=reason)
    return fact.model_copy(
        update={"status": status, "updated_at": at, "history": (*fact.history, note), **extra}
    )


def _end_on(fact: Fact, on: UtcDatetime, op: Supersede, at: UtcDatetime) -> Fact | None:
    end = on if fact.valid_until is None else min(fact.valid_until, on)
    if fact.superseded_by == op.by and fact.valid_until == end:
        return None  # applied already
    note = Revision(content=fact.content, category=fact.category, at=at,
                    reason=f"superseded from {on.isoformat()}: {op.reason}")  # fmt: skip
    return fact.model_copy(update={"valid_until": end, "superseded_by": op.by, "updated_at": at,
                                   "history": (*fact.history, note)})  # fmt: skip


def _apply_one(op: _Op, fact: Fact | None, plan: Plan) -> Fact | None:
    """The record after ``op``, or None when there is nothing (more) to do."""
    at = plan.at
    if isinstance(op, Add):
        return None if fact is not None else op.fact
    if fact is None:
        return None  # the fact was purged since the plan was made: nothing to change
    if isinstance(op, Confirm):
        if fact.last_confirmed_at == at or fact.status is not Status.ACTIVE:
            return None
        probe = fact.model_copy(update={"confidence": op.confidence, "keywords": op.keywords,
                                        "questions": op.questions, "keyed_by": op.keyed_by,
                                        "sources": (op.source,) if op.source else ()})  # fmt: skip
        if op.content and op.content != fact.content:
            return enrich(fact, probe.model_copy(update={"content": op.content}), at)
        return confirm(fact, probe, at)
    if isinstance(op, Supersede):
        if fact.status is Status.SUPERSEDED:
            return None
        if op.on is not None and op.on > at:
            return _end_on(fact, op.on, op, at)
        return _retire(fact, Status.SUPERSEDED, f"superseded: {op.reason}", at, superseded_by=op.by)
    if isinstance(op, MarkDone):
        done = fact.status is Status.DONE
        return None if done else _retire(fact, Status.DONE, f"done: {op.reason}", at)
    if isinstance(op, Evict):
        gone = fact.status is Status.DELETED
        return None if gone else _retire(fact, Status.DELETED, f"evicted: {op.reason}", at)
    raise TypeError(f"unknown operation {op!r}")


def apply_plan(plan: Plan, current: Mapping[str, Fact]) -> list[Fact]:
    """The records to write: ``current`` holds the plan's target facts as stored now."""
    working = dict(current)
    changed: dict[str, Fact] = {}
    for op in plan.operations:
        fact_id = op.fact.id if isinstance(op, Add) else op.fact_id
        existing = working.get(fact_id)
        if existing is not None and existing.user_id != plan.user_id:
            raise ValueError(f"plan for user {plan.user_id!r} targets another user's fact")
        updated = _apply_one(op, existing, plan)
        if updated is not None:
            working[fact_id] = changed[fact_id] = updated
    return list(changed.values())
