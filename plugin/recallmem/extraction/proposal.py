"""A fact an agent's model proposes outside extraction (the ``remember`` tool), planned
under extraction's rules. Pure.

A proposal first meets :func:`recallmem.extraction.admission.refusal` (the caller asks,
before anything is embedded: a refused text never reaches the embedder). An admitted one
is planned here as a window's fact would be: a repeat of a stored fact confirms it (a
fuller text replaces the stored text), anything else is added, and the scope's cap
evicts its least valuable facts (:func:`~recallmem.extraction.eviction.add_evictions`).
The plan is applied like a window's (:func:`~recallmem.extraction.write_plan.apply_plan`).

>>> from datetime import UTC, datetime
>>> from recallmem.extraction.admission import Policy
>>> now = datetime(2025, 6, 2, tzinfo=UTC)
>>> stored = Fact(content="Prefers tea", category="preference", user_id="ada")
>>> said = CandidateFact(content="prefers tea", category="preference", confidence=0.9)
>>> plan = plan_proposal(said, user_id="ada", agent_id=None, thread_id="t1",
...     source=Source(at=now), neighbours=[(stored, 0.99)], active=[stored],
...     policy=Policy(), now=now)
>>> [(op.op, op.reason) for op in plan.operations]
[('confirm', 'repeats a stored fact')]
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from recallmem.extraction.admission import Neighbours, Policy, RefusalKind, duplicate_of
from recallmem.extraction.eviction import add_evictions
from recallmem.extraction.parser import CandidateFact
from recallmem.extraction.write_plan import Add, Confirm, Evict, Operation, Plan
from recallmem.facts.near_duplicates import Match
from recallmem.types import PLANNER_SOURCE, Fact, Source

Outcome = Literal["added", "confirmed", "refused"]


class ProposalOutcome(BaseModel):
    """What became of a proposed fact: added, confirmed (it repeated a stored fact,
    which is ``fact``) or refused (``refusal`` names the rule, ``reason`` says why)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    outcome: Outcome
    reason: str
    fact: Fact | None = None
    refusal: RefusalKind | None = None
    evicted: tuple[Fact, ...] = ()


def plan_proposal(
    candidate: CandidateFact,
    *,
    user_id: str,
    agent_id: str | None,
    thread_id: str | None,
    source: Source,
    neighbours: Neighbours,
    active: Sequence[Fact],
    policy: Policy,
    now: datetime,
    new_id: Callable[[], str] = lambda: uuid.uuid4().hex,
) -> Plan:
    """The plan for one admitted proposal. ``neighbours`` are the stored facts nearest to
    it (active, in its scope) with their cosines; ``active`` the scope's active facts."""
    # The model's search keys were vetted by the caller; a fact keyed by the planner says so.
    keys: dict[str, Any] = (
        {"questions": candidate.questions, "keyed_by": PLANNER_SOURCE}
        if candidate.questions
        else {}
    )
    found = duplicate_of(candidate, neighbours, user_id=user_id, threshold=policy.dedup_similarity)
    operation: Operation
    if found is not None:
        stored, match = found
        richer = match is Match.RICHER
        operation = Confirm(
            fact_id=stored.id, confidence=candidate.confidence, source=source,
            content=candidate.content if richer else None, keywords=candidate.keywords,
            **keys, reason="says more than a stored fact" if richer else "repeats a stored fact",
        )  # fmt: skip
    else:
        fact = Fact(
            id=new_id(), content=candidate.content, category=candidate.category,
            confidence=candidate.confidence, user_id=user_id, agent_id=agent_id,
            thread_id=thread_id, sources=(source,), keywords=candidate.keywords,
            created_at=now, updated_at=now, **keys,
        )  # fmt: skip
        operation = Add(fact=fact, reason="new fact")
    plan = Plan(user_id=user_id, agent_id=agent_id, thread_id=thread_id, at=now,
                operations=(operation,))  # fmt: skip
    return add_evictions(plan, active, policy.max_facts_per_scope) if found is None else plan


def outcome_of(plan: Plan, written: Mapping[str, Fact]) -> ProposalOutcome:
    """The outcome of an applied proposal's plan; ``written`` holds its facts as they are."""
    first, *rest = plan.operations
    fact_id = first.fact.id if isinstance(first, Add) else first.fact_id
    evicted = [written[op.fact_id] for op in rest if isinstance(op, Evict) if op.fact_id in written]
    return ProposalOutcome(
        outcome="added" if isinstance(first, Add) else "confirmed",
        reason=first.reason,
        fact=written.get(fact_id),
        evicted=tuple(evicted),
    )
