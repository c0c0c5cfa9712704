"""The memory block and time-bound facts: a todo due soon is surfaced with its due date in
the user's zone; an expired fact is never injected."""

from __future__ import annotations

import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta

from recallmem.memory import Memory
from recallmem.testing import FakeChatModel

from .agent_helpers import Run


def test_a_todo_due_soon_is_in_the_block_and_an_expired_fact_is_not(
    make_memory: Callable[..., Memory], run: type[Run]
) -> None:
    memory = make_memory()
    due = (datetime.now(UTC) + timedelta(days=1)).replace(hour=9, minute=30, second=0,
                                                           microsecond=0)  # fmt: skip
    memory.remember("Send the grant proposal", user_id="ada", category="todo", valid_until=due)
    memory.remember("Renew the passport", user_id="ada", category="todo",
                    valid_until=datetime.now(UTC) + timedelta(days=30))  # fmt: skip
    memory.remember("Is in Tokyo for the week", user_id="ada", category="context",
                    valid_until=datetime.now(UTC) - timedelta(hours=1))  # fmt: skip
    model = FakeChatModel(responses=["ok"])
    run(memory, model).say("Plan my week in Tokyo: proposal, passport", timezone="Asia/Tokyo")
    text = model.requests[0][0].text
    local = due.astimezone(UTC) + timedelta(hours=9)
    assert "Due soon (bring it up if it fits):" in text
    assert f"- [todo] Send the grant proposal (due {local:%Y-%m-%d %H:%M})" in text
    assert "Renew the passport (due" not in text  # a month away: not due soon
    assert "Is in Tokyo for the week" not in text


def test_without_a_due_todo_the_block_has_no_due_section(
    make_memory: Callable[..., Memory], run: type[Run]
) -> None:
    memory = make_memory()
    memory.remember("Writes TypeScript", user_id="ada", category="knowledge")
    model = FakeChatModel(responses=["ok"])
    run(memory, model).say("Write the TypeScript report")
    assert "Due soon" not in model.requests[0][0].text


def test_a_kept_block_is_rebuilt_when_a_fact_in_it_expires(
    make_memory: Callable[..., Memory], run: type[Run]
) -> None:
    memory = make_memory()
    memory.remember("Is in Tokyo until tonight", user_id="ada", category="context",
                    valid_until=datetime.now(UTC) + timedelta(seconds=1.5))  # fmt: skip
    memory.remember("Writes TypeScript", user_id="ada", category="knowledge")
    model = FakeChatModel(responses=["ok"], cycle=True)
    agent = run(memory, model)
    agent.say("Where am I working from, Tokyo? TypeScript?")
    assert "Is in Tokyo until tonight" in model.requests[-1][0].text
    time.sleep(1.6)
    agent.say("And tomorrow?")  # same thread, same day, same revision
    first = model.requests[-1][0].text
    assert "Is in Tokyo until tonight" not in first and "Writes TypeScript" in first
