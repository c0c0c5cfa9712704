"""A maintenance plan, computed purely from a user's facts and ``now``, and how it applies.

Planning reads nothing but its arguments; applying turns the plan into the records to
write and the ids to purge, given the facts as they are *then*. Like an extraction
plan (``extraction/plan.py``), it is journaled before it is applied and applying it is
idempotent: each operation checks the fact is still in the state it was planned for
(still active and past its ``valid_until``; still idle since the plan; still faded), so
a plan replayed after a crash, or applied after the user restored a fact, changes
nothing it should not.

>>> from datetime import UTC, datetime, timedelta
>>> from recallmem.types import Fact
>>> now = datetime(2026, 6, 1, tzinfo=UTC)
>>> trip = Fact(content="Trip to Tokyo", category="context", user_id="u",
...             valid_until=now - timedelta(hours=1), created_at=now, updated_at=now)
>>> plan = plan_maintenance([trip], now, Decay(), retention_days=90)
>>> [op.op for op in plan.operations]
['expire']
>>> records, purge = apply_maintenance(plan, {trip.id: trip})
>>> records[0].status.value, apply_maintenance(plan, {trip.id: records[0]})
('expired', ([], []))
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import timedelta
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field

from recallmem.facts.decay import Decay, last_alive
from recallmem.facts.expiry import is_expired
from recallmem.types import Fact, Revision, Status, UtcDatetime


class _Op(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    fact_id: str


class Expire(_Op):
    """An active fact passed its ``valid_until``: it becomes ``expired``, kept for audit."""

    op: Literal["expire"] = "expire"


class Fade(_Op):
    """An unpinned fact decayed below the floor: it becomes ``faded``, restorable."""

    op: Literal["fade"] = "fade"
    effective: float = Field(ge=0.0, le=1.0, description="Its decayed confidence then.")


class Purge(_Op):
    """A fact faded longer than the retention period: erased, vectors and all."""

    op: Literal["purge"] = "purge"


Operation = Annotated[Expire | Fade | Purge, Field(discriminator="op")]


class MaintenancePlan(BaseModel):
    """Everything one maintenance run changes in one user's memory, at one instant."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    user_id: str
    at: UtcDatetime
    operations: tuple[Operation, ...] = ()

    def ids(self, kind: type[_Op]) -> list[str]:
        """The ids of the facts an operation kind targets."""
        return [op.fact_id for op in self.operations if isinstance(op, kind)]


def _planned(fact: Fact, now: UtcDatetime, decay: Decay, cutoff: UtcDatetime) -> _Op | None:
    if fact.status is Status.ACTIVE and is_expired(fact, now):
        return Expire(fact_id=fact.id)
    if fact.status is Status.ACTIVE and decay.fades(fact, now):
        return Fade(fact_id=fact.id, effective=round(decay.effective(fact, now), 4))
    if fact.status is Status.FADED and fact.updated_at <= cutoff:
        return Purge(fact_id=fact.id)
    return None


def plan_maintenance(
    facts: Iterable[Fact], now: UtcDatetime, decay: Decay, *, retention_days: float
) -> MaintenancePlan:
    """What maintenance at ``now`` does to these facts (all of one user's). Pure."""
    facts = list(facts)
    users = {f.user_id for f in facts}
    if len(users) > 1:
        raise ValueError("a maintenance plan covers one user's facts")
    cutoff = now - timedelta(days=retention_days)
    ops = [op for f in facts if (op := _planned(f, now, decay, cutoff)) is not None]
    return MaintenancePlan(user_id=users.pop() if users else "", at=now, operations=tuple(ops))


def _retire(fact: Fact, status: Status, reason: str, at: UtcDatetime) -> Fact:
    note = Revision(content=fact.content, category=fact.category, at=at, reason=reason)
    return fact.model_copy(
        update={"status": status, "updated_at": at, "history": (*fact.history, note)}
    )


def _still(op: _Op, fact: Fact, at: UtcDatetime) -> bool:
    """Whether the fact is still in the state the operation was planned for."""
    if isinstance(op, Expire):
        return fact.status is Status.ACTIVE and is_expired(fact, at)
    if isinstance(op, Fade):
        # Confirmed, recalled, edited or pinned since: it is alive again.
        return fact.status is Status.ACTIVE and not fact.pinned and last_alive(fact) <= at
    return fact.status is Status.FADED and fact.updated_at < at


def apply_maintenance(
    plan: MaintenancePlan, current: Mapping[str, Fact]
) -> tuple[list[Fact], list[str]]:
    """The records to write and the ids to purge; ``current`` holds the facts as stored now."""
    records: list[Fact] = []
    purge: list[str] = []
    for op in plan.operations:
        fact = current.get(op.fact_id)
        if fact is None or not _still(op, fact, plan.at):
            continue  # purged, restored or changed since the plan: nothing to do
        if fact.user_id != plan.user_id:
            raise ValueError(f"plan for user {plan.user_id!r} targets another user's fact")
        if isinstance(op, Expire):
            until = fact.valid_until.isoformat() if fact.valid_until else "?"
            # Linked to a replacement: a change that was still ahead has taken effect.
            status, why = ((Status.SUPERSEDED, f"superseded from {until}") if fact.superseded_by
                           else (Status.EXPIRED, f"expired: valid until {until}"))  # fmt: skip
            records.append(_retire(fact, status, why, plan.at))
        elif isinstance(op, Fade):
            reason = f"faded: effective confidence {op.effective} below the floor"
            records.append(_retire(fact, Status.FADED, reason, plan.at))
        else:
            purge.append(fact.id)
    return records, purge
