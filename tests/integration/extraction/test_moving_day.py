"""A move fixed for a day still ahead, end to end on real Chroma: until that day the old
home is still recalled, linked to the new one; from that day maintenance retires it.

The fake model replies what the prompt asks of a model for such a change (a supersede
with "from"); parsing, hygiene, storage, recall and maintenance run for real.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from conftest import MemoryFactory, cite, fact, reply
from langchain_core.messages import BaseMessage
from recallmem.types import Status


def test_the_old_home_holds_until_the_moving_day(make_memory: MemoryFactory) -> None:
    said = datetime.now(UTC).replace(microsecond=0) - timedelta(minutes=5)
    moving_day = (said + timedelta(days=30)).date().isoformat()
    move = f"I'm moving to Leeds on {moving_day}, the lease is signed"
    new = f"Moves to Leeds on {moving_day}"

    def day_two(messages: list[BaseMessage]) -> str:
        return reply(fact(new, "identity", move), supersede=[
            {"id": cite(messages, "Lives in York"), "reason": "moving", "replacement": new,
             "from": moving_day}])  # fmt: skip

    memory, _ = make_memory([reply(fact("Lives in York", "identity", "I live in York")),
                             day_two])  # fmt: skip
    for text, day in (("I live in York", said - timedelta(days=2)), (move, said)):
        memory.observe([{"role": "user", "content": text, "said_at": day.isoformat()}],
                       user_id="ann", thread_id=day.date().isoformat())  # fmt: skip
    reports = memory.flush()

    (superseded,) = reports[-1].superseded
    old = memory.get(superseded.fact.id, user_id="ann")
    assert old is not None and old.status is Status.ACTIVE
    assert old.superseded_by == reports[-1].added[0].fact.id
    assert old.valid_until == datetime.fromisoformat(moving_day).replace(tzinfo=UTC)
    recalled = [h.fact.content for h in memory.recall("where do I live", user_id="ann", k=5)]
    assert "Lives in York" in recalled and new in recalled

    memory.maintain(now=old.valid_until + timedelta(hours=1), user_id="ann", simulated_clock=True)
    after = memory.get(old.id, user_id="ann")
    assert after is not None and after.status is Status.SUPERSEDED
    assert "Lives in York" not in [h.fact.content for h in
                                   memory.recall("where do I live", user_id="ann", k=5)]  # fmt: skip
