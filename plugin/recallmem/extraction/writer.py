"""Applying a journaled plan to the memory, and the part of Memory the pipeline uses.

The I/O shell around :func:`recallmem.extraction.plan.apply_plan`: read the plan's
target facts as they are now, compute the new records, write them in one ``put``,
rewrite the profile sections, and report. Safe to run twice for the same journal.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from recallmem.errors import FactNotFoundError
from recallmem.extraction.plan import Add, Plan, apply_plan
from recallmem.extraction.report import ExtractionReport, Journal, build_report
from recallmem.types import Fact, Profile, ProfileSection, ScoredFact, Status


class MemoryPort(Protocol):
    """What the pipeline needs from :class:`recallmem.Memory`."""

    def nearest(
        self, texts: Sequence[str], *, user_id: str, agent_id: str | None = None, k: int = 5
    ) -> Sequence[Sequence[ScoredFact]]: ...

    def get(self, fact_id: str, *, user_id: str | None = None) -> Fact: ...

    def put(self, facts: Sequence[Fact]) -> None: ...

    def get_profile(self, *, user_id: str, agent_id: str | None = None) -> Profile: ...

    def set_profile(self, profile: Profile) -> Profile: ...

    def list(
        self,
        *,
        user_id: str,
        agent_id: str | None = None,
        status: str | Status | None = Status.ACTIVE,
        limit: int = 50,
        offset: int = 0,
    ) -> Sequence[Fact]: ...


def write_journal(
    memory: MemoryPort, journal: Journal, *, thread_id: str, replayed: bool
) -> ExtractionReport:
    """Apply a journaled plan to the store (idempotent) and report what it did."""
    plan = journal.plan
    ids = [*plan.targets(), *(op.fact.id for op in plan.operations if isinstance(op, Add))]
    current: dict[str, Fact] = {}
    for fact_id in dict.fromkeys(ids):
        try:
            current[fact_id] = memory.get(fact_id, user_id=plan.user_id)
        except FactNotFoundError:
            continue  # a new fact not written yet, or a target purged since
    records = apply_plan(plan, current)
    if records:
        memory.put(records)
    if plan.profile:
        _write_profile(memory, plan)
    written = {**current, **{r.id: r for r in records}}
    return build_report(journal, written, thread_id=thread_id, replayed=replayed)


def _write_profile(memory: MemoryPort, plan: Plan) -> None:
    profile = memory.get_profile(user_id=plan.user_id, agent_id=plan.agent_id)
    updates = {
        c.section: ProfileSection(summary=c.summary, updated_at=plan.at) for c in plan.profile
    }
    changed = {s: v for s, v in updates.items() if getattr(profile, s).summary != v.summary}
    if changed:
        memory.set_profile(profile.model_copy(update=changed))
