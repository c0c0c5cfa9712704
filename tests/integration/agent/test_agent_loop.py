"""The agent loop across turns, threads and agents: what the model sees at each turn."""

from __future__ import annotations

import itertools
import threading
import time
from collections.abc import Callable
from pathlib import Path

from langchain_core.messages import BaseMessage
from recallmem.agent.messages import is_hidden, kind_of
from recallmem.config import MemoryConfig
from recallmem.memory import Memory
from recallmem.testing import FakeChatModel
from recallmem.text.tokens import get_counter

from .agent_helpers import Run, extraction_reply

# Facts of four topics, none of them "core" (no core in these tests: core_facts=0), so
# only relevance can bring them.
TOPICS = {
    "cooking": ("Is vegetarian and cooks without meat", "plan a vegetarian dinner menu"),
    "travel": ("Always books a window seat on flights", "book my flight seat to Tokyo"),
    "health": ("Is allergic to cats", "which pet suits someone allergic to cats"),
    "work": ("Weekly reports go to the Vue guild", "send the weekly report to the Vue guild"),
}


# The hashing embedder has no measured floor; unrelated texts score about 0 with it.
FLOOR = 0.2


def _seen(request: list[BaseMessage]) -> str:
    return "\n".join(m.text for m in request)


def _memory_messages(request: list[BaseMessage]) -> list[BaseMessage]:
    return [m for m in request if is_hidden(m)]


def test_a_thread_that_opens_with_hi_sees_the_fact_when_the_topic_comes_up(
    make_memory: Callable[..., Memory], run: type[Run]
) -> None:
    memory = make_memory(recall_floor=FLOOR)
    memory.remember("Prefers weekly reports written in Chinese", user_id="ada",
                    category="preference")  # fmt: skip
    model = FakeChatModel(responses=["ok"], cycle=True)
    agent = run(memory, model, core_facts=0)
    agent.say("hi")
    assert "weekly reports" not in _seen(model.requests[0])
    agent.say("Write my weekly report")
    second = model.requests[1]
    assert "Prefers weekly reports written in Chinese" in second[-1].text  # with the turn
    assert kind_of(second[-1]) == "turn" and second[-2].text == "Write my weekly report"


def test_a_wandering_thread_shows_each_topic_once_when_it_comes_up(
    make_memory: Callable[..., Memory], run: type[Run]
) -> None:
    memory = make_memory(recall_floor=FLOOR)
    for fact, _ in TOPICS.values():
        memory.remember(fact, user_id="ada", category="context")
    model = FakeChatModel(responses=["ok"], cycle=True)
    agent = run(memory, model, core_facts=0)
    agent.say("good morning")
    for topic in ("work", "cooking", "travel", "health", "work", "cooking"):
        fact, message = TOPICS[topic]
        agent.say(message)
        assert fact in _seen(model.requests[-1]), topic
    # Nothing is shown twice: each fact sits in exactly one of our messages.
    last = model.requests[-1]
    for fact, _ in TOPICS.values():
        assert sum(fact in m.text for m in _memory_messages(last)) == 1


def test_a_thread_that_changes_language_finds_facts_in_the_other_language(
    tmp_path: Path, run: type[Run]
) -> None:
    # The default (multilingual) encoder: the hashing one cannot cross languages.
    memory = Memory(MemoryConfig(home=tmp_path / "mem"))
    try:
        memory.remember("用户对花生过敏", user_id="ada", category="context")
        memory.remember("Always books a window seat on flights", user_id="ada",
                        category="preference")  # fmt: skip
        model = FakeChatModel(responses=["ok"], cycle=True)
        agent = run(memory, model, core_facts=0)
        agent.say("hello there")
        agent.say("Which seat should I pick on my flight to Tokyo?")
        assert "window seat" in model.requests[-1][-1].text
        agent.say("Can you suggest a snack? Keep my allergy in mind.")
        assert "用户对花生过敏" in model.requests[-1][-1].text
    finally:
        memory.close()


def test_the_turn_note_keeps_to_its_budget_when_full(
    make_memory: Callable[..., Memory], run: type[Run]
) -> None:
    memory = make_memory(recall_floor=FLOOR)
    for n in range(12):
        memory.remember(f"Dinner rule {n}: the guests bring dessert number {n}", user_id="ada",
                        category="context")  # fmt: skip
    model = FakeChatModel(responses=["ok"], cycle=True)
    agent = run(memory, model, core_facts=0, turn_k=10, turn_note_tokens=60)
    agent.say("hey")
    agent.say("what are the dinner rules for the guests and dessert?")
    [note] = [m for m in model.requests[-1] if kind_of(m) == "turn"]
    assert get_counter().count(note.text) <= 60
    assert 1 <= note.text.count("Dinner rule") < 12


def test_the_core_is_in_the_block_whatever_the_first_message(
    make_memory: Callable[..., Memory], run: type[Run]
) -> None:
    memory = make_memory(recall_floor=FLOOR)
    pinned = memory.remember("Call me Ada", user_id="ada", category="context", pinned=True)
    memory.remember("Works as a front-end engineer", user_id="ada", category="identity")
    memory.remember("Prefers answers in Chinese", user_id="ada", category="preference")
    model = FakeChatModel(responses=["ok"], cycle=True)
    agent = run(memory, model, core_facts=3)
    agent.say("hi")
    block = model.requests[0][0].text
    assert "Keep in mind about this user:" in block
    for text in (pinned.content, "front-end engineer", "answers in Chinese"):
        assert text in block


def test_a_fact_about_the_user_learned_by_one_agent_reaches_the_next(
    make_memory: Callable[..., Memory], run: type[Run]
) -> None:
    reply = extraction_reply(
        {"content": "Works as a front-end engineer", "category": "identity", "confidence": 0.95,
         "evidence": "I work as a front-end engineer", "message_ids": ["m1"], "scope": "user"},
        {"content": "Chapter 3 of the draft is written in second person", "category": "context",
         "confidence": 0.9, "evidence": "chapter 3 is in second person", "message_ids": ["m1"],
         "scope": "agent"},
    )  # fmt: skip
    memory = make_memory(FakeChatModel(responses=[reply]), recall_floor=FLOOR)
    chat = FakeChatModel(responses=["ok"], cycle=True)
    agent = run(memory, chat, extraction="inline")
    agent.say("I work as a front-end engineer, and chapter 3 is in second person",
              agent_id="writer", thread="w1")  # fmt: skip
    shared = memory.recall("front-end engineer", user_id="ada", agent_id="coder")
    assert [h.fact.content for h in shared][:1] == ["Works as a front-end engineer"]
    fact = shared[0].fact
    assert fact.agent_id is None and fact.sources[0].agent_id == "writer"
    own = memory.list(user_id="ada", agent_id="writer")
    assert [f.content for f in own if f.agent_id == "writer"] == [
        "Chapter 3 of the draft is written in second person"
    ]
    coder = memory.recall("chapter 3 second person", user_id="ada", agent_id="coder")
    assert all("Chapter 3" not in h.fact.content for h in coder)


def test_an_agent_profile_adds_to_the_users_profile(
    make_memory: Callable[..., Memory], run: type[Run]
) -> None:
    from recallmem.types import Profile, ProfileSection

    memory = make_memory(recall_floor=FLOOR)
    memory.set_profile(
        Profile(user_id="ada", work_context=ProfileSection(summary="Front-end at Acme"))
    )
    memory.set_profile(Profile(user_id="ada", agent_id="writer",
                               top_of_mind=ProfileSection(summary="Finishing the novel draft")))  # fmt: skip
    model = FakeChatModel(responses=["ok"], cycle=True)
    agent = run(memory, model)
    agent.say("hi", agent_id="writer")
    block = model.requests[0][0].text
    assert "Front-end at Acme" in block and "Finishing the novel draft" in block
    assert block.index("Front-end at Acme") < block.index("About the user's work with this")


PLANTS = ["fern", "cactus", "orchid", "bonsai", "basil", "tulip", "ivy", "lavender", "aloe",
          "bamboo"]  # fmt: skip


def test_two_agents_writing_one_user_at_once_lose_nothing(
    make_memory: Callable[..., Memory],
) -> None:
    def reply_for(messages: list[BaseMessage]) -> str:
        plant = next(p for p in PLANTS if f"user: I grow a {p} at home" in messages[-1].text)
        return extraction_reply({"content": f"Grows a {plant} at home", "category": "context",
                                 "confidence": 0.95, "evidence": f"I grow a {plant} at home",
                                 "message_ids": ["m1"]})  # fmt: skip

    memory = make_memory(FakeChatModel(responses=[reply_for], cycle=True))

    def write(agent: str, plants: list[str]) -> None:
        for plant in plants:
            memory.extract([("user", f"I grow a {plant} at home")], user_id="ada",
                           thread_id=f"{agent}-{plant}", agent_id=agent)  # fmt: skip

    halves = (("writer", PLANTS[:5]), ("coder", PLANTS[5:]))
    workers = [threading.Thread(target=write, args=half) for half in halves]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    stored = memory.list(user_id="ada", limit=100)
    assert {f.content for f in stored} == {f"Grows a {p} at home" for p in PLANTS}
    assert all(f.agent_id is None for f in stored)  # about the user: shared by both agents


def _fresh_memory(make_memory: Callable[..., Memory], extractor: FakeChatModel) -> Memory:
    return make_memory(extractor, debounce_seconds=3600, max_wait_seconds=7200, recall_floor=FLOOR)


# Not a "remember this" request (those are extracted at once): it waits 30 s of quiet.
SAID = "I just switched to the night shift at the hospital"
NIGHT_SHIFT = extraction_reply(
    {"content": "Works the night shift at the hospital", "category": "context",
     "confidence": 0.95, "evidence": SAID, "message_ids": ["m1"]}
)  # fmt: skip


def test_a_new_thread_sees_what_was_just_said_in_another(
    make_memory: Callable[..., Memory], run: type[Run]
) -> None:
    memory = _fresh_memory(make_memory, FakeChatModel(responses=[NIGHT_SHIFT]))
    chat = FakeChatModel(responses=["ok"], cycle=True)
    agent = run(memory, chat)
    agent.say(SAID, thread="a")
    assert memory.queue.pending("ada")  # still waiting: 30 s of quiet have not passed
    agent.say("hi", thread="b")
    assert "Works the night shift at the hospital" in chat.requests[-1][0].text
    assert not memory.queue.pending("ada")


def test_a_new_thread_carries_the_words_when_asked_to(
    make_memory: Callable[..., Memory], run: type[Run]
) -> None:
    extractor = FakeChatModel(responses=[NIGHT_SHIFT])
    memory = _fresh_memory(make_memory, extractor)
    chat = FakeChatModel(responses=["ok"], cycle=True)
    agent = run(memory, chat, fresh_threads="carry")
    agent.say(SAID, thread="a")
    agent.say("hi", thread="b")
    [recent] = [m for m in chat.requests[-1] if kind_of(m) == "recent"]
    assert SAID in recent.text and extractor.calls == 0
    assert memory.queue.pending("ada")  # carried, not extracted: still queued


def test_a_new_thread_with_the_model_down_waits_no_longer_than_the_cap(
    make_memory: Callable[..., Memory], run: type[Run]
) -> None:
    def slow(_: list[BaseMessage]) -> str:
        time.sleep(3)
        raise ConnectionError("model endpoint unreachable")

    memory = _fresh_memory(make_memory, FakeChatModel(responses=[slow], cycle=True))
    chat = FakeChatModel(responses=["ok"], cycle=True)
    agent = run(memory, chat, fresh_wait_seconds=0.5)
    agent.say(SAID, thread="a")
    start = time.monotonic()
    agent.say("hi", thread="b")
    assert time.monotonic() - start < 2.5  # the cap, not the model's 3 s
    assert SAID in _seen(chat.requests[-1])  # carried instead
    time.sleep(3.5)  # the extraction in the background fails...
    waiting = [u.content for e in memory.queue.pending("ada") for u in e.messages]
    assert SAID in waiting  # ...and the turn stays queued


def test_a_fact_moved_between_scopes_follows_the_move(make_memory: Callable[..., Memory]) -> None:
    memory = make_memory(recall_floor=FLOOR)
    fact = memory.remember("Writes TypeScript", user_id="ada", category="knowledge",
                           agent_id="writer")  # fmt: skip
    assert memory.recall("TypeScript", user_id="ada", agent_id="coder") == []
    moved = memory.move(fact.id, agent_id=None, user_id="ada")
    assert (
        moved.agent_id is None and moved.history[-1].reason == "moved to the user's shared memory"
    )
    assert [h.fact.id for h in memory.recall("TypeScript", user_id="ada", agent_id="coder")] == [
        fact.id
    ]
    back = memory.move(fact.id, agent_id="writer")
    assert back.agent_id == "writer"
    assert memory.recall("TypeScript", user_id="ada", agent_id="coder") == []


def test_each_request_starts_with_the_previous_one_byte_for_byte(
    make_memory: Callable[..., Memory], run: type[Run]
) -> None:
    # What a provider's prompt cache needs: the whole earlier conversation, notes and
    # block included, unchanged, while new memory keeps arriving with later turns.
    memory = make_memory(recall_floor=FLOOR)
    for fact, _ in TOPICS.values():
        memory.remember(fact, user_id="ada", category="context")
    model = FakeChatModel(responses=["ok"], cycle=True)
    agent = run(memory, model, core_facts=0)
    agent.say("good morning")
    for topic in ("work", "cooking", "travel", "health"):
        agent.say(TOPICS[topic][1])
        memory.remember(f"Mentioned {topic} again today", user_id="ada", category="context",
                        thread_id="elsewhere")  # fmt: skip
    sent = [[m.text.encode() for m in request] for request in model.requests]
    for earlier, later in itertools.pairwise(sent):
        assert later[: len(earlier)] == earlier
