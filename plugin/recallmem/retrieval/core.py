"""The core of a user's memory: the few facts a good assistant never forgets, whatever the
conversation is about. Pure.

A thread that opens with "hi" gives relevance nothing to work with, yet the assistant
should still know who the user is and how they want to be answered. The core is chosen
from the user's active facts without a query: pinned facts first (the user or an
operator marked them), then identity, then standing preferences, then habits; within a
kind, the ones the user stated most surely and confirmed most often. Corrections and
todos falling due have sections of their own in the block, so they are not core.
How many facts the core holds was decided by measurement (docs/decisions/0050).

>>> from recallmem.types import Fact
>>> facts = [Fact(content=c, category=k, user_id="u", confidence=p) for c, k, p in [
...     ("Likes jazz", "preference", 0.8), ("Works as a nurse", "identity", 0.95),
...     ("Owns a bike", "context", 0.9), ("Prefers short answers", "preference", 0.95)]]
>>> [f.content for f in core_facts(facts, limit=3)]
['Works as a nurse', 'Prefers short answers', 'Likes jazz']
"""

from __future__ import annotations

from collections.abc import Sequence

from recallmem.types import Category, Fact, Status

# Kinds that describe the user whatever the topic, most telling first.
_KINDS = (
    Category.IDENTITY,
    Category.PREFERENCE,
    Category.BEHAVIOR,
    Category.CONTEXT,
    Category.GOAL,
    Category.KNOWLEDGE,
    Category.DECISION,
)
_CONFIRMATIONS_COUNTED = 5  # beyond a few confirmations, more says nothing new


def _rank(fact: Fact) -> tuple[int, int, float, float, str]:
    kind = _KINDS.index(fact.category) if fact.category in _KINDS else len(_KINDS)
    strength = fact.confidence + 0.05 * min(fact.confirmations, _CONFIRMATIONS_COUNTED)
    seen = (fact.last_confirmed_at or fact.updated_at).timestamp()
    # Pinned first; then by kind; then the surest; then the most recently said; the id
    # last, so the same facts always give the same core (the block stays byte-stable).
    return (0 if fact.pinned else 1, kind, -strength, -seen, fact.id)


def core_facts(facts: Sequence[Fact], *, limit: int) -> list[Fact]:
    """At most ``limit`` core facts among ``facts`` (the caller passes the facts in scope,
    unexpired), most important first."""
    if limit <= 0:
        return []
    candidates = [
        f
        for f in facts
        if f.status is Status.ACTIVE
        and f.category not in (Category.CORRECTION, Category.TODO)
        and (f.pinned or f.category in _KINDS)
    ]
    return sorted(candidates, key=_rank)[:limit]


__all__ = ["core_facts"]
