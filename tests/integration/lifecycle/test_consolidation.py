"""Consolidation on real Chroma: merges stored, parts superseded, journal replayed."""

from __future__ import annotations

import json
import logging
import time
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime
from pathlib import Path

import pytest
from langchain_core.messages import BaseMessage
from recallmem.config import MemoryConfig
from recallmem.errors import InvalidInputError
from recallmem.lifecycle.consolidation_eval import evaluate, load_cases
from recallmem.lifecycle.maintenance import MaintenanceReport
from recallmem.lifecycle.merge_journal import JournalFiles
from recallmem.memory import Memory
from recallmem.testing import FakeChatModel, HashingEmbeddings
from recallmem.types import Fact, Source, Status

NOW = datetime(2026, 12, 1, 9, tzinfo=UTC)
REACT = ["Uses React", "Uses React 18 with TypeScript", "Works in the front-end team, React"]
MERGED = "Works in the front-end team and uses React 18 with TypeScript"


def _reply(content: str = MERGED) -> str:
    return json.dumps({"merges": [{"ids": ["F1", "F2", "F3"], "content": content}]})


def _seed(memory: Memory, user: str = "ada") -> list[Fact]:
    facts = [
        Fact(content=text, category="knowledge", user_id=user,
             sources=(Source(thread_id=f"t{n}", quote=text, at=NOW),))
        for n, text in enumerate(REACT)
    ]  # fmt: skip
    memory.put([*facts, Fact(content="Owns a cat called Miso", category="identity", user_id=user)])
    return facts


@pytest.fixture
def close_memory(home: Path) -> Memory:
    # Similar enough for the hashing embedder: the React facts share one word or more.
    # Consolidation alone: the keying step would ask the same model (lifecycle/keying.py).
    config = MemoryConfig(home=home, consolidation_similarity=0.2, keying_max_facts=0)
    memory = Memory(config, embeddings=HashingEmbeddings())
    yield memory  # type: ignore[misc]
    memory.close()


def test_supplements_become_one_fact_and_the_parts_are_superseded(close_memory: Memory) -> None:
    parts = _seed(close_memory)
    close_memory.model = FakeChatModel(responses=[_reply()])
    report = close_memory.consolidate(user_id="ada", now=NOW, simulated_clock=True)

    assert (report.proposed, report.merged, report.superseded) == (1, 1, 3)
    assert len(close_memory.model.requests) == 1  # one bounded call
    prompt = close_memory.model.requests[0][-1].text
    assert "Owns a cat" not in prompt and all(text in prompt for text in REACT)
    merged = close_memory.get(report.merges[0].fact.id, user_id="ada")
    assert merged.content == MERGED and set(merged.merged_from) == {p.id for p in parts}
    assert {s.quote for s in merged.sources} >= set(REACT)  # every part's evidence
    assert {r.content for r in merged.history} >= set(REACT)
    for part in parts:
        stored = close_memory.get(part.id, user_id="ada")
        assert (stored.status, stored.superseded_by) == (Status.SUPERSEDED, merged.id)
    hits = close_memory.recall("which front-end framework?", user_id="ada")
    assert [h.fact.id for h in hits if h.fact.category.value == "knowledge"] == [merged.id]
    exported = close_memory.export(user_id="ada")["facts"]
    assert len(exported) == 5 and any(f["merged_from"] for f in exported)

    again = close_memory.consolidate(
        user_id="ada", now=NOW, simulated_clock=True
    )  # nothing left to merge
    assert again.merged == 0 and len(close_memory.model.requests) == 1


def test_a_refused_merge_changes_nothing(close_memory: Memory) -> None:
    parts = _seed(close_memory)
    close_memory.model = FakeChatModel(responses=[_reply(MERGED + " at Acme on AWS")])
    report = close_memory.consolidate(user_id="ada", now=NOW, simulated_clock=True)
    assert report.merged == 0 and "adds" in report.refused[0].reason
    assert all(close_memory.get(p.id).status is Status.ACTIVE for p in parts)
    assert close_memory.count() == 4


def test_without_a_model_only_near_duplicates_merge(memory: Memory) -> None:
    memory.put([
        Fact(content="Uses Neovim with a Lua config", category="preference", user_id="bo"),
        Fact(content="Uses Neovim with a Lua config daily", category="preference", user_id="bo"),
        Fact(content="Likes tea", category="preference", user_id="bo"),
        Fact(content="Likes coffee", category="preference", user_id="bo"),
    ])  # fmt: skip
    report = memory.consolidate(user_id="bo", now=NOW, simulated_clock=True)
    kept = "Uses Neovim with a Lua config daily"
    assert [m.fact.content for m in report.merges] == [kept]
    assert {f.content for f in memory.list(user_id="bo")} == {kept, "Likes tea", "Likes coffee"}


def test_a_crash_after_the_journal_is_finished_without_the_model(
    close_memory: Memory, monkeypatch: pytest.MonkeyPatch
) -> None:
    parts = _seed(close_memory)
    close_memory.model = FakeChatModel(responses=[_reply()])
    real_put = close_memory.repository.put

    def crash(facts: object) -> None:
        raise OSError("power cut")

    monkeypatch.setattr(close_memory.repository, "put", crash)
    with pytest.raises(OSError):
        close_memory.consolidate(user_id="ada", now=NOW, simulated_clock=True)
    assert JournalFiles(close_memory.config.home).pending("ada") is not None
    assert all(close_memory.get(p.id).status is Status.ACTIVE for p in parts)

    monkeypatch.setattr(close_memory.repository, "put", real_put)
    close_memory.model = FakeChatModel(responses=[AssertionError("must not be called")])
    report = close_memory.consolidate(user_id="ada")
    assert report.replayed and report.merged == 1 and not close_memory.model.requests
    assert JournalFiles(close_memory.config.home).pending("ada") is None
    assert all(close_memory.get(p.id).status is Status.SUPERSEDED for p in parts)
    assert len(close_memory.list(user_id="ada", status=None)) == 5  # nothing twice


def test_an_event_is_logged_and_bad_input_is_refused(
    close_memory: Memory, caplog: pytest.LogCaptureFixture
) -> None:
    _seed(close_memory)
    close_memory.model = FakeChatModel(responses=[_reply()])
    with caplog.at_level(logging.INFO, logger="recallmem.events"):
        close_memory.consolidate(user_id="ada", now=NOW, simulated_clock=True)
    (event,) = [r for r in caplog.records if getattr(r, "event", "") == "memory_consolidation"]
    assert event.data["merged"] == 1 and event.data["superseded"] == 3  # type: ignore[attr-defined]
    with pytest.raises(InvalidInputError, match="timezone-aware"):
        close_memory.consolidate(user_id="ada", now=datetime(2026, 12, 1))
    with pytest.raises(InvalidInputError):
        close_memory.consolidate(user_id="")


def test_a_run_is_held_to_the_clock_unless_the_clock_is_simulated(close_memory: Memory) -> None:
    _seed(close_memory)
    close_memory.model = FakeChatModel(responses=[_reply()])
    far = datetime(9000, 1, 1, tzinfo=UTC)
    with pytest.raises(InvalidInputError, match="ahead of the current time"):
        close_memory.consolidate(user_id="ada", now=far)
    assert close_memory.model.requests == []  # refused before anything ran
    assert len(close_memory.list(user_id="ada")) == 4
    with pytest.raises(InvalidInputError, match="out of range"):
        close_memory.consolidate(user_id="ada", now=datetime(1, 1, 1, tzinfo=UTC))
    report = close_memory.consolidate(user_id="ada", now=far, simulated_clock=True)
    assert report.merged == 1 and report.at == far


def test_scopes_are_consolidated_apart(close_memory: Memory) -> None:
    close_memory.put([
        Fact(content="Uses React", category="knowledge", user_id="cy", agent_id="a"),
        Fact(content="Uses React 18", category="knowledge", user_id="cy", agent_id="b"),
    ])  # fmt: skip

    def never(messages: list[BaseMessage]) -> str:
        raise AssertionError("nothing of one scope is related: no call")

    close_memory.model = FakeChatModel(responses=[never])
    assert close_memory.consolidate(user_id="cy", now=NOW, simulated_clock=True).shown == 0


def test_labelled_set_with_the_default_encoder(use_memory: Memory) -> None:
    cases = load_cases()
    assert len(cases) >= 30
    with_model = evaluate(use_memory.repository, use_memory.config, cases)
    assert (with_model.wrong, with_model.lost, with_model.unexpected_calls) == (0, 0, 0)
    assert with_model.accepted >= 15 and with_model.proposed > with_model.accepted
    without = evaluate(use_memory.repository, use_memory.config, cases, with_model=False)
    assert (without.wrong, without.lost) == (0, 0) and without.accepted >= 8


def test_a_replayed_plan_leaves_a_part_edited_since_alone(
    close_memory: Memory, monkeypatch: pytest.MonkeyPatch
) -> None:
    parts = _seed(close_memory)
    close_memory.model = FakeChatModel(responses=[_reply()])
    real_put = close_memory.repository.put

    def crash(facts: object) -> None:
        raise OSError("power cut")

    monkeypatch.setattr(close_memory.repository, "put", crash)
    with pytest.raises(OSError):
        close_memory.consolidate(user_id="ada", now=NOW, simulated_clock=True)
    monkeypatch.setattr(close_memory.repository, "put", real_put)
    close_memory.update(parts[0].id, content="Uses Preact, not React")  # edited after the plan
    report = close_memory.consolidate(user_id="ada")
    assert report.replayed and report.merged == 0
    assert "changed or forgotten" in report.refused[-1].reason
    assert [f.status for f in (close_memory.get(p.id) for p in parts)] == [Status.ACTIVE] * 3


def test_one_user_is_consolidated_by_one_run_at_a_time(close_memory: Memory) -> None:
    _seed(close_memory)

    def slow(messages: list[BaseMessage]) -> str:
        time.sleep(0.3)  # the other run starts meanwhile and must wait
        return _reply()

    close_memory.model = FakeChatModel(responses=[slow, slow])
    with ThreadPoolExecutor(2) as pool:
        runs = list(
            pool.map(
                lambda _: close_memory.consolidate(user_id="ada", now=NOW, simulated_clock=True),
                [1, 2],
            )
        )
    assert sorted(r.merged for r in runs) == [0, 1] and len(close_memory.model.requests) == 1
    assert len(close_memory.list(user_id="ada", status=None)) == 5


def test_a_failing_model_changes_nothing(close_memory: Memory) -> None:
    parts = _seed(close_memory)
    close_memory.model = FakeChatModel(responses=[ConnectionError("provider down")])
    with pytest.raises(ConnectionError):
        close_memory.consolidate(user_id="ada", now=NOW, simulated_clock=True)
    assert JournalFiles(close_memory.config.home).pending("ada") is None
    assert all(close_memory.get(p.id).status is Status.ACTIVE for p in parts)


def test_maintenance_consolidates_each_changed_user_once(close_memory: Memory) -> None:
    parts = _seed(close_memory)
    close_memory.model = FakeChatModel(responses=[_reply(), _reply()])

    # NOW is a fixed day, soon past the skew maintenance allows against the real clock.
    def maintain() -> MaintenanceReport:
        return close_memory.maintain(now=NOW, user_id="ada", simulated_clock=True)

    report = maintain()

    (merged_id,) = report.consolidated
    assert report.counts()["consolidated"] == 1
    assert set(close_memory.get(merged_id, user_id="ada").merged_from) == {p.id for p in parts}
    assert all(close_memory.get(p.id).status is Status.SUPERSEDED for p in parts)
    again = maintain()  # nothing changed since
    assert again.consolidated == () and len(close_memory.model.requests) == 1
    close_memory.remember("Reviews pull requests in the morning", user_id="ada",
                          category="behavior")  # fmt: skip
    maintain()  # a change: consolidated again
    assert len(close_memory.model.requests) == 2
