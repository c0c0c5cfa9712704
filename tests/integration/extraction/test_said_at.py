"""When a message was said: old transcripts are dated from their own days, not today's.

Real queue, hygiene and Chroma; the fake model replies what a careful model would for
the "Today" it is shown, so these check what the product shows and stores: the prompt's
"Today" (date and weekday) is the day the words were said, a window never spans two
days, the stored facts shown are those that held then, and the quote's source time is
when it was said.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest
from conftest import MemoryFactory, fact, reply
from langchain_core.messages import BaseMessage, HumanMessage
from recallmem.errors import InvalidInputError

SHANGHAI = ZoneInfo("Asia/Shanghai")
PLAN_DUE = "组长让我下周五之前交一份详情页性能优化方案"  # said on Tuesday 2026-03-10


def today_line(messages: list[BaseMessage]) -> str:
    (line,) = [x for x in messages[-1].text.splitlines() if x.startswith("Today: ")]
    return line.removeprefix("Today: ")


def conversation_lines(messages: list[BaseMessage]) -> list[str]:
    return [x for x in messages[-1].text.splitlines() if x.startswith("[m")]


def said(day: int, hour: int, minute: int = 0, month: int = 3) -> str:
    return datetime(2026, month, day, hour, minute, tzinfo=SHANGHAI).isoformat()


def test_an_old_transcript_counts_next_friday_from_the_day_it_was_said(
    make_memory: MemoryFactory,
) -> None:
    # Next Friday from Tuesday 2026-03-10 is 2026-03-20: the reply a model gives for it.
    memory, model = make_memory([reply(fact("下周五前要交详情页性能优化方案", "todo", PLAN_DUE,
                                            valid_until="2026-03-20"))])  # fmt: skip
    memory.observe(
        [
            {"role": "user", "content": PLAN_DUE, "id": "m1", "said_at": said(10, 21, 20)},
            {"role": "assistant", "content": "可以，提纲如下……", "id": "m2",
             "said_at": said(10, 21, 21)},
        ],
        user_id="xu",
        thread_id="2026-03-10",
        timezone="Asia/Shanghai",
    )  # fmt: skip
    (report,) = memory.flush()

    assert today_line(model.requests[0]) == "2026-03-10 (Tuesday)"  # not today's date
    (added,) = report.added
    assert added.fact.valid_until == datetime(2026, 3, 21, tzinfo=SHANGHAI).astimezone(UTC)
    assert added.fact.sources[0].at == datetime.fromisoformat(said(10, 21, 20))
    assert added.fact.created_at > datetime(2026, 11, 1, tzinfo=UTC)  # stored now, said then
    # Its day has passed: it is kept for the record, never recalled.
    assert memory.recall("性能优化方案", user_id="xu") == []


def test_a_transcript_of_two_days_is_read_as_two_windows_each_with_its_day(
    make_memory: MemoryFactory,
) -> None:
    memory, model = make_memory([reply(), reply()])
    memory.observe(
        [
            {"role": "user", "content": "我在杭州做前端", "id": "d1", "said_at": said(10, 23, 50)},
            {"role": "assistant", "content": "明白了，前端开发。", "id": "d2",
             "said_at": said(10, 23, 51)},
            {"role": "user", "content": "明天要交周报", "id": "d3", "said_at": said(11, 0, 5)},
        ],
        user_id="xu",
        thread_id="t1",
        timezone="Asia/Shanghai",
    )  # fmt: skip
    memory.flush()

    first, second = model.requests
    assert today_line(first) == "2026-03-10 (Tuesday)"
    assert conversation_lines(first) == [
        "[m1] user: 我在杭州做前端",
        "[m2] assistant: 明白了，前端开发。",
    ]
    assert today_line(second) == "2026-03-11 (Wednesday)"  # "明天" counts from the 11th
    assert conversation_lines(second) == ["[m1] user: 明天要交周报"]


def test_a_whole_transcript_takes_one_time_and_a_message_of_its_own_wins(
    make_memory: MemoryFactory,
) -> None:
    memory, model = make_memory([reply(), reply()])
    memory.extract([HumanMessage("I moved to Lisbon", id="a")], user_id="ada", thread_id="t1",
                   timezone="Europe/Lisbon", said_at="2026-05-04T09:00:00+01:00")  # fmt: skip
    late = HumanMessage("Tomorrow I fly to Porto", id="b",
                        additional_kwargs={"said_at": datetime(2026, 6, 7, 8, tzinfo=UTC)})  # fmt: skip
    memory.extract([late], user_id="ada", thread_id="t1", timezone="Europe/Lisbon",
                   said_at="2026-05-04T09:00:00+01:00")  # fmt: skip

    assert [today_line(r) for r in model.requests] == ["2026-05-04 (Monday)", "2026-06-07 (Sunday)"]


def test_the_facts_shown_are_those_that_held_when_the_words_were_said(
    make_memory: MemoryFactory,
) -> None:
    """A todo due on 2026-03-20 has expired by now, but on the 15th it was open: a
    transcript of the 15th sees it, and can close it."""
    shown: list[str] = []

    def finished(messages: list[BaseMessage]) -> str:
        shown.extend(x for x in messages[-1].text.splitlines() if x.startswith("[F"))
        return reply(todos_done=["F1"])

    memory, _ = make_memory([
        reply(fact("下周五前要交详情页性能优化方案", "todo", PLAN_DUE, valid_until="2026-03-20")),
        finished,
    ])  # fmt: skip
    memory.observe([{"role": "user", "content": PLAN_DUE, "said_at": said(10, 21)}],
                   user_id="xu", thread_id="d1", timezone="Asia/Shanghai")  # fmt: skip
    memory.observe([{"role": "user", "content": "方案今天交了，组长挺满意", "said_at": said(15, 20)}],
                   user_id="xu", thread_id="d2", timezone="Asia/Shanghai")  # fmt: skip
    memory.flush()

    assert len(shown) == 1 and "性能优化方案" in shown[0]
    assert shown[0].startswith("[F1] (todo, 0.95, until 2026-03-20) ")  # its last day, local
    (todo,) = memory.list(user_id="xu", status=None)
    assert todo.status.value == "done"


def test_a_todo_whose_day_passed_is_shown_as_ended_for_a_month_and_can_be_closed(
    make_memory: MemoryFactory,
) -> None:
    """Four days after its day, the window that says the plan went in still sees the
    todo (marked ended) and closes it; six weeks after, it is no longer shown."""
    memory, model = make_memory([
        reply(fact("下周五前要交详情页性能优化方案", "todo", PLAN_DUE, valid_until="2026-03-20")),
        reply(todos_done=["F1"]),
        reply(),
    ])  # fmt: skip
    memory.observe([{"role": "user", "content": PLAN_DUE, "said_at": said(10, 21)}],
                   user_id="xu", thread_id="d1", timezone="Asia/Shanghai")  # fmt: skip
    memory.observe([{"role": "user", "content": "性能优化方案上周交了，组长通过了",
                     "said_at": said(24, 20)}],
                   user_id="xu", thread_id="d2", timezone="Asia/Shanghai")  # fmt: skip
    memory.flush()
    (shown,) = [x for x in model.requests[1][-1].text.splitlines() if x.startswith("[F")]
    assert shown.startswith("[F1] (todo, 0.95, ended 2026-03-20) ")
    (todo,) = memory.list(user_id="xu", status=None)
    assert todo.status.value == "done"

    memory.observe([{"role": "user", "content": "性能优化方案还要再改一版", "said_at": said(1, 20, month=5)}],
                   user_id="xu", thread_id="d3", timezone="Asia/Shanghai")  # fmt: skip
    memory.flush()
    assert "(none)" in model.requests[2][-1].text


@pytest.mark.parametrize(
    ("given", "problem"),
    [
        ("2026-03-10T21:10:00", "has no time zone"),
        ("last Tuesday", "is not an ISO 8601 time"),
        (12345, "must be a datetime or an ISO 8601 string"),
    ],
)
def test_a_time_that_cannot_be_placed_is_refused_and_nothing_is_queued(
    make_memory: MemoryFactory, given: object, problem: str
) -> None:
    memory, model = make_memory([])
    messages = [{"role": "user", "content": "ok then"}, {"role": "user", "content": "I use Vim",
                                                          "said_at": given}]  # fmt: skip
    with pytest.raises(
        InvalidInputError, match=f"said_at of message 2 .*{problem}|said_at of message 2 must"
    ):
        memory.observe(messages, user_id="ada", thread_id="t1")
    with pytest.raises(InvalidInputError, match="said_at"):
        memory.observe([{"role": "user", "content": "I use Vim"}], user_id="ada", thread_id="t1",
                       said_at=datetime(2026, 3, 10, 21) + timedelta(0))  # fmt: skip
    assert memory.queue.pending() == [] and model.calls == 0


def test_a_queued_message_keeps_when_it_was_said(make_memory: MemoryFactory) -> None:
    memory, _ = make_memory([])
    memory.observe([{"role": "user", "content": "I use Vim", "said_at": said(10, 21)}],
                   user_id="ada", thread_id="t1")  # fmt: skip
    (entry,) = memory.queue.pending()
    assert entry.messages[0].said_at == datetime.fromisoformat(said(10, 21)).timestamp()
