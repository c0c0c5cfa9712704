"""The scenarios users of other memory layers complain about, end to end on real Chroma.

The model is a fake replaying realistic (and messy) replies; everything after its text
(parsing, hygiene, storage, recall) runs for real.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from conftest import MemoryFactory, cite, fact, reply
from langchain_core.messages import AIMessage, HumanMessage
from recallmem.types import Status


def contents(hits: list[Any]) -> list[str]:
    return [h.fact.content for h in hits]


def test_an_editors_decision_changes_what_is_recalled(make_memory: MemoryFactory) -> None:
    day_one = (
        "<think>身份、偏好和手头的稿子。</think>\n```json\n"
        + reply(
            fact("是科技组的编辑", "identity", "我是科技组的编辑"),
            fact("喜欢 3000 字左右的长文", "preference", "喜欢三千字左右的长文"),
            fact("正在准备一篇关于 AI 芯片的长文", "goal", "最近在准备一篇 AI 芯片的长文", 0.9),
            profile={
                "work_context": {"should_update": True, "summary": "科技组编辑，写深度长文。"}
            },
        )
        + "\n```\n"
    )

    def day_two(messages: list[Any]) -> str:
        goal = cite(messages, "正在准备一篇关于 AI 芯片的长文")
        decision = "不再推荐 AI 芯片选题（已经写过）"
        return "好的，结果如下：\n" + reply(
            fact(decision, "decision", "AI 芯片这个选题已经写过了，别再推荐了"),
            supersede=[{"id": goal, "reason": "这个选题已经写过", "replacement": decision}],
            confirmed=[cite(messages, "喜欢 3000 字左右的长文")],
        ).replace("]}", "],}")  # a trailing comma, as models write them

    memory, _ = make_memory([day_one, day_two])
    memory.extract([HumanMessage("我是科技组的编辑，平时写深度稿，喜欢三千字左右的长文。最近在准备一篇 AI 芯片的长文。")],
                   user_id="editor", thread_id="day-1")  # fmt: skip
    report = memory.extract([HumanMessage("AI 芯片这个选题已经写过了，别再推荐了。给我推荐几个新选题吧，还是长文。")],
                            user_id="editor", thread_id="day-2")  # fmt: skip
    assert [c.fact.content for c in report.added] == ["不再推荐 AI 芯片选题（已经写过）"]
    assert [c.fact.content for c in report.superseded] == ["正在准备一篇关于 AI 芯片的长文"]
    assert [c.fact.content for c in report.confirmed] == ["喜欢 3000 字左右的长文"]

    recalled = contents(memory.recall("推荐 AI 芯片 选题", user_id="editor", k=10))
    assert "不再推荐 AI 芯片选题（已经写过）" in recalled
    assert "正在准备一篇关于 AI 芯片的长文" not in recalled
    assert "喜欢 3000 字左右的长文" in contents(
        memory.recall("推荐长文选题", user_id="editor", k=10)
    )
    history = {
        h.fact.content: h.fact
        for h in memory.recall("AI 芯片", user_id="editor", include_inactive=True, k=10)
    }
    old = history["正在准备一篇关于 AI 芯片的长文"]
    assert old.status is Status.SUPERSEDED and old.superseded_by == report.added[0].fact.id
    assert memory.get_profile(user_id="editor").work_context.summary == "科技组编辑，写深度长文。"


def test_esp32_readings_that_fluctuate_today_are_not_remembered(make_memory: MemoryFactory) -> None:
    recorded = "<think>\nThe project lasts; the fluctuation is a passing problem.\n</think>\n" + reply(
        fact("Is building an automatic plant watering system with an ESP32", "context",
             "I'm building an automatic plant watering system with an ESP32"),
        fact("Soil moisture readings fluctuate a lot", "context", "The readings fluctuate a lot right now", 0.6),
    )  # fmt: skip
    memory, _ = make_memory([recorded])
    report = memory.extract(
        [
            HumanMessage(
                "I'm building an automatic plant watering system with an ESP32 and a soil sensor."
            ),
            AIMessage("Nice! Is the pump on the same supply?"),
            HumanMessage("Yes. The readings fluctuate a lot right now, any idea why?"),
        ],
        user_id="maker",
        thread_id="t1",
    )
    stored = [f.content for f in memory.list(user_id="maker")]
    assert stored == ["Is building an automatic plant watering system with an ESP32"]
    (dropped,) = report.dropped
    assert "fluctuate" in dropped.content and "confidence 0.60" in dropped.reason


def test_day_one_front_end_typescript_reports_in_chinese(make_memory: MemoryFactory) -> None:
    recorded = "Sure! Here's what I extracted:\n```json\n" + reply(
        fact("Works as a front-end developer", "identity", "I'm a front-end developer"),
        fact("Mostly writes TypeScript", "knowledge", "I mostly write TypeScript"),
        fact("Prefers reports written in Chinese", "preference", "please give me reports in Chinese"),
        profile={"work_context": {"should_update": True, "summary": "Front-end developer (TypeScript)."},
                 "recent": {"should_update": False, "summary": ""}},
    ) + "\n```\nAnything else?"  # fmt: skip
    memory, _ = make_memory([recorded])
    memory.extract(
        [
            HumanMessage(
                "Hi! I'm a front-end developer, I mostly write TypeScript, and please give me reports in Chinese."
            )
        ],
        user_id="dev",
        thread_id="day-1",
    )
    assert len(memory.list(user_id="dev")) == 3
    assert contents(
        memory.recall("which language should the report be in", user_id="dev", k=1)
    ) == ["Prefers reports written in Chinese"]
    assert memory.get_profile(user_id="dev").sections().keys() == {"work_context"}


def test_a_correction_is_stored_with_the_wrong_approach_and_replaces_it(
    make_memory: MemoryFactory,
) -> None:
    memory, model = make_memory([])
    wrong = memory.remember("数据处理用 pandas", user_id="ana", category="context")

    def corrected(messages: list[Any]) -> str:
        return reply(
            fact("数据处理用 polars，不用 pandas", "correction", "别用 pandas，用 polars",
                 source_error="用 pandas 处理数据"),
            supersede=[{"id": cite(messages, "数据处理用 pandas"), "reason": "用户纠正",
                        "replacement": "数据处理用 polars，不用 pandas"}],
        )  # fmt: skip

    model.responses.append(corrected)
    report = memory.extract(
        [
            AIMessage("我用 pandas 写了一个版本：df = pd.read_csv(...)"),
            HumanMessage("不对，别用 pandas，用 polars。"),
        ],
        user_id="ana",
        thread_id="t1",
    )
    assert 'correction cue "不对"' in model.requests[0][-1].text
    (added,) = report.added
    assert (
        added.fact.category.value == "correction"
        and added.fact.source_error == "用 pandas 处理数据"
    )
    assert memory.get(wrong.id).status is Status.SUPERSEDED
    assert (
        contents(memory.recall("用什么库处理数据", user_id="ana", k=3))[0]
        == "数据处理用 polars，不用 pandas"
    )


def test_a_job_change_supersedes_the_old_job(make_memory: MemoryFactory) -> None:
    memory, model = make_memory([reply(fact("是科技组的编辑", "identity", "我是科技组的编辑"))])
    memory.extract([HumanMessage("我是科技组的编辑")], user_id="lin", thread_id="t1")

    def moved(messages: list[Any]) -> str:
        return "```\n" + reply(
            fact("在产品组工作", "identity", "我转岗到产品组了"),
            supersede=[{"id": cite(messages, "是科技组的编辑"), "reason": "转岗", "replacement": "在产品组工作"}],
        ) + "\n```"  # fmt: skip

    model.responses.append(moved)
    memory.extract([HumanMessage("跟你说一下，我转岗到产品组了。")], user_id="lin", thread_id="t2")
    assert [f.content for f in memory.list(user_id="lin")] == ["在产品组工作"]
    old = next(f for f in memory.list(user_id="lin", status=None) if f.content == "是科技组的编辑")
    assert old.status is Status.SUPERSEDED and old.history[-1].reason == "superseded: 转岗"
    assert contents(memory.recall("在哪个组工作", user_id="lin", k=1)) == ["在产品组工作"]


def test_secrets_offered_are_refused_and_never_reach_the_disk(
    make_memory: MemoryFactory, home: Path
) -> None:
    key, password = "sk-proj-AbCdEf1234567890XyZ0987", "Tr0ub4dor&3"
    recorded = reply(
        fact(f"OpenAI API key is {key}", "knowledge", "my OpenAI key"),
        fact(f"服务器 root 密码是 {password}", "knowledge", "root 密码是 [REDACTED]"),
        fact("有一台阿里云服务器跑博客", "context", "我有一台阿里云的服务器跑博客"),
        profile={"top_of_mind": {"should_update": True, "summary": f"Rotating key {key}"}},
    )
    memory, model = make_memory([recorded])
    report = memory.extract(
        [
            HumanMessage(
                f"Here's my OpenAI key {key}, remember it. 我有一台阿里云的服务器跑博客，root 密码是 {password}，帮我记住。"
            )
        ],
        user_id="sec",
        thread_id="t1",
    )
    assert [f.content for f in memory.list(user_id="sec")] == ["有一台阿里云服务器跑博客"]
    assert sum("secret" in d.reason for d in report.dropped) == 3  # two facts and the profile
    sent = model.requests[0][-1].text
    assert key not in sent and password not in sent  # redacted before the model saw it
    memory.close()
    for path in home.rglob("*"):
        if path.is_file():
            data = path.read_bytes()
            assert key.encode() not in data and password.encode() not in data, path
