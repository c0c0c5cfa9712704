"""The forced recall: a reply that hedges about earlier context is retried once, with
the recalled facts, over real Chroma and a scripted planner (only the model is fake)."""

from __future__ import annotations

from collections.abc import Callable

from langchain_core.messages import AIMessage
from recallmem.agent.messages import is_hidden, kind_of
from recallmem.memory import Memory
from recallmem.testing import FakeChatModel

from .agent_helpers import HEDGE, PLAN, Run, tool_call


def test_a_hedging_reply_triggers_exactly_one_forced_recall_and_retry(
    make_memory: Callable[..., Memory], run: type[Run]
) -> None:
    memory = make_memory()
    memory.remember(PLAN, user_id="ada", category="decision")
    model = FakeChatModel(responses=[HEDGE, HEDGE, HEDGE, "按蓝绿部署方案……"])
    agent = run(memory, model, mode="tool")
    messages = agent.say("风险点是什么？")

    assert model.calls == 2  # the hedge, then one retry: never a third call in a turn
    note = model.requests[1][-1]
    assert kind_of(note) == "recall" and 'trigger="hedge"' in note.text and "蓝绿部署" in note.text
    assert [type(m).__name__ for m in messages if not is_hidden(m) or kind_of(m) == "recall"][-3:] == [
        "HumanMessage", "HumanMessage", "AIMessage"]  # fmt: skip
    assert sum(1 for m in messages if isinstance(m, AIMessage)) == 1  # the first hedge is gone
    forced = [e for e in agent.events.named("memory_retrieval") if e["trigger"] == "hedge"]
    assert len(forced) == 1 and forced[0]["forced"] is True and forced[0]["hits"] >= 1

    agent.say("再确认一下风险点？")  # a new turn may force again, once
    assert model.calls == 4
    assert len([e for e in agent.events.named("memory_retrieval") if e["trigger"] == "hedge"]) == 2


def test_no_forced_recall_when_the_planner_already_recalled(
    make_memory: Callable[..., Memory], run: type[Run]
) -> None:
    memory = make_memory()
    memory.remember(PLAN, user_id="ada", category="decision")
    model = FakeChatModel(responses=[tool_call("recall", query="方案"), HEDGE])
    run(memory, model, mode="tool").say("风险点是什么？")
    assert model.calls == 2  # the recall call and the (hedging) answer, no retry


def test_uncertainty_about_the_task_is_not_a_hedge(
    make_memory: Callable[..., Memory], run: type[Run]
) -> None:
    model = FakeChatModel(responses=["我不确定这个 API 是否支持流式，建议查文档。"])
    run(make_memory(), model).say("这个 API 支持流式吗？")
    assert model.calls == 1


async def test_the_async_path_forces_recall_too(
    make_memory: Callable[..., Memory], run: type[Run]
) -> None:
    memory = make_memory()
    memory.remember(PLAN, user_id="ada", category="decision")
    model = FakeChatModel(responses=[HEDGE, "按蓝绿部署方案……"])
    agent = run(memory, model, mode="tool")
    messages = await agent.asay("风险点是什么？")
    assert model.calls == 2 and messages[-1].text == "按蓝绿部署方案……"
    assert kind_of(model.requests[0][0]) == "block"
    assert [e["trigger"] for e in agent.events.named("memory_retrieval")] == ["injection", "hedge"]
