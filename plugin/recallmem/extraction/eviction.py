"""The cap on a scope's active facts: which facts a plan evicts to stay under it.

Least valuable first (never confirmed, least sure, longest untouched); pinned facts,
corrections and facts the plan already changes are never evicted.

One plan never evicts so many that the scope's earlier facts would be outnumbered by
the plan's own additions: after it, at least as many facts from before it stay active
as it adds. A real window adds a handful of facts and a scope at its cap holds hundreds,
so the rule does not bind in use; it binds when one reply proposes more than the scope
keeps (a malformed or injected reply, or a tiny cap), which would otherwise push the
user's whole memory out in one call. The scope then stays over its cap until later
windows evict, each under the same rule.

>>> from recallmem.types import Fact
>>> old = [Fact(content=f"Real fact {n}", category="identity", user_id="u") for n in range(3)]
>>> flood = Plan(user_id="u", operations=tuple(Add(fact=Fact(content=f"Junk {n}",
...     category="preference", user_id="u"), reason="new fact") for n in range(10)))
>>> add_evictions(flood, old, cap=10) is flood  # 13 > 10, but 3 earlier facts < 10 new
True
"""

from __future__ import annotations

from collections.abc import Sequence

from recallmem.extraction.write_plan import Add, Confirm, Evict, Plan
from recallmem.types import Category, Fact


def _value(fact: Fact) -> tuple[int, float, float]:
    # Least valuable first: never confirmed, least sure, longest untouched.
    seen = fact.last_accessed_at or fact.last_confirmed_at or fact.updated_at
    return (fact.confirmations, fact.confidence, seen.timestamp())


def add_evictions(
    plan: Plan, active: Sequence[Fact], cap: int, *, agent_id: str | None = None
) -> Plan:
    """``plan`` plus the evictions that keep the scope ``agent_id`` (None: the user's
    shared facts) at ``cap`` active facts, as far as the rule above allows.

    ``active`` are the scope's active facts as stored before the plan. Pinned facts,
    corrections and facts the plan already changes are never evicted.
    """
    leaving = set(plan.targets()) - {
        op.fact_id for op in plan.operations if isinstance(op, Confirm)
    }
    remaining = [f for f in active if f.id not in leaving]
    added = sum(1 for op in plan.operations if isinstance(op, Add) and op.fact.agent_id == agent_id)
    # Over the cap, but never below as many earlier facts as the plan adds.
    over = min(len(remaining) + added - cap, len(remaining) - added)
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
