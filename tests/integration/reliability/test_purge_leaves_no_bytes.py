""" "Forget me": after a purge no byte of the user's text is in any file under the home."""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
import time
from pathlib import Path

import pytest
from forgetting import files_holding
from helpers import kill9, start
from recallmem import Memory, MemoryConfig
from recallmem.retrieval.shown import RetrievalRecord, ShownFact
from recallmem.testing import FakeChatModel, HashingEmbeddings
from recallmem.types import ERASED_USER, Profile, ProfileSection

# Distinctive text in every place a user's words go: facts, edits (history), a profile,
# an extracted conversation (queue rows emptied after extraction), a pending window,
# an import, the record of what a model was shown.
SAID = "My cat Zorblatt-QX7 hates the vacuum cleaner"
EXTRACTED = "Has a cat named Zorblatt-QX7"
EDITED_AWAY = "Lives on Quarnix street 42"
EDITED_TO = "Lives on Velquor avenue 9"
PROFILE = "Prefers Plinkett-style summaries"
PENDING = "我的狗叫做旺财九号 and it sleeps all day"
IMPORTED = "Collects Trimbleworth stamps"
ASKED = "Which Vexmoor tea did I like?"
PURGED = [SAID, EXTRACTED, EDITED_AWAY, EDITED_TO, PROFILE, PENDING, IMPORTED, ASKED]
KEPT = "Grace keeps Hollowmere honey"  # another user's text, which must stay
PURGE_ROUNDS = int(os.environ.get("RECALLMEM_CHAOS_ROUNDS", "3"))


def test_a_purged_user_leaves_no_bytes_under_the_home(home: Path) -> None:
    extraction = json.dumps({"facts": [{"content": EXTRACTED, "category": "identity",
                                        "confidence": 0.95, "evidence": SAID}]})  # fmt: skip
    model = FakeChatModel(responses=[extraction])
    memory = Memory(MemoryConfig(home=home), embeddings=HashingEmbeddings(), model=model)
    memory.extract([{"role": "user", "content": SAID}], user_id="ada", thread_id="t1")
    memory.observe([{"role": "user", "content": PENDING}], user_id="ada", thread_id="t2")
    moved = memory.remember(EDITED_AWAY, user_id="ada", category="identity")
    memory.update(moved.id, content=EDITED_TO)
    memory.set_profile(Profile(user_id="ada", work_context=ProfileSection(summary=PROFILE)))
    exported = memory.export(user_id="ada")
    exported["facts"] = [
        {**f, "id": f["id"][::-1], "content": IMPORTED} for f in exported["facts"][:1]
    ]
    memory.import_(exported)
    memory.remember(KEPT, user_id="grace", category="preference")
    shown = (ShownFact(fact_id=moved.id, role="relevant", score=0.5),)
    memory.record_retrieval(RetrievalRecord(user_id="ada", thread_id="t1", trigger="block",
                                            query=ASKED, shown=shown))  # fmt: skip
    memory.record_retrieval(RetrievalRecord(user_id="grace", trigger="tool", query=KEPT))
    memory.repository.flush_access_times()
    before = {text for texts in files_holding(home, PURGED).values() for text in texts}
    assert before >= {SAID, EDITED_TO, PROFILE, ASKED}

    assert memory.forget(user_id="ada", purge=True) == 3
    assert files_holding(home, PURGED) == {}
    assert files_holding(home, [KEPT])  # the grep does find text that was not purged
    assert [f.content for f in memory.list(user_id="grace")] == [KEPT]
    assert memory.retrievals("ada") == [] and memory.retrievals("grace")[0].query == KEPT
    memory.close()

    reopened = Memory(MemoryConfig(home=home), embeddings=HashingEmbeddings())
    assert reopened.list(user_id="ada", status=None) == [] and reopened.queue.pending() == []
    assert [h.fact.content for h in reopened.recall("honey", user_id="grace")] == [KEPT]
    reopened.close()
    assert files_holding(home, PURGED) == {}  # and Chroma's replay at open brought nothing back


CAROL = "carol.jones@example.com"  # a user id is often an e-mail address
AGENT = "agent-Quillon7"
THREAD = "thread-Vexmoor3"
TEMPLATE = "team-template-Plover"


@pytest.mark.parametrize("variant", ["facts", "profiles", "agents", "copies"])
def test_a_purged_users_ids_leave_no_bytes(home: Path, variant: str) -> None:
    """After "forget me" no file holds the user's id, nor the ids of their agents and
    threads: with facts, extraction and maintenance only, and also with profiles, with
    agents, and with copies (into the user, between the user's scopes, and out of the user
    into another, whose copies then name no erased user)."""
    agent = AGENT if variant in ("agents", "copies") else None
    extraction = json.dumps({"facts": [{"content": EXTRACTED, "category": "identity",
                                        "confidence": 0.95, "evidence": SAID}]})  # fmt: skip
    model = FakeChatModel(responses=[extraction], cycle=True)
    memory = Memory(MemoryConfig(home=home), embeddings=HashingEmbeddings(), model=model)
    said = [{"role": "user", "content": SAID}]
    memory.extract(said, user_id=CAROL, thread_id=THREAD, agent_id=agent)
    memory.observe([{"role": "user", "content": PENDING}], user_id=CAROL, thread_id=THREAD,
                   agent_id=agent)  # fmt: skip
    memory.remember(EDITED_AWAY, user_id=CAROL, category="context", thread_id=THREAD,
                    agent_id=agent)  # fmt: skip
    if variant == "profiles":
        for scope in (None, AGENT):
            memory.set_profile(Profile(user_id=CAROL, agent_id=scope,
                                       work_context=ProfileSection(summary=PROFILE)))  # fmt: skip
    if variant == "copies":  # into carol, between her scopes, and out of her into dave's
        memory.remember("Writes weekly reports", user_id=TEMPLATE, category="behavior")
        memory.copy(from_user_id=TEMPLATE, to_user_id=CAROL, to_agent_id=AGENT)
        memory.copy(from_user_id=CAROL, to_user_id=CAROL, from_agent_id=AGENT)
        memory.copy(from_user_id=CAROL, to_user_id="dave", from_agent_id=AGENT)
    memory.remember(KEPT, user_id="grace", category="preference")
    memory.maintain(user_id=CAROL)
    memory.repository.flush_access_times()
    ids = [CAROL, THREAD, *([agent] if agent else [])]
    held = files_holding(home, ids)
    assert {name.split("/")[0].split("-")[0] for name in held} >= {"queue.sqlite3", "chroma"}

    memory.forget(user_id=CAROL, purge=True)
    assert files_holding(home, ids) == {}
    assert files_holding(home, [KEPT])
    if variant == "copies":  # dave's copies stay his, naming no erased user
        origins = {f.copied_from.user_id for f in memory.list(user_id="dave") if f.copied_from}
        assert origins == {ERASED_USER}
    memory.close()
    with Memory(MemoryConfig(home=home), embeddings=HashingEmbeddings()) as reopened:
        assert reopened.list(user_id=CAROL, status=None) == []
        assert reopened.get_profile(user_id=CAROL).sections() == {}
    assert files_holding(home, ids) == {}


def test_purging_one_fact_erases_its_bytes(memory: Memory) -> None:
    gone = memory.remember("Owns a Frobnitz-9000 toaster", user_id="ada", category="context")
    memory.remember("Owns a kettle", user_id="ada", category="context")
    memory.forget(gone.id, user_id="ada", purge=True)
    assert files_holding(memory.config.home, ["Frobnitz-9000"]) == {}
    assert files_holding(memory.config.home, ["Owns a kettle"])


def test_the_cli_leaves_no_fact_text_in_the_lock_file(home: Path) -> None:
    from recallmem.store.chroma.home_lock import LOCK_NAME

    done = subprocess.run(
        [sys.executable, "-m", "recallmem.cli", "--home", str(home), "forget", "--user", "ada",
         "--purge"], capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    record = json.loads((home / LOCK_NAME).read_text())
    assert record["command"] == "cli" and "--purge" not in (home / LOCK_NAME).read_text()


def test_the_scrub_command_cleans_a_chroma_directory(tmp_path: Path) -> None:
    import chromadb
    from chromadb.config import Settings

    directory = tmp_path / "server-data"
    client = chromadb.PersistentClient(
        path=str(directory), settings=Settings(anonymized_telemetry=False)
    )
    facts = client.get_or_create_collection("scrubbed", embedding_function=None)
    facts.upsert(ids=["a", "b"], documents=["Owns a Quuxmobile", "Owns a bike"],
                 embeddings=[[1.0, 0.0], [0.0, 1.0]])  # fmt: skip
    facts.delete(ids=["a"])
    assert files_holding(directory, ["Quuxmobile"])  # Chroma's log still has it
    done = subprocess.run([sys.executable, "-m", "recallmem.store.chroma.workarounds.scrub", str(directory)],
                          capture_output=True, text=True, timeout=120)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert files_holding(directory, ["Quuxmobile"]) == {}
    assert facts.get(ids=["b"])["documents"] == ["Owns a bike"]
    client.close()


PURGER = """
import sys
from recallmem import Memory, MemoryConfig
from recallmem.retrieval.shown import RetrievalRecord, ShownFact
from recallmem.testing import HashingEmbeddings
memory = Memory(MemoryConfig(home=sys.argv[1]), embeddings=HashingEmbeddings())
user = sys.argv[2]
memory.remember_many([{"content": f"Fact {n} of {user} Wibblequax", "category": "context"}
                      for n in range(500)], user_id=user)
print("ready", flush=True)
memory.forget(user_id=user, purge=True)
print("done", flush=True)
"""


def test_kill_9_during_purges_then_purging_again_erases_everything(home: Path) -> None:
    rng = random.Random(7)
    for round_ in range(PURGE_ROUNDS):
        purger = start(PURGER, str(home), f"user{round_}")
        time.sleep(rng.uniform(0.0, 1.0))
        kill9(purger)
    with Memory(MemoryConfig(home=home), embeddings=HashingEmbeddings()) as memory:
        for round_ in range(PURGE_ROUNDS):
            memory.forget(user_id=f"user{round_}", purge=True)  # "forget me" again finishes
            assert memory.list(user_id=f"user{round_}", status=None) == []
        assert memory.repository.store.count() == 0
    assert files_holding(home, ["Wibblequax"]) == {}
