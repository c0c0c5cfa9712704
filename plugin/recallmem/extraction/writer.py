"""Applying a journaled plan to the store, through the pipeline's port.

The I/O shell around :func:`recallmem.extraction.write_plan.apply_plan`: read the plan's
target facts as they are now, compute the new records, write them in one ``put``,
rewrite the profile sections, and report. Safe to run twice for the same journal.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from recallmem.extraction.report import ExtractionReport, Journal, build_report
from recallmem.extraction.write_plan import Add, Plan, apply_plan
from recallmem.types import ProfileSection

if TYPE_CHECKING:
    from recallmem.persistence.repository import FactRepository


def write_journal(
    facts: FactRepository, journal: Journal, *, thread_id: str, replayed: bool
) -> ExtractionReport:
    """Apply a journaled plan to the store (idempotent) and report what it did."""
    plan = journal.plan
    ids = [*plan.targets(), *(op.fact.id for op in plan.operations if isinstance(op, Add))]
    # Absent ids: a new fact not written yet, or a target purged since.
    current = facts.current(ids, user_id=plan.user_id)
    records = apply_plan(plan, current)
    if records:
        facts.put(records)
    if plan.profile:
        _write_profile(facts, plan)
    written = {**current, **{r.id: r for r in records}}
    return build_report(journal, written, thread_id=thread_id, replayed=replayed)


def _write_profile(facts: FactRepository, plan: Plan) -> None:
    # Sections describe the user, shared by every agent (an agent's own profile is set by
    # hand, Memory.set_profile): learned in one agent's run, they reach all of them.
    profile = facts.profile(user_id=plan.user_id, agent_id=None)
    updates = {
        c.section: ProfileSection(summary=c.summary, updated_at=plan.at) for c in plan.profile
    }
    changed = {s: v for s, v in updates.items() if getattr(profile, s).summary != v.summary}
    if changed:
        facts.save_profile(profile.model_copy(update=changed))
