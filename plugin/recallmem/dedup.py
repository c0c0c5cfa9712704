"""Is a new fact the same as one we have? Pure rules, measured on the default encoder.

Embedding similarity alone cannot tell "Prefers reports in Chinese" from "Prefers
reports in English" (cosine 0.96 with the USE encoder), while true paraphrases score as
low as 0.6 (docs/benchmarks.md, "dedup"). So a near-duplicate needs both: a cosine at or
above the threshold, and one fact's meaningful words contained in the other's. A new
fact that says strictly more than the old one replaces its text (the old text stays in
history); one that says the same or less confirms it.

>>> classify("Lives in Berlin", "The user lives in Berlin", cosine=0.9, threshold=0.8)
<Match.SAME: 'same'>
>>> classify("Has a cat named Max", "Has a dog named Max", cosine=0.95, threshold=0.8) is None
True
"""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum

from recallmem.text import content_units, normalize
from recallmem.types import Fact, Revision

MAX_SOURCES = 20  # provenance kept per fact; older confirmations only count


class Match(StrEnum):
    """How a new fact relates to an existing one."""

    SAME = "same"  # same meaning, or the new one says less: confirm the old fact
    RICHER = "richer"  # the new one says all the old one did and more: replace the text


def classify(new: str, old: str, *, cosine: float, threshold: float) -> Match | None:
    """Whether ``new`` duplicates ``old``; None when they are different facts."""
    if normalize(new) == normalize(old):
        return Match.SAME
    if cosine < threshold:
        return None
    new_units, old_units = content_units(new), content_units(old)
    if new_units <= old_units:
        return Match.SAME
    if old_units <= new_units:
        return Match.RICHER
    return None


def confirm(old: Fact, new: Fact, now: datetime) -> Fact:
    """The old fact, confirmed again by the new one: counted, dated, confidence raised."""
    return old.model_copy(
        update={
            "confirmations": old.confirmations + 1,
            "last_confirmed_at": now,
            "confidence": round(min(1.0, max(old.confidence, new.confidence) + 0.05), 4),
            "sources": (*old.sources, *new.sources)[-MAX_SOURCES:],
        }
    )


def enrich(old: Fact, new: Fact, now: datetime) -> Fact:
    """The old fact with the new, fuller text; the old text stays in its history."""
    revision = Revision(content=old.content, category=old.category, at=now, reason="enriched")
    return confirm(old, new, now).model_copy(
        update={"content": new.content, "history": (*old.history, revision), "updated_at": now}
    )
