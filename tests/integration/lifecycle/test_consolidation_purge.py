"""A consolidation plan left pending (a crash between journaling and applying it) quotes
every part's text: purging a part drops the merges that name it, and the rest of the
plan is still applied at the user's next consolidation."""

from __future__ import annotations

import os
from pathlib import Path

from recallmem.extraction.write_plan import Add
from recallmem.lifecycle.merge_journal import JournalFiles, MergeJournal
from recallmem.lifecycle.merge_prompt import Unreadable
from recallmem.lifecycle.merge_rules import Accepted, Refusal, merge_plan
from recallmem.memory import Memory
from recallmem.testing import FakeChatModel
from recallmem.types import Fact, Source, Status, utcnow


def files_holding(home: Path, text: str) -> list[str]:
    return [
        str(Path(root, name).relative_to(home))
        for root, _, names in os.walk(home)
        for name in names
        if text.encode() in Path(root, name).read_bytes()
    ]


def test_purging_a_part_drops_its_merge_from_a_pending_plan(memory: Memory) -> None:
    home = memory.config.home
    texts = ["Sees Dr Quillfeather on Mondays", "Sees a therapist weekly",
             "Uses Neovim", "Uses Neovim with Lua"]  # fmt: skip
    parts = [Fact(content=t, category="context", user_id="ada") for t in texts]
    memory.put(parts)
    now = utcnow()
    merges = [
        Accepted(parts=(parts[0], parts[1]), content="Sees Dr Quillfeather weekly", reason="r"),
        Accepted(parts=(parts[2], parts[3]), content="Uses Neovim with Lua", reason="r"),
    ]
    JournalFiles(home).record(MergeJournal(
        plan=merge_plan(merges, user_id="ada", at=now, source=Source(at=now)),
        refused=(Refusal(ids=(parts[0].id,), content="Quillfeather again", reason="r"),),
        unreadable=(Unreadable(item="{F1: Quillfeather", reason="not JSON"),),
    ))  # fmt: skip  # as a crash before the plan was applied leaves it
    assert files_holding(home, "Quillfeather")

    memory.forget(parts[0].id, user_id="ada", purge=True)
    assert files_holding(home, "Quillfeather") == []
    pending = JournalFiles(home).pending("ada")
    assert pending is not None and pending.refused == () and pending.unreadable == ()
    kept = [op.fact.content for op in pending.plan.operations if isinstance(op, Add)]
    assert kept == ["Uses Neovim with Lua"]  # the other merge, with its parts' supersedes
    assert {getattr(op, "fact_id", None) for op in pending.plan.operations} == {
        None,
        parts[2].id,
        parts[3].id,
    }

    memory.model = FakeChatModel(responses=[AssertionError("a replay asks no model")])
    report = memory.consolidate(user_id="ada")
    assert report.replayed and [m.fact.content for m in report.merges] == ["Uses Neovim with Lua"]
    status = {f.content: f.status for f in memory.list(user_id="ada", status=None)}
    assert status["Sees a therapist weekly"] is Status.ACTIVE  # its merge was dropped
    assert status["Uses Neovim"] is Status.SUPERSEDED
    assert JournalFiles(home).pending("ada") is None


def test_purging_every_merge_of_a_pending_plan_removes_it(memory: Memory) -> None:
    home = memory.config.home
    parts = [Fact(content=t, category="context", user_id="ada")
             for t in ("Owns a Frobnitz-9000", "Owns a Frobnitz toaster")]  # fmt: skip
    memory.put(parts)
    now = utcnow()
    merge = Accepted(parts=tuple(parts), content="Owns a Frobnitz-9000 toaster", reason="r")
    JournalFiles(home).record(
        MergeJournal(plan=merge_plan([merge], user_id="ada", at=now, source=Source(at=now)))
    )
    memory.forget(user_id="ada", thread_id=None, agent_id=None, purge=False)  # soft: kept
    assert JournalFiles(home).pending("ada") is not None
    memory.forget(parts[1].id, user_id="ada", purge=True)
    assert JournalFiles(home).pending("ada") is None
    assert files_holding(home, "Frobnitz toaster") == []
