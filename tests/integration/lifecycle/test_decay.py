"""Decay on real Chroma: the confidence part decays, pinned facts never, faded facts leave
recall, come back when restored, and are purged without a byte left on disk."""

from __future__ import annotations

import os
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from recallmem import Fact, Memory, Status
from recallmem.facts.decay import CATEGORY_SCALE
from recallmem.types import Category

HALF_LIFE = 180.0  # MemoryConfig's default decay_half_life_days


def said(memory: Memory, content: str, category: str, days_ago: float, **extra: object) -> Fact:
    at = datetime.now(UTC) - timedelta(days=days_ago)
    fact = Fact(content=content, category=category, user_id="ada", confidence=0.9,
                created_at=at, updated_at=at, **extra)  # type: ignore[arg-type]  # fmt: skip
    memory.put([fact])
    return fact


def confidence_part(memory: Memory, query: str) -> float:
    (hit,) = memory.recall(query, user_id="ada", k=1)
    return hit.parts.confidence


def test_the_confidence_part_is_the_decayed_confidence(memory: Memory) -> None:
    said(memory, "Prefers long reports", "preference", days_ago=HALF_LIFE)
    expected = 0.9 * 0.5 ** (1 / CATEGORY_SCALE[Category.PREFERENCE])
    assert confidence_part(memory, "Prefers long reports") == pytest.approx(expected, abs=1e-3)


def test_context_ages_faster_than_identity_and_pinned_not_at_all(memory: Memory) -> None:
    said(memory, "Sprint on the billing migration", "context", days_ago=60)
    said(memory, "Works as a data engineer", "identity", days_ago=60)
    said(memory, "Allergic to peanuts", "context", days_ago=60, pinned=True)
    context = confidence_part(memory, "Sprint on the billing migration")
    identity = confidence_part(memory, "Works as a data engineer")
    assert context == pytest.approx(0.9 * 0.5 ** (60 / 30), abs=1e-3)
    assert identity == pytest.approx(0.9 * 0.5 ** (60 / 720), abs=1e-3)
    assert confidence_part(memory, "Allergic to peanuts") == 0.9


def test_a_recall_restarts_the_clock(memory: Memory) -> None:
    said(memory, "Reviews pull requests on Fridays", "behavior", days_ago=HALF_LIFE)
    assert confidence_part(memory, "Reviews pull requests on Fridays") == pytest.approx(0.45, 1e-2)
    assert confidence_part(memory, "Reviews pull requests on Fridays") == pytest.approx(0.9, 1e-3)


def test_a_faded_fact_leaves_recall_is_listed_and_can_be_restored(memory: Memory) -> None:
    stale = said(memory, "Sprint on the billing migration", "context", days_ago=60)
    pinned = said(memory, "Allergic to peanuts", "context", days_ago=900, pinned=True)
    fresh = said(memory, "Sprint on the search rewrite", "context", days_ago=1)
    report = memory.maintain(user_id="ada")
    assert report.faded == (stale.id,) and report.counts()["faded"] == 1
    assert memory.get(stale.id).status is Status.FADED
    assert memory.get(pinned.id).status is Status.ACTIVE
    recalled = {h.fact.id for h in memory.recall("sprint billing migration", user_id="ada")}
    assert stale.id not in recalled and fresh.id in recalled
    assert [f.id for f in memory.list(user_id="ada", status="faded")] == [stale.id]
    assert "faded: effective confidence" in (memory.get(stale.id).history[-1].reason or "")

    memory.update(stale.id, status="active")  # restoring is an edit: the clock restarts
    assert memory.maintain(user_id="ada").faded == ()
    assert stale.id in {h.fact.id for h in memory.recall("billing migration", user_id="ada")}


def test_a_fact_faded_past_retention_is_purged_leaving_no_bytes(home: Path, memory: Memory) -> None:
    text = "Sprint on the Quorvath-77 migration"
    stale = said(memory, text, "context", days_ago=60)
    kept = said(memory, "Works as a data engineer", "identity", days_ago=1)
    faded_at = datetime.now(UTC)
    assert memory.maintain(now=faded_at).faded == (stale.id,)
    later = faded_at + timedelta(days=89)  # the clock moved on: a simulated one
    assert memory.maintain(now=later, simulated_clock=True).purged == ()
    report = memory.maintain(now=faded_at + timedelta(days=91), simulated_clock=True)
    assert report.purged == (stale.id,)
    assert [f.id for f in memory.list(user_id="ada", status=None)] == [kept.id]
    holding = [
        str(Path(root, name))
        for root, _, names in os.walk(home)
        for name in names
        if text.encode() in Path(root, name).read_bytes()
    ]
    assert holding == []
