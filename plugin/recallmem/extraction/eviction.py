"""The cap on a scope's active facts: which facts a plan evicts to stay under it.

Least valuable first (never confirmed, least sure, longest untouched); pinned facts,
corrections and facts the plan already changes are never evicted.
"""

from __future__ import annotations

from collections.abc import Sequence

from recallmem.extraction.plan import Add, Confirm, Evict, Plan
from recallmem.types import Category, Fact


def _value(fact: Fact) -> tuple[int, float, float]:
    # Least valuable first: never confirmed, least sure, longest untouched.
    seen = fact.last_accessed_at or fact.last_confirmed_at or fact.updated_at
    return (fact.confirmations, fact.confidence, seen.timestamp())


def add_evictions(plan: Plan, active: Sequence[Fact], cap: int) -> Plan:
    """``plan`` plus the evictions that keep its scope at ``cap`` active facts.

    ``active`` are the scope's active facts as stored before the plan. Pinned facts,
    corrections and facts the plan already changes are never evicted.
    """
    leaving = set(plan.targets()) - {
        op.fact_id for op in plan.operations if isinstance(op, Confirm)
    }
    remaining = [f for f in active if f.id not in leaving]
    over = len(remaining) + plan.count(Add) - cap
    if over <= 0:
        return plan
    spared = set(plan.targets())
    pool = [
        f
        for f in remaining
        if not f.pinned and f.category is not Category.CORRECTION and f.id not in spared
    ]
    reason = f"the scope holds more than {cap} facts"
    evictions = [Evict(fact_id=f.id, reason=reason) for f in sorted(pool, key=_value)[:over]]
    return plan.model_copy(update={"operations": (*plan.operations, *evictions)})
