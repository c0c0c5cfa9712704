"""A ``kill -9`` after a purge deleted its records and before they were scrubbed: the
next open scrubs (the home records the scrub as owed before the first delete), and
finishes an erasure the crash cut short, so no file keeps the purged text, also when
nobody purges again. A consolidation plan a crash
left journaled holds the user's text, and "forget me" removes it."""

from __future__ import annotations

from pathlib import Path

import pytest
from forgetting import files_holding
from helpers import python
from recallmem import Memory, MemoryConfig
from recallmem.durability.owed_scrub import OWED_NAME
from recallmem.lifecycle.merge_journal import JournalFiles
from recallmem.persistence.pending_erasures import ERASING_NAME
from recallmem.testing import HashingEmbeddings

GONE = "Sees Dr Pangolinsky-QX7 on Elm street"
QUEUED = "My sister Wombatrix-QX7 lives upstairs"
KEPT = ["Keeps bees", "Grace keeps Hollowmere honey"]

# The purge dies where its scrub would start: after the deletes (``scrub`` in "fact"
# and "user"; the queue's scrub, before Chroma's deletes, in "queue").
PURGE_THEN_DIE = """
import os, signal, sys
from recallmem import Memory, MemoryConfig
from recallmem.operations import extracting
from recallmem.store.chroma.adapter import ChromaFactStore
from recallmem.testing import HashingEmbeddings
home, mode, said, queued = sys.argv[1:5]
memory = Memory(MemoryConfig(home=home), embeddings=HashingEmbeddings())
gone = memory.remember(said, user_id="ada", category="context")
memory.remember("Keeps bees", user_id="ada", category="identity")
memory.remember("Grace keeps Hollowmere honey", user_id="grace", category="preference")
memory.observe([{"role": "user", "content": queued}], user_id="ada", thread_id="t1")
die = lambda *args: os.kill(os.getpid(), signal.SIGKILL)
if mode == "queue":
    extracting.scrub_sqlite = die
else:
    ChromaFactStore.scrub = die
if mode == "fact":
    memory.forget(gone.id, user_id="ada", purge=True)
else:
    memory.forget(user_id="ada", purge=True)
"""


# What each crash left erased after the next open (scrubbed), and which of ada's facts
# stay. The queue is scrubbed before Chroma's deletes: a purge killed there had erased
# ada's queued words only, and the next open finishes it (persistence/pending_erasures.py).
CRASHES = {
    "fact": ([GONE], ["Keeps bees"]),
    "user": ([GONE, QUEUED], []),
    "queue": ([QUEUED, GONE], []),
}


@pytest.mark.parametrize("mode", list(CRASHES))
def test_a_purge_killed_before_its_scrub_is_scrubbed_at_the_next_open(
    home: Path, mode: str
) -> None:
    purged, left = CRASHES[mode]
    died = python(PURGE_THEN_DIE, str(home), mode, GONE, QUEUED)
    assert died.returncode == -9, died.stderr
    assert files_holding(home, purged)  # the crash left the purged text on disk
    assert (home / ERASING_NAME).exists()  # and the erasure recorded as under way

    memory = Memory(MemoryConfig(home=home), embeddings=HashingEmbeddings())
    assert files_holding(home, purged) == {}  # opening scrubbed, before anything else ran
    assert not (home / OWED_NAME).exists() and not (home / ERASING_NAME).exists()
    assert sorted(f.content for f in memory.list(user_id="ada", status=None)) == sorted(left)
    assert [f.content for f in memory.list(user_id="grace")] == KEPT[1:]
    memory.close()
    assert files_holding(home, purged) == {}
    assert files_holding(home, KEPT[1:])  # the grep finds text that was not purged


MERGED = "Uses React for the Zanzibarquux front end and works on its team in Berlin"
CONSOLIDATE_THEN_DIE = """
import json, os, signal, sys
from recallmem import Memory, MemoryConfig
from recallmem.lifecycle import merge_journal
from recallmem.testing import FakeChatModel, HashingEmbeddings
reply = json.dumps({"merges": [{"ids": ["F1", "F2"], "content": sys.argv[2], "reason": "one subject"}]})
config = MemoryConfig(home=sys.argv[1], consolidation_similarity=0.2)
memory = Memory(config, embeddings=HashingEmbeddings(), model=FakeChatModel(responses=[reply]))
memory.remember("Uses React for the Zanzibarquux front end", user_id="ada", category="knowledge")
memory.remember("Works on the Zanzibarquux front end team in Berlin", user_id="ada",
                category="knowledge")
memory.remember("Grace keeps Hollowmere honey", user_id="grace", category="preference")
record = merge_journal.JournalFiles.record
def record_then_die(self, journal):
    record(self, journal)
    os.kill(os.getpid(), signal.SIGKILL)
merge_journal.JournalFiles.record = record_then_die
memory.consolidate(user_id="ada")
"""


def test_forget_me_removes_the_consolidation_plan_a_crash_left(home: Path) -> None:
    died = python(CONSOLIDATE_THEN_DIE, str(home), MERGED)
    assert died.returncode == -9, died.stderr
    assert JournalFiles(home).pending("ada") is not None
    assert any(name.startswith("lifecycle") for name in files_holding(home, ["Zanzibarquux"]))

    with Memory(MemoryConfig(home=home), embeddings=HashingEmbeddings()) as memory:
        assert memory.forget(user_id="ada", purge=True) == 2
        assert JournalFiles(home).pending("ada") is None
        assert not (home / OWED_NAME).exists()  # the purge's scrub ran: none is owed
        assert files_holding(home, ["Zanzibarquux"]) == {}
        memory.maintain()  # every user, as the daily run: nothing replays the plan
        assert memory.list(user_id="ada", status=None) == []
        assert [f.content for f in memory.list(user_id="grace")] == KEPT[1:]
    assert files_holding(home, ["Zanzibarquux"]) == {}
