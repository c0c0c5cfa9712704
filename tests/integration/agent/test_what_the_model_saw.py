"""Every retrieval that reaches the model is recorded (the block, cue and hedge notes, the
``recall`` tool's answers), with the turn it belongs to, the facts shown and the facts
dropped; the ``memory_retrieval`` events carry the ids of the facts shown."""

from __future__ import annotations

from collections.abc import Callable

from langchain.agents import create_agent
from langchain_core.messages import HumanMessage
from recallmem.agent.messages import is_hidden
from recallmem.agent.tools import MemoryToolkit
from recallmem.memory import Memory
from recallmem.testing import FakeChatModel

from .agent_helpers import HEDGE, PLAN, EventLog, Run, tool_call


def asked(messages: list[object], text: str) -> str:
    """The id of the user's message ``text``."""
    return next(
        m.id or "" for m in messages
        if isinstance(m, HumanMessage) and not is_hidden(m) and m.text == text
    )  # fmt: skip


def test_the_block_and_a_tool_recall_are_recorded_with_their_turn(
    make_memory: Callable[..., Memory],
) -> None:
    memory = make_memory()
    plan = memory.remember(PLAN, user_id="ada", category="decision")
    fix = memory.remember("部署前先通知运维", user_id="ada", category="correction")
    model = FakeChatModel(responses=[tool_call("recall", query="部署方案 deployment"), "好的。"])
    agent = Run(memory, model, mode="tool", core_facts=0)  # the plan comes by relevance
    messages = agent.say("上次的部署方案定了吗？", thread="ops")
    turn = asked(messages, "上次的部署方案定了吗？")

    tool, block = memory.retrievals("ada")  # newest first
    assert (block.trigger, block.thread_id, block.turn_id) == ("block", "ops", turn)
    assert block.query == "上次的部署方案定了吗？" and block.tokens and block.tokens > 0
    roles = {s.fact_id: s.role for s in block.shown}
    assert roles == {fix.id: "correction", plan.id: "relevant"}
    [relevant] = [s for s in block.shown if s.role == "relevant"]
    assert relevant.score and relevant.parts and relevant.parts.dense > 0
    assert (tool.trigger, tool.turn_id, tool.query) == ("tool", turn, "部署方案 deployment")
    assert [s.role for s in tool.shown] == ["recalled"] * len(tool.shown)
    assert plan.id in tool.fact_ids()

    events = {e["trigger"]: e for e in agent.events.named("memory_retrieval")}
    assert events["injection"]["fact_ids"] == list(block.fact_ids())
    assert events["tool"]["fact_ids"] == list(tool.fact_ids())


def test_the_core_and_a_turn_note_are_recorded_with_their_roles(
    make_memory: Callable[..., Memory],
) -> None:
    memory = make_memory(recall_floor=0.2)
    job = memory.remember("Works as a nurse", user_id="ada", category="identity")
    plan = memory.remember(PLAN, user_id="ada", category="decision")
    # mode "tool": a cue only hints at the tool, so the turn note is what brings the plan.
    agent = Run(memory, FakeChatModel(responses=["ok"], cycle=True), core_facts=1, mode="tool")
    agent.say("hello", thread="t")
    agent.say("部署方案定了吗", thread="t")
    turn, block = memory.retrievals("ada")
    assert [(s.fact_id, s.role) for s in block.shown] == [(job.id, "core")]
    assert turn.trigger == "turn" and [(s.fact_id, s.role) for s in turn.shown] == [
        (plan.id, "relevant")
    ]
    assert job.id in {d.fact_id for d in turn.dropped if d.reason == "visible"} or (
        job.id not in turn.fact_ids()
    )


def test_a_block_over_budget_records_what_it_dropped(make_memory: Callable[..., Memory]) -> None:
    memory = make_memory()
    for n in range(6):
        memory.remember(f"部署方案第{n}版：蓝绿部署，先在预发环境验证，再切流量，最后观察一小时",
                        user_id="ada", category="decision")  # fmt: skip
    agent = Run(memory, FakeChatModel(responses=["好的。"]), max_injection_tokens=160)
    agent.say("部署方案是什么？")
    [block] = memory.retrievals("ada")
    assert block.shown and block.dropped
    assert {d.reason for d in block.dropped} == {"budget"}
    assert all(d.score is not None for d in block.dropped)
    assert not set(block.fact_ids()) & {d.fact_id for d in block.dropped}


def test_cue_and_hedge_recalls_are_recorded(make_memory: Callable[..., Memory]) -> None:
    memory = make_memory()
    plan = memory.remember(PLAN, user_id="ada", category="decision")
    agent = Run(memory, FakeChatModel(responses=["蓝绿部署。", HEDGE, "按蓝绿部署方案……"]))
    agent.say("上次那个方案是什么？", thread="a")  # a cue
    agent.say("风险点是什么？", thread="b")  # a hedge, recalled once
    triggers = [(r.trigger, r.thread_id) for r in memory.retrievals("ada")]
    # Thread b opens while thread a's turn still waits (no model): its words are carried.
    assert triggers == [("hedge", "b"), ("recent", "b"), ("block", "b"), ("cue", "a"),
                        ("block", "a")]  # fmt: skip
    cue, hedge = (
        next(r for r in memory.retrievals("ada") if r.trigger == t) for t in ("cue", "hedge")
    )
    assert plan.id in cue.fact_ids() and plan.id in hedge.fact_ids()
    assert hedge.query == "风险点是什么？" and hedge.tokens
    hedges = [e for e in agent.events.named("memory_retrieval") if e["trigger"] == "hedge"]
    assert hedges[0]["fact_ids"] == list(hedge.fact_ids())


def test_the_toolkit_records_without_the_middleware(make_memory: Callable[..., Memory]) -> None:
    memory = make_memory()
    plan = memory.remember(PLAN, user_id="ada", category="decision")
    model = FakeChatModel(responses=[tool_call("recall", query="部署方案"), "蓝绿部署。"])
    graph = create_agent(model, tools=MemoryToolkit(memory=memory).get_tools())
    events = EventLog()
    result = graph.invoke({"messages": [("user", "部署方案是什么？")]},
                          config={"configurable": {"user_id": "ada", "thread_id": "t9"},
                                  "callbacks": [events]})  # fmt: skip
    [record] = memory.retrievals("ada")
    assert (record.trigger, record.thread_id) == ("tool", "t9")
    assert record.turn_id == asked(result["messages"], "部署方案是什么？")
    assert record.fact_ids() == (plan.id,)
    [event] = events.named("memory_retrieval")
    assert event["fact_ids"] == [plan.id] and event["trigger"] == "tool"


def test_a_turn_goes_on_when_the_record_cannot_be_written(
    make_memory: Callable[..., Memory],
) -> None:
    memory = make_memory()
    memory.remember(PLAN, user_id="ada", category="decision")
    memory.config.retrievals_path.mkdir(parents=True)  # the record's file cannot be opened
    model = FakeChatModel(responses=[tool_call("recall", query="部署方案"), "蓝绿部署。"])
    messages = Run(memory, model, mode="tool").say("上次的部署方案呢？")
    assert messages[-1].text == "蓝绿部署。"
    assert PLAN in model.requests[0][0].text  # the block still reached the model
