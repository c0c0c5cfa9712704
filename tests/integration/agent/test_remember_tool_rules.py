"""The planner's ``remember`` tool keeps extraction's rules (the confidence threshold, the
secret screen, the scope rules, duplicates, the scope cap), refuses with a short result
that says why, and writes facts an audit tells apart from a person's."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from recallmem.memory import Memory
from recallmem.testing import FakeChatModel
from recallmem.types import Status

from .agent_helpers import Run, tool_call

THRESHOLD_REFUSAL = "Not saved: confidence 0.60 is below 0.70, the least memory keeps"


def remembered(run: Run) -> tuple[list[Any], ToolMessage]:
    """One turn of ``run``'s planner, which calls ``remember``: the messages, the result."""
    messages = run.say("记住我的习惯", thread="t1")
    [result] = [m for m in messages if isinstance(m, ToolMessage)]
    return messages, result


def agent(memory: Memory, **call: Any) -> Run:
    model = FakeChatModel(responses=[tool_call("remember", **call), "好的。"])
    return Run(memory, model)


def test_a_fact_below_the_threshold_is_refused_and_the_model_told_why(
    make_memory: Callable[..., Memory],
) -> None:
    memory = make_memory()
    run = agent(memory, content="Maybe likes jazz", category="preference", confidence=0.6)
    _, result = remembered(run)
    assert result.status == "error"  # an error result: no "saved" confirmation line follows
    assert result.text.startswith(THRESHOLD_REFUSAL)
    assert "do not raise the number" in result.text
    assert memory.list(user_id="ada", status=None) == []
    # at the threshold it is stored
    run = agent(memory, content="Likes jazz", category="preference", confidence=0.7)
    _, result = remembered(run)
    assert result.status == "success" and result.text.startswith("Saved to memory: Likes jazz")


def test_a_secret_is_refused_in_the_text_and_in_the_keywords(
    make_memory: Callable[..., Memory],
) -> None:
    memory = make_memory()
    for call in (
        {"content": "Home wifi password is Quokka!2024", "category": "context"},
        {"content": "Uses the office wifi", "category": "context",
         "keywords": ["wifi", "password: Quokka!2024"]},
    ):  # fmt: skip
        _, result = remembered(agent(memory, **call))
        assert result.status == "error"
        assert result.text.startswith("Not saved: it holds a secret (")
        assert "Quokka" not in result.text
    assert memory.list(user_id="ada", status=None) == []


def test_a_permission_for_the_assistant_is_not_a_fact_about_the_user(
    make_memory: Callable[..., Memory],
) -> None:
    memory = make_memory()
    call = {"content": "Allows the assistant to push directly to main", "category": "preference"}
    _, result = remembered(agent(memory, **call))
    assert result.status == "error"
    assert "a permission granted to the assistant" in result.text
    assert "Memory keeps facts about the user only" in result.text
    assert memory.list(user_id="ada", status=None) == []


def test_a_duplicate_confirms_the_stored_fact_with_the_planners_source(
    make_memory: Callable[..., Memory],
) -> None:
    memory = make_memory()
    stored = memory.remember("Prefers reports in Chinese", user_id="ada", category="preference")
    messages, result = remembered(
        agent(memory, content="prefers reports in chinese", category="preference")
    )
    assert result.text.startswith("Already in memory, confirmed again: Prefers reports in Chinese")
    [fact] = memory.list(user_id="ada", status=None)
    assert fact.id == stored.id and fact.confirmations == 1
    asked = next(m for m in messages if isinstance(m, HumanMessage) and m.text == "记住我的习惯")
    assert [(s.kind, s.thread_id, s.message_ids) for s in fact.sources] == [
        ("manual", None, ()),
        ("planner", "t1", (asked.id,)),
    ]


def test_two_calls_of_one_fact_at_once_store_it_once(make_memory: Callable[..., Memory]) -> None:
    """LangGraph runs the tool calls of one reply in parallel; the user's lock makes the
    second a confirmation of the first."""
    memory = make_memory()
    calls = [{"name": "remember", "id": f"c{n}",
              "args": {"content": "Rides a road bike to work", "category": "context"}}
             for n in range(2)]  # fmt: skip
    model = FakeChatModel(responses=[AIMessage(content="", tool_calls=calls), "好的。"])
    messages = Run(memory, model).say("我每天骑公路车上班")
    results = sorted(m.text for m in messages if isinstance(m, ToolMessage))
    assert [r.split(":")[0] for r in results] == [
        "Already in memory, confirmed again",
        "Saved to memory",
    ]
    [fact] = memory.list(user_id="ada", status=None)
    assert fact.confirmations == 1


def test_past_the_scope_cap_the_least_valuable_fact_is_evicted(
    make_memory: Callable[..., Memory],
) -> None:
    memory = make_memory(max_facts_per_scope=10)
    memory.remember("Corrected: the build uses pnpm, not npm", user_id="ada",
                    category="correction", confidence=0.5)  # fmt: skip
    memory.remember("Pinned: allergic to peanuts", user_id="ada", category="identity",
                    confidence=0.5, pinned=True)  # fmt: skip
    weakest = memory.remember("Once tried rock climbing", user_id="ada", category="context",
                              confidence=0.71)  # fmt: skip
    for n in range(7):
        memory.remember(f"Owns vinyl record number {n} of the Kind of Blue pressings",
                        user_id="ada", category="context", confidence=0.95)  # fmt: skip
    assert len(memory.list(user_id="ada")) == 10
    _, result = remembered(agent(memory, content="Works as a front-end engineer",
                                 category="identity"))  # fmt: skip
    assert result.text.startswith("Saved to memory: Works as a front-end engineer")
    active = memory.list(user_id="ada")
    assert len(active) == 10
    gone = memory.get(weakest.id, user_id="ada")
    assert gone.status is Status.DELETED and "evicted" in (gone.history[-1].reason or "")
    kept = {f.content for f in active}
    assert {"Corrected: the build uses pnpm, not npm", "Pinned: allergic to peanuts"} <= kept


def test_an_audit_tells_planner_writes_from_manual_ones(make_memory: Callable[..., Memory]) -> None:
    memory = make_memory()
    memory.remember("Keeps a paper diary", user_id="ada", category="behavior")
    messages, _ = remembered(agent(memory, content="Works night shifts", category="context"))
    asked = next(m for m in messages if isinstance(m, HumanMessage) and m.text == "记住我的习惯")
    by_kind = {f.sources[0].kind: f for f in memory.list(user_id="ada")}
    assert set(by_kind) == {"manual", "planner"}
    planned = by_kind["planner"].sources[0]
    assert planned.extractor == "planner" and planned.thread_id == "t1"
    assert planned.message_ids == (asked.id,) and planned.quote is None
    assert by_kind["manual"].sources[0].extractor == "manual"


def test_a_refused_fact_gets_no_confirmation_line(make_memory: Callable[..., Memory]) -> None:
    """``confirm_below`` invites the user to correct what was saved; a refused call saved
    nothing, so it gets no line."""
    memory = make_memory()
    call = tool_call("remember", content="Maybe likes jazz", category="preference", confidence=0.6)
    run = Run(memory, FakeChatModel(responses=[call, "好的。"]), confirm_below=0.8)
    reply = run.say("我好像喜欢爵士")[-1]
    assert reply.text == "好的。"
