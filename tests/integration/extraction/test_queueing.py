"""Queueing and cost: debouncing, one call per window, bounded prompts, no model, isolation."""

from __future__ import annotations

import re
import time

import pytest
from conftest import Clock, MemoryFactory, fact, reply
from langchain_core.messages import AIMessage, HumanMessage
from recallmem.config import MemoryConfig
from recallmem.errors import ModelNotConfiguredError
from recallmem.extraction.pipeline import ExtractionPipeline
from recallmem.memory import Memory
from recallmem.testing import FakeChatModel


def turn(n: int) -> list[HumanMessage | AIMessage]:
    return [
        HumanMessage(f"Step {n}: the pump wiring uses GPIO {n}", id=f"u{n}"),
        AIMessage(f"Noted step {n}.", id=f"a{n}"),
    ]


def test_a_conversation_observed_turn_by_turn_costs_one_call_per_window(
    memory: Memory, clock: Clock
) -> None:
    model = FakeChatModel(responses=[reply()])
    pipeline = ExtractionPipeline(
        memory.repository, model, memory.config, clock=clock, background=False
    )
    history: list[HumanMessage | AIMessage] = []
    for n in range(8):  # the middleware passes the whole history after every turn
        history += turn(n)
        pipeline.observe(history, user_id="u1", thread_id="t1")
        assert pipeline.run_due() == []
        clock.now += 10
    clock.now += 30
    (report,) = pipeline.run_due()
    assert model.calls == 1 and report.messages == 16 and report.usage.calls == 1
    sent = model.requests[0][-1].text
    assert all(sent.count(f"Step {n}:") == 1 for n in range(8))
    assert pipeline.backlog.usage() == {"windows": 1, "calls": 1, "input_tokens": report.usage.input_tokens,
                                "output_tokens": report.usage.output_tokens,
                                "keying_calls": 0}  # fmt: skip
    pipeline.close(timeout=5)


def test_a_remember_request_is_extracted_at_once(memory: Memory, clock: Clock) -> None:
    model = FakeChatModel(responses=[reply(fact("对花生过敏", "identity", "我对花生过敏"))])
    pipeline = ExtractionPipeline(
        memory.repository, model, memory.config, clock=clock, background=False
    )
    seen = pipeline.observe([HumanMessage("记住：我对花生过敏")], user_id="u1", thread_id="t1")
    assert seen.remember_request and seen.queued == 1
    (report,) = pipeline.run_due()
    assert [c.fact.content for c in report.added] == ["对花生过敏"]
    pipeline.close(timeout=5)


def test_without_a_model_observe_queues_durably_and_says_so(
    make_memory: MemoryFactory, home
) -> None:  # type: ignore[no-untyped-def]
    memory = Memory(MemoryConfig(home=home), embeddings=make_memory()[0].embeddings)
    seen = memory.observe(
        [HumanMessage("I write TypeScript"), AIMessage("Nice, TypeScript it is.")],
        user_id="u1",
        thread_id="t1",
    )
    assert seen.waiting_for_model and "waits for a chat model" in seen.note and seen.pending == 2
    (entry,) = memory.queue.pending()
    assert (entry.user_id, entry.thread_id, [m.content for m in entry.messages]) == (
        "u1",
        "t1",
        ["I write TypeScript", "Nice, TypeScript it is."],
    )
    with pytest.raises(ModelNotConfiguredError, match="2 message"):
        memory.flush()
    with pytest.raises(ModelNotConfiguredError):
        memory.extract([HumanMessage("I live in Berlin")], user_id="u1", thread_id="t1")
    memory.close()
    later, model = make_memory([reply(fact("Writes TypeScript", "knowledge", "I write TypeScript"),
                                      fact("Lives in Berlin", "identity", "I live in Berlin"))])  # fmt: skip
    (report,) = later.flush()
    assert {c.fact.content for c in report.added} == {"Writes TypeScript", "Lives in Berlin"}
    assert model.calls == 1 and later.queue.pending() == []


def test_the_prompt_does_not_grow_with_the_memory(make_memory: MemoryFactory) -> None:
    memory, model = make_memory([reply(), reply()])
    for user, size in (("small", 30), ("large", 300)):
        memory.remember_many(
            [
                {
                    "content": f"Worked on pump project number {n} with sensor {n % 7}",
                    "category": "context",
                }
                for n in range(size)
            ],
            user_id=user,
        )
        memory.extract(
            [HumanMessage("The pump project needs a new sensor")], user_id=user, thread_id="t"
        )
    small, large = (m[-1].text for m in model.requests)
    assert len(re.findall(r"^\[F\d+\]", small, re.MULTILINE)) == 20
    assert len(re.findall(r"^\[F\d+\]", large, re.MULTILINE)) == 20
    tokens = [memory.queue.usage(user_id=u)["input_tokens"] for u in ("small", "large")]
    assert abs(tokens[1] - tokens[0]) <= 0.05 * tokens[0]


def test_each_user_sees_only_their_own_facts(make_memory: MemoryFactory) -> None:
    memory, model = make_memory([reply(), reply()])
    memory.remember("Lives in Berlin", user_id="ada", category="identity")
    memory.remember("Lives in Lisbon", user_id="bob", category="identity")
    memory.extract(
        [HumanMessage("Where do I live again? I live in the city")], user_id="ada", thread_id="same"
    )
    memory.extract(
        [HumanMessage("Where do I live again? I live in the city")], user_id="bob", thread_id="same"
    )
    ada, bob = (m[-1].text for m in model.requests)
    assert "Berlin" in ada and "Lisbon" not in ada
    assert "Lisbon" in bob and "Berlin" not in bob


def test_the_background_worker_extracts_when_a_window_falls_due(make_memory: MemoryFactory) -> None:
    memory, model = make_memory([reply(fact("Prefers dark mode", "preference", "I always use dark mode"))],
                                debounce_seconds=0)  # fmt: skip
    memory.observe([HumanMessage("I always use dark mode")], user_id="u1", thread_id="t1")
    for _ in range(200):  # wait for the worker, without asserting how long it takes
        if memory.list(user_id="u1"):
            break
        time.sleep(0.05)
    assert [f.content for f in memory.list(user_id="u1")] == ["Prefers dark mode"]
    assert model.calls == 1


def test_forgetting_a_user_purges_their_queue(make_memory: MemoryFactory) -> None:
    memory, _ = make_memory([])
    memory.observe([HumanMessage("I live in Berlin")], user_id="u1", thread_id="t1")
    memory.observe([HumanMessage("I live in Lisbon")], user_id="u2", thread_id="t1")
    memory.forget(user_id="u1", purge=True)
    assert [e.user_id for e in memory.queue.pending()] == ["u2"]


def test_a_full_scope_evicts_its_least_valuable_facts_but_never_pinned_or_corrections(
    make_memory: MemoryFactory,
) -> None:
    memory, _ = make_memory(
        [
            reply(
                fact("Lives in Berlin", "identity", "I live in Berlin"),
                fact("Writes Go", "knowledge", "I write Go"),
            )
        ],
        max_facts_per_scope=10,
    )
    pinned = memory.remember(
        "Allergic to peanuts", user_id="u1", category="identity", pinned=True, confidence=0.5
    )
    correction = memory.remember(
        "Use polars, not pandas", user_id="u1", category="correction", confidence=0.5
    )
    weak = memory.remember("Maybe likes jazz", user_id="u1", category="preference", confidence=0.6)
    memory.remember_many(
        [
            {"content": f"Project note number {n}", "category": "context", "confidence": 0.95}
            for n in range(7)
        ],
        user_id="u1",
    )
    report = memory.extract(
        [HumanMessage("I live in Berlin and I write Go")], user_id="u1", thread_id="t1"
    )
    evicted = {c.fact.id for c in report.evicted}
    assert len(evicted) == 2 and weak.id in evicted and not evicted & {pinned.id, correction.id}
    assert len(memory.list(user_id="u1")) == 10
    assert all(memory.get(i).status.value == "deleted" for i in evicted)


def test_flushed_windows_log_a_memory_extraction_event(
    memory: Memory, caplog: pytest.LogCaptureFixture
) -> None:
    model = FakeChatModel(
        responses=[
            reply(fact("Wires the pump to GPIO 4", "knowledge", "the pump wiring uses GPIO 4"))
        ]
    )
    pipeline = ExtractionPipeline(memory.repository, model, memory.config, background=False)
    pipeline.observe(turn(4), user_id="u1", thread_id="t1")
    with caplog.at_level("INFO", logger="recallmem.events"):
        (report,) = pipeline.flush()
    events = [r for r in caplog.records if getattr(r, "event", None) == "memory_extraction"]
    assert len(events) == 1
    assert events[0].data["added"] == len(report.added) == 1
    assert events[0].data["thread_id"] == "t1" and events[0].data["user_id"] == "u1"
