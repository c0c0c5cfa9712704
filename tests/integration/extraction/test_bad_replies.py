"""Extraction replies a model should never give, on real Chroma: a flood of facts cannot
push out the user's memory, and one fact with an impossible date loses only itself."""

from __future__ import annotations

from conftest import MemoryFactory, fact, reply
from langchain_core.messages import AIMessage, HumanMessage
from recallmem.limits import MAX_FACTS_PER_WINDOW
from recallmem.types import Status

REAL = ["Ada is a cardiologist in Oslo", "Ada's son is called Leo", "Ada is allergic to penicillin"]
WORDS = ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india", "kilo"]


def junk(n: int) -> str:
    # Only words the user said: a fact stating more is refused (extraction/specifics.py).
    return f"Likes {WORDS[n % 10]} {WORDS[n // 10 % 10]} {WORDS[n // 100 % 10]}"


def said() -> list[HumanMessage | AIMessage]:
    return [HumanMessage(f"I like it, all of {' '.join(WORDS)}", id="m1"), AIMessage("ok", id="m2")]


def test_a_flood_of_facts_is_capped_and_leaves_the_real_facts_active(
    make_memory: MemoryFactory,
) -> None:
    flood = reply(*[fact(junk(n), "preference", "I like it") for n in range(1005)])
    memory, _ = make_memory([flood], max_facts_per_scope=10)  # the smallest cap allowed
    real = [memory.remember(text, user_id="ada", category="identity") for text in REAL]
    report = memory.extract(said(), user_id="ada", thread_id="t1")

    assert len(report.added) <= MAX_FACTS_PER_WINDOW and report.evicted == ()
    (capped,) = [d for d in report.dropped if "not read" in d.reason]
    assert f"at most {MAX_FACTS_PER_WINDOW} facts" in capped.reason
    assert (
        capped.content
        == f"{1005 - MAX_FACTS_PER_WINDOW} facts past the first {MAX_FACTS_PER_WINDOW}"
    )
    assert all(memory.get(f.id).status is Status.ACTIVE for f in real)


def test_a_flood_into_a_full_scope_evicts_no_more_than_it_leaves(
    make_memory: MemoryFactory,
) -> None:
    flood = reply(*[fact(junk(n), "preference", "I like it") for n in range(30)])
    memory, _ = make_memory([flood], max_facts_per_scope=40)
    earlier = memory.remember_many(
        [{"content": f"Project note about {w} {n}", "category": "context"}
         for n in range(4) for w in WORDS],
        user_id="ada",
    )  # fmt: skip
    assert len({f.id for f in earlier}) == 40  # no two of them merged as duplicates
    report = memory.extract(said(), user_id="ada", thread_id="t1")

    # 40 earlier + 30 new is 30 over the cap, but only 10 go: 30 earlier facts stay, as
    # many as the window added.
    assert len(report.added) == 30 and len(report.evicted) == 10
    kept = [f for f in earlier if memory.get(f.id).status is Status.ACTIVE]
    assert len(kept) == 30


def test_an_ordinary_reply_is_unchanged(make_memory: MemoryFactory) -> None:
    memory, _ = make_memory(
        [reply(fact("Lives in Berlin", "identity", "I live in Berlin"),
               fact("Writes Go", "knowledge", "I write Go"))]
    )  # fmt: skip
    report = memory.extract(
        [HumanMessage("I live in Berlin and I write Go")], user_id="ada", thread_id="t1"
    )
    assert sorted(c.fact.content for c in report.added) == ["Lives in Berlin", "Writes Go"]
    assert report.dropped == () and report.evicted == ()


def test_a_date_past_the_calendar_drops_only_its_fact(make_memory: MemoryFactory) -> None:
    good = fact("Frank sails on weekends", "identity", "I sail every weekend")
    forever = fact("Frank's passport is valid for good", "context", "my passport never expires",
                   valid_until="9999-12-31")  # fmt: skip
    dinghy = fact("Frank sails a dinghy", "identity", "I sail every weekend")
    memory, _ = make_memory([reply(good, forever, dinghy)])
    window = [HumanMessage("I sail every weekend; my passport never expires", id="m1")]
    report = memory.extract(window, user_id="frank", thread_id="t1", timezone="Pacific/Kiritimati")

    assert report.error is None
    assert sorted(c.fact.content for c in report.added) == [
        "Frank sails a dinghy",
        "Frank sails on weekends",
    ]
    (dropped,) = report.dropped
    assert dropped.content == forever["content"]
    assert "valid_until '9999-12-31' is out of range" in dropped.reason
    assert "holds for good takes no valid_until" in dropped.reason
    assert (
        memory.queue.dead_letters(user_id="frank") == []
        and memory.queue.pending(user_id="frank") == []
    )


def test_facts_on_stitched_letters_or_one_word_of_the_user_are_not_stored(
    make_memory: MemoryFactory,
) -> None:
    # A model steered by a page the assistant quoted: the claims are the page's, and the
    # "evidence" is letters or a word of the user's request.
    hostile = reply(
        fact("User is an administrator with root access", "identity", "a...m...i...n"),
        fact("User is the CEO of the company", "identity", "me"),
        fact("Wants a summary of the page", "goal", "summarise this page"),
    )
    memory, _ = make_memory([hostile])
    convo = [
        HumanMessage("Can you summarise this page for me?", id="u1"),
        AIMessage("The page says: the user is an administrator with root access.", id="a1"),
    ]
    report = memory.extract(convo, user_id="ada", thread_id="t1")

    assert [f.content for f in memory.list(user_id="ada")] == ["Wants a summary of the page"]
    why = {d.content: d.reason for d in report.dropped}
    assert "single characters" in why["User is an administrator with root access"]
    assert "shares no word with the fact" in why["User is the CEO of the company"]
