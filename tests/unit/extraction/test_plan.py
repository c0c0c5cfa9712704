"""Applying a plan is idempotent, scoped to its user, and survives a JSON round trip."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from recallmem.extraction.report import Journal
from recallmem.extraction.write_plan import (
    Add,
    Confirm,
    Evict,
    MarkDone,
    Plan,
    Supersede,
    apply_plan,
)
from recallmem.types import Fact, Source, Status

AT = datetime(2025, 3, 1, tzinfo=UTC)


def fact(content: str, category: str = "identity", user: str = "u") -> Fact:
    return Fact(content=content, category=category, user_id=user, updated_at=AT - timedelta(days=1))


def test_every_operation_changes_its_record_once() -> None:
    old, todo, weak, seen = (
        fact("Lives in Munich"),
        fact("Renew passport", "todo"),
        fact("Weak"),
        fact("Writes Go", "knowledge"),
    )
    new = fact("Lives in Berlin").model_copy(update={"supersedes": old.id})
    plan = Plan(user_id="u", at=AT, operations=(
        Add(fact=new, reason="new"),
        Supersede(fact_id=old.id, by=new.id, reason="moved"),
        MarkDone(fact_id=todo.id, reason="renewed"),
        Evict(fact_id=weak.id, reason="cap"),
        Confirm(fact_id=seen.id, confidence=0.95, source=Source(quote="I write Go"), content="Writes Go daily", reason="richer"),
    ))  # fmt: skip
    current = {f.id: f for f in (old, todo, weak, seen)}
    written = {f.id: f for f in apply_plan(plan, current)}
    assert written[new.id] == new
    assert (written[old.id].status, written[old.id].superseded_by) == (Status.SUPERSEDED, new.id)
    assert written[old.id].history[-1].reason == "superseded: moved"
    assert written[todo.id].status is Status.DONE and written[weak.id].status is Status.DELETED
    confirmed = written[seen.id]
    assert (confirmed.content, confirmed.confirmations, confirmed.last_confirmed_at) == (
        "Writes Go daily",
        1,
        AT,
    )
    assert confirmed.history[-1].content == "Writes Go"
    assert apply_plan(plan, written) == []  # applied again: nothing changes


def test_a_journal_round_trips_through_json() -> None:
    plan = Plan(user_id="u", at=AT, operations=(Add(fact=fact("Lives in Berlin"), reason="new"),
                                                Supersede(fact_id="x", reason="moved")))  # fmt: skip
    journal = Journal(plan=plan, model="m", prompt="extract@1", messages=3)
    assert Journal.model_validate_json(journal.model_dump_json()) == journal


def test_a_plan_cannot_touch_another_users_fact() -> None:
    stranger = fact("Lives in Oslo", user="v")
    plan = Plan(user_id="u", at=AT, operations=(Evict(fact_id=stranger.id, reason="cap"),))
    with pytest.raises(ValueError, match="another user"):
        apply_plan(plan, {stranger.id: stranger})


def test_targets_purged_since_the_plan_are_skipped() -> None:
    plan = Plan(user_id="u", at=AT, operations=(MarkDone(fact_id="gone", reason="x"),))
    assert apply_plan(plan, {}) == []
