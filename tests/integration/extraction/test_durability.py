"""Nothing lost, nothing sent twice: crashes, restarts, failures, dead letters, shutdown."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from conftest import MemoryFactory, fact, reply
from langchain_core.messages import AIMessage, HumanMessage
from recallmem.errors import ExtractionError, StoreError

CRASHING_RUN = """
import os, sys
from recallmem import Memory, MemoryConfig
from recallmem.persistence.repository import FactRepository
from recallmem.testing import FakeChatModel, HashingEmbeddings

model = FakeChatModel(responses=[sys.argv[2]])
memory = Memory(MemoryConfig(home=sys.argv[1]), embeddings=HashingEmbeddings(), model=model)
FactRepository.put = lambda self, facts: os._exit(17)  # dies between extraction and write
memory.extract([{"role": "user", "content": "我是科技组的编辑，喜欢三千字左右的长文"}],
               user_id="ada", thread_id="t1")
"""


def wait_until(condition: Any, attempts: int = 400) -> None:
    for _ in range(attempts):
        if condition():
            return
        time.sleep(0.05)
    raise AssertionError("condition not reached")


def test_a_crash_between_extraction_and_write_loses_nothing(
    make_memory: MemoryFactory, home: Path
) -> None:
    recorded = (
        "<think>身份和偏好</think>\n```json\n"
        + reply(
            fact("是科技组的编辑", "identity", "我是科技组的编辑"),
            fact("喜欢 3000 字左右的长文", "preference", "喜欢三千字左右的长文"),
        )
        + "\n```"
    )
    crashed = subprocess.run([sys.executable, "-c", textwrap.dedent(CRASHING_RUN), str(home), recorded],
                             capture_output=True, text=True, timeout=300)  # fmt: skip
    assert crashed.returncode == 17, crashed.stderr
    memory, model = make_memory([])  # a model that must not be called again
    memory.flush()
    assert {f.content for f in memory.list(user_id="ada")} == {
        "是科技组的编辑",
        "喜欢 3000 字左右的长文",
    }
    assert model.calls == 0 and memory.queue.pending() == []
    assert any(r.replayed for r in memory.queue.recent())


def test_a_restart_re_sends_nothing(make_memory: MemoryFactory) -> None:
    history: list[Any] = [
        HumanMessage("I'm a front-end developer", id="1"),
        AIMessage("Great!", id="2"),
    ]
    first, _ = make_memory(
        [reply(fact("Works as a front-end developer", "identity", "I'm a front-end developer"))]
    )
    first.extract(history, user_id="ada", thread_id="t1")
    first.close()
    second, model = make_memory(
        [reply(fact("Writes TypeScript", "knowledge", "I write TypeScript"))]
    )
    history += [HumanMessage("I write TypeScript", id="3"), AIMessage("Good choice.", id="4")]
    second.observe(history, user_id="ada", thread_id="t1")
    (report,) = second.flush()
    sent = model.requests[0][-1].text
    assert (
        "I write TypeScript" in sent
        and "front-end developer" not in sent.split("<conversation>")[1]
    )
    assert report.messages == 2 and model.calls == 1
    assert second.flush() == [] and model.calls == 1  # and nothing is left to send


# The model restates the format, then is cut at its output limit: read as a reply, the
# restated example would say "nothing to remember" and the conversation would be lost.
CUT = (
    'I will answer in the form {"facts": [], "supersede": []}. Here it is:\n'
    '{"facts": [{"content": "Prefers reports in Chinese", "category": "preference", '
    '"confidence": 0.95, "evidence": "write my reports in Chi'
)


@pytest.mark.parametrize(
    "metadata", [{"finish_reason": "length"}, {"stop_reason": "max_tokens"}], ids=str
)
def test_a_reply_cut_at_the_output_limit_is_retried_then_dead_lettered(
    make_memory: MemoryFactory, metadata: dict[str, str]
) -> None:
    cut = AIMessage(CUT, response_metadata=metadata)
    memory, model = make_memory([cut, cut], max_attempts=2)
    said = [HumanMessage("From now on, write my reports in Chinese.", id="u1")]
    with pytest.raises(ExtractionError, match="cut off at the model's output limit"):
        memory.extract(said, user_id="ada", thread_id="t1")
    (entry,) = memory.queue.pending()
    assert entry.attempts == 1 and "max output tokens" in (entry.last_error or "")
    (failed,) = memory.flush()
    assert failed.error and "dead letters" in failed.error and memory.queue.pending() == []
    (letter,) = memory.queue.dead_letters()
    assert "cut off at the model's output limit" in letter.reason and letter.attempts == 2
    assert "shorten the windows" in letter.reason and model.calls == 2
    assert memory.list(user_id="ada") == []


def test_failures_retry_then_park_in_the_dead_letters(make_memory: MemoryFactory) -> None:
    good = reply(fact("Lives in Berlin", "identity", "I live in Berlin"))
    memory, model = make_memory(
        ["I'm sorry, I can't help with that.", "{still not json", good], max_attempts=2
    )
    with pytest.raises(ExtractionError, match="kept queued"):
        memory.extract([HumanMessage("I live in Berlin")], user_id="ada", thread_id="t1")
    (entry,) = memory.queue.pending()
    assert entry.attempts == 1 and "no readable JSON" in (entry.last_error or "")
    (failed,) = memory.flush()
    assert failed.error and "dead letters" in failed.error and memory.queue.pending() == []
    (letter,) = memory.queue.dead_letters()
    assert (letter.user_id, letter.thread_id, [m.content for m in letter.messages]) == (
        "ada",
        "t1",
        ["I live in Berlin"],
    )
    assert "no readable JSON" in letter.reason and letter.attempts == 2
    memory.queue.retry(letter.id)  # due at once: the worker or this flush takes it
    memory.flush()
    assert [f.content for f in memory.list(user_id="ada")] == ["Lives in Berlin"]
    assert memory.queue.dead_letters() == [] and memory.queue.pending() == [] and model.calls == 3


def test_a_failed_write_keeps_the_plan_and_is_replayed_without_the_model(
    make_memory: MemoryFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    memory, model = make_memory([reply(fact("Lives in Berlin", "identity", "I live in Berlin"))])
    real_put, failures = memory.repository.put, []

    def flaky_put(facts: Any) -> None:
        if not failures:
            failures.append(1)
            raise StoreError("disk full")
        real_put(facts)

    monkeypatch.setattr(memory.repository, "put", flaky_put)
    memory.observe([HumanMessage("I live in Berlin")], user_id="ada", thread_id="t1")
    (failed,) = memory.flush()
    assert failed.error and "writing failed" in failed.error
    (entry,) = memory.queue.pending()
    assert entry.journaled
    (report,) = memory.flush()
    assert report.replayed and [c.fact.content for c in report.added] == ["Lives in Berlin"]
    assert model.calls == 1


def test_shutdown_flushes_within_its_bound_and_keeps_the_rest(make_memory: MemoryFactory) -> None:
    release = threading.Event()

    def slow_model(messages: Any) -> str:
        release.wait(30)
        return reply(fact("Lives in Berlin", "identity", "I live in Berlin"))

    memory, _ = make_memory([slow_model], debounce_seconds=3600)
    memory.observe([HumanMessage("I live in Berlin")], user_id="ada", thread_id="t1")
    assert memory.extraction.close(timeout=0.2) == 1  # returned with the window still open
    release.set()  # the model answers after all: the window completes, nothing is lost
    wait_until(lambda: not memory.queue.pending())
    assert [f.content for f in memory.list(user_id="ada")] == ["Lives in Berlin"]
