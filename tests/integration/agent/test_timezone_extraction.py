"""The run's timezone reaches extraction: a due date the user says is theirs, not UTC's."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from zoneinfo import ZoneInfo

from recallmem.memory import Memory
from recallmem.testing import FakeChatModel

from .agent_helpers import Run, extraction_reply

SAID = "I have to hand in the grant proposal by 2031-01-01"
DUE = {"content": "Hand in the grant proposal", "category": "todo", "confidence": 0.95,
       "evidence": SAID, "valid_until": "2031-01-01"}  # fmt: skip


def test_the_runs_timezone_resolves_the_due_date_inline(
    make_memory: Callable[..., Memory], run: type[Run]
) -> None:
    memory = make_memory(FakeChatModel(responses=[extraction_reply(DUE)]))
    agent = run(memory, FakeChatModel(responses=["Noted."]), extraction="inline")
    agent.say(SAID, timezone="Asia/Shanghai")
    (todo,) = memory.list(user_id="ada", category="todo")
    assert todo.valid_until == datetime(2031, 1, 1, 16, tzinfo=UTC)  # midnight in Shanghai


def test_the_middlewares_default_zone_travels_with_a_queued_turn(
    make_memory: Callable[..., Memory], run: type[Run]
) -> None:
    memory = make_memory(FakeChatModel(responses=[extraction_reply(DUE)]))
    agent = run(memory, FakeChatModel(responses=["Noted."]),
                timezone=ZoneInfo("America/New_York"))  # fmt: skip
    agent.say(SAID)
    memory.flush(timeout=10)
    (todo,) = memory.list(user_id="ada", category="todo")
    assert todo.valid_until == datetime(2031, 1, 2, 5, tzinfo=UTC)  # midnight in New York
