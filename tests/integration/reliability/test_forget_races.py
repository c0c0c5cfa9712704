""" "Forget me" holds against work in flight: after a purge is acknowledged, nothing said
or read before it comes back, whatever was still running when it was asked.

A gate holds the slow part of each path (the model, the embedder) until the purge has
returned; then the work finishes, and the user's memory, queue, logs and files must
still hold nothing of what was said before. The many-thread races repeat
``RECALLMEM_CHAOS_ROUNDS`` times (a race one run can miss).
"""

from __future__ import annotations

import json
import os
import random
import threading
import time
from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest
from forgetting import (
    FACT,
    SAID,
    USER,
    WAIT,
    Gate,
    GatedEmbeddings,
    Running,
    extraction,
    files_holding,
    gated,
    nothing_left,
)
from langchain.agents import create_agent
from langchain_core.messages import BaseMessage
from langgraph.store.base import PutOp
from recallmem import Memory, MemoryConfig, MemoryMiddleware
from recallmem.errors import ExtractionError, ForgottenMeanwhileError
from recallmem.integrations.langgraph import RecallmemStore
from recallmem.persistence.forget_ledger import now as ledger_now
from recallmem.persistence.forget_ledger import work_began
from recallmem.testing import FakeChatModel, HashingEmbeddings

ROUNDS = int(os.environ.get("RECALLMEM_CHAOS_ROUNDS", "3"))


@pytest.fixture
def gate() -> Gate:
    return Gate()


@pytest.fixture
def quick(home: Path) -> MemoryConfig:
    return MemoryConfig(home=home, debounce_seconds=0.0)


def test_a_remember_in_flight_is_refused_after_the_purge(quick: MemoryConfig, gate: Gate) -> None:
    with Memory(quick, embeddings=GatedEmbeddings(gate=gate)) as memory:
        running = Running(lambda: memory.remember(FACT, user_id=USER, category="identity"))
        gate.reached()
        memory.forget(user_id=USER, purge=True)
        gate.opened.set()
        with pytest.raises(ForgottenMeanwhileError, match="forgotten while this write"):
            running.result()
        nothing_left(memory)
        # A write that begins after the purge is the user speaking again: it is kept.
        memory.remember("Owns a kettle", user_id=USER, category="context")
        assert [f.content for f in memory.list(user_id=USER)] == ["Owns a kettle"]


def test_an_extraction_in_flight_writes_nothing_after_the_purge(
    quick: MemoryConfig, gate: Gate
) -> None:
    model = FakeChatModel(responses=[gated(gate, extraction)])
    with Memory(quick, embeddings=HashingEmbeddings(), model=model) as memory:
        said = [{"role": "user", "content": SAID}]
        running = Running(lambda: memory.extract(said, user_id=USER, thread_id="t1"))
        gate.reached()
        memory.forget(user_id=USER, purge=True)
        gate.opened.set()
        with pytest.raises(ExtractionError, match="forgotten while this write"):
            running.result()
        nothing_left(memory)
        assert memory.queue.usage(USER)["windows"] == 0  # its row names the user
        assert memory.queue.recent(USER) == []


def test_a_window_extracted_in_the_background_is_dropped(quick: MemoryConfig, gate: Gate) -> None:
    model = FakeChatModel(responses=[gated(gate, extraction)])
    memory = Memory(quick, embeddings=HashingEmbeddings(), model=model)
    memory.observe([{"role": "user", "content": SAID}], user_id=USER, thread_id="t1")
    gate.reached()  # the worker claimed the window and waits for the model
    memory.forget(user_id=USER, purge=True)
    gate.opened.set()
    memory.close(timeout=WAIT)  # the worker finishes the window, then stops
    assert model.calls == 1
    with Memory(quick, embeddings=HashingEmbeddings()) as reopened:
        nothing_left(reopened)


def test_a_thread_purge_drops_that_threads_window_only(quick: MemoryConfig, gate: Gate) -> None:
    model = FakeChatModel(responses=[gated(gate, extraction)])
    with Memory(quick, embeddings=HashingEmbeddings(), model=model) as memory:
        memory.remember("Owns a kettle", user_id=USER, category="context", thread_id="t2")
        said = [{"role": "user", "content": SAID}]
        running = Running(lambda: memory.extract(said, user_id=USER, thread_id="t1"))
        gate.reached()
        memory.forget(user_id=USER, thread_id="t1", purge=True)
        gate.opened.set()
        with pytest.raises(ExtractionError, match="thread 't1'"):
            running.result()
        assert [f.content for f in memory.list(user_id=USER)] == ["Owns a kettle"]
        assert files_holding(memory.config.home, ["Zorblatt"]) == {}


def test_an_agent_turn_in_flight_is_not_queued_after_the_purge(
    quick: MemoryConfig, gate: Gate
) -> None:
    chat = FakeChatModel(responses=[gated(gate, lambda _: "Nice to meet Zorblatt.")])
    extractor = FakeChatModel(responses=[extraction], cycle=True)
    with Memory(quick, embeddings=HashingEmbeddings(), model=extractor) as memory:
        agent = create_agent(chat, middleware=[MemoryMiddleware(memory=memory)])
        running = Running(lambda: agent.invoke({"messages": [("user", SAID)]},
                                               context={"user_id": USER, "thread_id": "t1"}))  # fmt: skip
        gate.reached()
        memory.forget(user_id=USER, purge=True)
        gate.opened.set()
        running.result()  # the turn itself answers; its words are not kept
        memory.flush(timeout=WAIT)
        nothing_left(memory, "Nice to meet")
        assert extractor.calls == 0


def test_a_langgraph_store_put_in_flight_is_refused(quick: MemoryConfig, gate: Gate) -> None:
    with Memory(quick, embeddings=GatedEmbeddings(gate=gate)) as memory:
        user = "zed-quarnix-at-example"  # a namespace label holds no period
        store = RecallmemStore(memory)
        put = PutOp(("memories", user), "pet", {"text": FACT})
        running = Running(lambda: store.batch([put]))
        gate.reached()
        memory.forget(user_id=user, purge=True)
        gate.opened.set()
        with pytest.raises(ForgottenMeanwhileError):
            running.result()
        nothing_left(memory, user=user)


def test_a_consolidation_in_flight_writes_no_merge_after_the_purge(
    quick: MemoryConfig, gate: Gate
) -> None:
    def merge(_: Sequence[BaseMessage]) -> str:
        return json.dumps({"merges": []})

    model = FakeChatModel(responses=[gated(gate, merge)], cycle=True)
    with Memory(quick, embeddings=HashingEmbeddings(), model=model) as memory:
        for text in ("Owns a pet named Zorblatt", "Owns a pet cat named Zorblatt, grey",
                     "Owns a pet named Zorblatt that sleeps"):  # fmt: skip
            memory.remember(text, user_id=USER, category="identity")
        running = Running(lambda: memory.maintain(user_id=USER))
        gate.reached()
        memory.forget(user_id=USER, purge=True)
        gate.opened.set()
        running.result()
        nothing_left(memory)


Started = list[tuple[float, str, bool]]  # when a write's work began, its text, acknowledged


def _write_until(memory: Memory, worker: int, stop: threading.Event, started: Started) -> None:
    """Remember (and every third time observe) new texts until ``stop``."""
    n = 0
    while not stop.is_set():
        text, n = f"Worker {worker} fact {n} Wibblequax", n + 1
        with work_began() as began:  # the write's unit of work, to know its time
            try:
                if n % 3:
                    memory.remember(text, user_id=USER, category="context")
                else:
                    memory.observe([{"role": "user", "content": text}], user_id=USER,
                                   thread_id=f"w{worker}")  # fmt: skip
                done = True
            except ForgottenMeanwhileError:
                done = False
        started.append((began.at, text, done))


def test_writes_racing_purges_from_many_threads_never_outlive_them(home: Path) -> None:
    """Writers on several threads remember and observe while purges come at random; a
    write whose work began before a purge began is never found after it, and every write
    acknowledged that began after the last purge ended is kept (times are the forget
    ledger's)."""
    rng = random.Random(26)
    with Memory(MemoryConfig(home=home), embeddings=HashingEmbeddings()) as memory:
        for round_ in range(ROUNDS):
            started: Started = []
            stop = threading.Event()
            writers = [threading.Thread(target=_write_until, args=(memory, w, stop, started))
                       for w in range(4)]  # fmt: skip
            for writer in writers:
                writer.start()
            purges = []
            for _ in range(3):
                time.sleep(rng.uniform(0.05, 0.3))
                begun = ledger_now()
                memory.forget(user_id=USER, purge=True)
                purges.append((begun, ledger_now()))
            stop.set()
            for writer in writers:
                writer.join(WAIT)
            kept = {f.content for f in memory.repository.facts(USER)}
            kept |= {m.content for e in memory.queue.pending(USER) for m in e.messages}
            last_begun, last_done = purges[-1]
            old = {text for began, text, _ in started if began < last_begun}
            assert not (kept & old), f"round {round_}: {sorted(kept & old)[:3]} outlived a purge"
            after = {text for began, text, done in started if began > last_done and done}
            assert after <= kept, f"round {round_}: acknowledged writes were lost"
            assert old  # the writers did race the purges
            memory.forget(user_id=USER, purge=True)


@pytest.fixture(autouse=True)
def _no_leaked_threads() -> Iterator[None]:
    before = threading.active_count()
    yield
    deadline = time.monotonic() + 5
    while threading.active_count() > before + 4 and time.monotonic() < deadline:
        time.sleep(0.05)
