"""A change the user has fixed for a day still ahead ("moving to Nanjing on the 3rd"):
the old fact holds until that day, linked to its replacement, then leaves by itself."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

from recallmem.extraction.filter import Utterance
from recallmem.extraction.hygiene import Context, make_plan
from recallmem.extraction.parser import ExtractionResult, coerce_result
from recallmem.extraction.write_plan import Add, Plan, Supersede, apply_plan
from recallmem.facts.decay import Decay
from recallmem.lifecycle.maintenance_plan import apply_maintenance, plan_maintenance
from recallmem.types import Fact, Status

SHANGHAI = ZoneInfo("Asia/Shanghai")
SAID = datetime(2026, 3, 12, 20, tzinfo=SHANGHAI)
MOVE = "下个月 3 号搬去南京"
NEW = "2026-04-03 搬到南京住"


def old_home() -> Fact:
    return Fact(content="住在杭州", category="identity", user_id="u",
                updated_at=SAID - timedelta(days=5))  # fmt: skip


def plan_for(supersede: dict[str, object], now: datetime) -> tuple[Fact, Plan]:
    old = old_home()
    result = coerce_result({"facts": [{"content": NEW, "category": "identity",
                                       "confidence": 0.95, "evidence": MOVE}],
                            "supersede": [supersede]})  # fmt: skip
    window = (Utterance(id="m1", role="user", content=MOVE, said_at=SAID.timestamp()),)
    context = Context(user_id="u", window=window, shown={"F1": old}, timezone=SHANGHAI,
                      said=SAID)  # fmt: skip
    return old, make_plan(result, context, [[]], now=now)


def test_the_parser_reads_from_and_refuses_a_day_it_cannot_read() -> None:
    result = coerce_result({"supersede": [
        {"id": "F1", "replacement": NEW, "from": " 2026-04-03 "},
        {"id": "F2", "replacement": NEW, "from": "next month"},
        {"id": "F3", "replacement": NEW, "from": None},
    ]})  # fmt: skip
    assert [(r.fact_id, r.effective_from) for r in result.supersede] == [
        ("F1", "2026-04-03"),
        ("F3", None),
    ]
    (refused,) = result.rejected
    assert "from 'next month' is not a local date (YYYY-MM-DD)" in refused.reason


def test_a_change_ahead_of_the_window_keeps_the_old_fact_until_its_first_day() -> None:
    old, plan = plan_for({"id": "F1", "reason": "搬家", "replacement": NEW, "from": "2026-04-03"},
                         now=SAID)  # fmt: skip
    add, supersede = plan.operations
    assert isinstance(add, Add) and isinstance(supersede, Supersede)
    assert supersede.on == datetime(2026, 4, 3, tzinfo=SHANGHAI)  # the day begins, local
    (kept,) = apply_plan(Plan(user_id="u", at=SAID, operations=(supersede,)), {old.id: old})
    assert (kept.status, kept.superseded_by) == (Status.ACTIVE, add.fact.id)
    assert kept.valid_until == datetime(2026, 4, 3, tzinfo=SHANGHAI)
    assert kept.history[-1].reason.startswith("superseded from 2026-04-02T16:00:00+00:00: 搬家")
    again = Plan(user_id="u", at=SAID + timedelta(hours=1), operations=(supersede,))
    assert apply_plan(again, {kept.id: kept}) == []  # applied once


def test_the_old_fact_is_superseded_when_its_day_comes() -> None:
    old, plan = plan_for({"id": "F1", "reason": "搬家", "replacement": NEW, "from": "2026-04-03"},
                         now=SAID)  # fmt: skip
    supersede = plan.operations[1]
    (kept,) = apply_plan(Plan(user_id="u", at=SAID, operations=(supersede,)), {old.id: old})
    before = datetime(2026, 4, 2, 12, tzinfo=SHANGHAI)
    assert plan_maintenance([kept], before, Decay(), retention_days=30).operations == ()
    after = datetime(2026, 4, 3, 8, tzinfo=SHANGHAI)
    records, _ = apply_maintenance(
        plan_maintenance([kept], after, Decay(), retention_days=30), {kept.id: kept}
    )
    (gone,) = records
    assert (gone.status, gone.superseded_by) == (Status.SUPERSEDED, kept.superseded_by)


def test_a_day_already_past_when_the_words_were_said_or_when_the_plan_applies_counts_now() -> None:
    _, plan = plan_for({"id": "F1", "replacement": NEW, "from": "2026-03-01"}, now=SAID)
    supersede = plan.operations[1]
    assert isinstance(supersede, Supersede) and supersede.on is None
    # An old transcript, imported long after the move: the old home is simply superseded.
    old, plan = plan_for({"id": "F1", "replacement": NEW, "from": "2026-04-03"},
                         now=datetime(2026, 12, 1, tzinfo=UTC))  # fmt: skip
    assert isinstance(plan.operations[1], Supersede) and plan.operations[1].on is not None
    (written,) = [f for f in apply_plan(plan, {old.id: old}) if f.id == old.id]
    assert written.status is Status.SUPERSEDED and written.valid_until is None


def test_a_retraction_ahead_ends_the_fact_on_its_day() -> None:
    old = Fact(content="Works at Acme", category="identity", user_id="u")
    result = ExtractionResult(facts=(), supersede=coerce_result({"supersede": [
        {"id": "F1", "reason": "leaving at the end of the month", "from": "2026-04-01"}]}).supersede)  # fmt: skip
    window = (Utterance(id="m1", role="user", content="I'm leaving Acme at the end of the month",
                        said_at=SAID.timestamp()),)  # fmt: skip
    plan = make_plan(result, Context(user_id="u", window=window, shown={"F1": old},
                                     timezone=SHANGHAI, said=SAID), [], now=SAID)  # fmt: skip
    (retraction,) = plan.operations
    assert isinstance(retraction, Supersede) and retraction.by is None
    (kept,) = apply_plan(Plan(user_id="u", at=SAID, operations=(retraction,)), {old.id: old})
    assert kept.status is Status.ACTIVE and kept.valid_until == datetime(
        2026, 4, 1, tzinfo=SHANGHAI
    )


def test_an_earlier_end_of_the_old_fact_is_kept() -> None:
    trip = Fact(content="In Tokyo until March 20", category="context", user_id="u",
                valid_until=datetime(2026, 3, 20, tzinfo=UTC))  # fmt: skip
    op = Supersede(fact_id=trip.id, by="x", reason="r", on=datetime(2026, 4, 1, tzinfo=UTC))
    (kept,) = apply_plan(Plan(user_id="u", at=SAID, operations=(op,)), {trip.id: trip})
    assert kept.valid_until == datetime(2026, 3, 20, tzinfo=UTC)
