"""Text is stored without terminal escapes, control characters and bidi overrides, on
every way in (a joiner a script or an emoji needs is kept): no reader of the store (the
CLI in a terminal, the inspector, an export) meets text that reorders or hides itself."""

from __future__ import annotations

import json
from datetime import UTC, datetime

from recallmem import Memory
from recallmem.testing import FakeChatModel, HashingEmbeddings
from recallmem.types import Fact, Profile, ProfileSection

HOSTILE = "Likes \x1b[31mred\x1b[0m tea\u202e and \x07coffee\u2066\x00"
CLEAN = "Likes red tea and coffee"
JOINED = "Codes on a 👩\u200d💻 laptop in \u0915\u094d\u200d\u0937 script"


def test_every_write_stores_the_text_clean(memory: Memory) -> None:
    fact = memory.remember(HOSTILE, user_id="ada", category="preference",
                           keywords=["\u202etea"])  # fmt: skip
    assert (fact.content, fact.keywords) == (CLEAN, ("tea",))
    edited = memory.update(fact.id, content=HOSTILE.replace("tea", "green tea"))
    assert edited.content == "Likes red green tea and coffee"
    assert memory.remember(JOINED, user_id="ada", category="context").content == JOINED
    profile = memory.set_profile(
        Profile(user_id="ada", work_context=ProfileSection(summary="Edits\u202e the \x1b[1mdesk"))
    )
    assert profile.work_context.summary == "Edits the desk"
    memory.put([Fact(id="imported1", content=HOSTILE, category="context", user_id="bob")])
    memory.repository._indexes.drop("ada")  # read back from Chroma, not this process
    stored = {f.content for f in memory.list(user_id="ada")} | {memory.get("imported1").content}
    assert stored == {"Likes red green tea and coffee", JOINED, CLEAN}
    assert memory.get_profile(user_id="ada").work_context.summary == "Edits the desk"
    exported = json.dumps(memory.export(user_id="ada"), ensure_ascii=False)
    assert "\u202e" not in exported and "\x1b" not in exported


def test_a_queued_turn_and_its_facts_are_stored_clean(memory: Memory) -> None:
    said = "I drink \x1b[32mgreen\x1b[0m tea\u202e every morning"
    reply = json.dumps({"facts": [{"content": "Drinks green tea\u202e every morning",
                                   "category": "behavior", "confidence": 0.9,
                                   "evidence": "I drink green tea every morning"}]})  # fmt: skip
    memory.observe([{"role": "user", "content": said}], user_id="ada", thread_id="t1")
    (entry,) = memory.queue.pending("ada")
    assert entry.messages[0].content == "I drink green tea every morning"
    with Memory(memory.config, embeddings=HashingEmbeddings(),
                model=FakeChatModel(responses=[reply])) as extracting:  # fmt: skip
        (report,) = extracting.flush()
    (added,) = report.added
    assert added.fact.content == "Drinks green tea every morning"
    assert added.fact.sources[0].quote == "I drink green tea every morning"


def test_a_record_an_older_version_stored_is_read_clean(memory: Memory) -> None:
    fact = Fact(content="Old", category="context", user_id="ada",
                created_at=datetime(2024, 1, 1, tzinfo=UTC))  # fmt: skip
    record = json.loads(fact.model_dump_json())
    record["content"] = HOSTILE  # as written before text was cleaned on the way in
    memory.repository.store._of("ada", create=True).upsert(
        ids=[fact.id], embeddings=[HashingEmbeddings().embed_query(CLEAN)],
        metadatas=[{"user_id": "ada", "record": json.dumps(record)}],
    )  # fmt: skip
    memory.repository.store.collections.register([fact.id], ["ada"])
    memory.repository._indexes.drop("ada")
    assert memory.get(fact.id).content == CLEAN
