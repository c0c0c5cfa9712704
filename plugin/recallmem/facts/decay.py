"""Effective confidence: a fact's stated confidence, halved for every half-life it sat idle.

A fact is *alive* when it is written, confirmed, recalled or edited; its effective
confidence at ``now`` is ``confidence * 0.5 ** (idle_days / half_life)``. Pinned facts
never decay. Ranking uses the effective value as the score's ``confidence`` part, and
maintenance fades a fact whose effective value fell below ``fade_below``.

Why these half-lives (``MemoryConfig.decay_half_life_days``, 180 days, times the
category's scale): a fact stated at 0.9 and never said, recalled or edited again falls
under the default floor of 0.3 after ``log2(0.9 / 0.3) = 1.58`` half-lives, so a plain
fact has about nine months, a context fact ("this sprint I am on the billing
migration", 30 days) about seven weeks, and an identity fact (720 days) about three
years. Any recall or confirmation restarts the clock, so a fact in use never fades; one
that is only ever *recalled* once a season stays near full weight.

>>> from datetime import UTC, datetime, timedelta
>>> from recallmem.types import Fact
>>> said = datetime(2026, 1, 1, tzinfo=UTC)
>>> fact = Fact(content="Sprint on billing", category="context", user_id="u",
...             confidence=0.8, created_at=said, updated_at=said)
>>> round(Decay().effective(fact, said + timedelta(days=30)), 3)
0.4
>>> Decay().effective(fact.model_copy(update={"pinned": True}), said + timedelta(days=900))
0.8
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from types import MappingProxyType

import numpy as np

from recallmem.config import MemoryConfig
from recallmem.types import Category, Fact

_DAY_SECONDS = 86400.0

# How much slower (>1) or faster (<1) each category ages than the configured half-life.
# Who the user is and what they prefer changes over years; what they are doing this
# week, in weeks. A todo's end is its valid_until, not decay; an undated one ages fast.
CATEGORY_SCALE: Mapping[Category, float] = MappingProxyType(
    {
        Category.IDENTITY: 4.0,
        Category.PREFERENCE: 2.0,
        Category.KNOWLEDGE: 2.0,
        Category.CORRECTION: 2.0,
        Category.BEHAVIOR: 1.0,
        Category.GOAL: 1.0,
        Category.DECISION: 1.0,
        Category.TODO: 0.5,
        Category.CONTEXT: 1.0 / 6.0,
    }
)


def last_alive(fact: Fact) -> datetime:
    """The last time the fact was written, confirmed, recalled or edited."""
    times = [fact.created_at, fact.updated_at, fact.last_confirmed_at, fact.last_accessed_at]
    return max(t for t in times if t is not None)


@dataclass(frozen=True)
class Decay:
    """Half-lives by category and the floor under which a fact fades."""

    half_life_days: float = MemoryConfig.model_fields["decay_half_life_days"].default
    fade_below: float = MemoryConfig.model_fields["fade_below"].default
    scale: Mapping[Category, float] = field(default_factory=lambda: CATEGORY_SCALE)

    @classmethod
    def from_config(cls, config: MemoryConfig) -> Decay:
        """The decay a memory's settings ask for."""
        return cls(half_life_days=config.decay_half_life_days, fade_below=config.fade_below)

    def half_life(self, category: Category) -> float:
        """Days for an idle fact of this category to lose half its confidence."""
        return self.half_life_days * self.scale.get(category, 1.0)

    def effective(self, fact: Fact, now: datetime) -> float:
        """The fact's confidence at ``now``, after decay (pinned facts keep theirs)."""
        if fact.pinned:
            return fact.confidence
        idle = max(0.0, (now - last_alive(fact)).total_seconds() / _DAY_SECONDS)
        return float(fact.confidence * 0.5 ** (idle / self.half_life(fact.category)))

    def fades(self, fact: Fact, now: datetime) -> bool:
        """Whether the fact decayed below the floor (never for a pinned fact)."""
        return not fact.pinned and self.effective(fact, now) < self.fade_below

    def factors(
        self, categories: np.ndarray, pinned: np.ndarray, alive: np.ndarray, now: float
    ) -> np.ndarray:
        """The decay multiplier of many facts at once (``alive`` and ``now`` in epoch s)."""
        kinds, which = np.unique(categories, return_inverse=True)  # a few kinds, many facts
        half = np.array([self.half_life(Category(c)) for c in kinds], np.float64)[which]
        idle = np.maximum(0.0, now - alive) / _DAY_SECONDS
        return np.where(pinned, 1.0, 0.5 ** (idle / half))
