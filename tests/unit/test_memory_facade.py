"""Memory, the facade: writing, recalling, editing, forgetting (on the in-memory store)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from recallmem import Category, Memory, Source, Status
from recallmem.errors import FactNotFoundError, InvalidInputError, MissingScopeError


def test_remember_then_recall_returns_the_fact_with_score_parts(memory: Memory) -> None:
    stored = memory.remember("Prefers reports in Chinese", user_id="ada", category="preference")
    memory.remember("Owns a road bike", user_id="ada", category="context")
    hits = memory.recall("reports language Chinese", user_id="ada", k=1)
    assert [h.fact.id for h in hits] == [stored.id]
    parts, weights = hits[0].parts, hits[0].weights
    # Two of the query's three words: lexical evidence is that share of its IDF mass.
    assert 0 < parts.dense <= 1 and 0.3 < parts.lexical < 1.0 and parts.confidence == 0.9
    assert weights is not None
    rebuilt = sum(
        getattr(weights, name) * getattr(parts, name) for name in type(weights).model_fields
    )
    assert rebuilt == pytest.approx(hits[0].score, abs=1e-3)
    assert hits[0].fact.last_accessed_at is not None


def test_recall_ranks_the_relevant_fact_first(memory: Memory) -> None:
    memory.remember_many(
        [
            {"content": "Works on the front-end team", "category": "identity"},
            {"content": "Writes TypeScript every day", "category": "knowledge"},
            {"content": "Has a dog named Max", "category": "context"},
        ],
        user_id="ada",
    )
    top = memory.recall("dog name", user_id="ada", k=3)[0]
    assert top.fact.content == "Has a dog named Max"


def test_categories_filter(memory: Memory) -> None:
    memory.remember("Writes TypeScript", user_id="ada", category="knowledge")
    memory.remember("Prefers TypeScript", user_id="ada", category="preference")
    hits = memory.recall("TypeScript", user_id="ada", categories=["preference"])
    assert {h.fact.category for h in hits} == {Category.PREFERENCE}


def test_agent_scope_sees_shared_and_own_facts_only(memory: Memory) -> None:
    memory.remember("Shared fact about tea", user_id="ada", category="preference")
    memory.remember(
        "Coder agent fact about tea", user_id="ada", category="knowledge", agent_id="coder"
    )
    memory.remember(
        "Writer agent fact about tea", user_id="ada", category="knowledge", agent_id="writer"
    )
    seen = {h.fact.content for h in memory.recall("tea", user_id="ada", agent_id="coder", k=10)}
    assert seen == {"Shared fact about tea", "Coder agent fact about tea"}
    shared_only = {h.fact.content for h in memory.recall("tea", user_id="ada", k=10)}
    assert shared_only == {"Shared fact about tea"}


def test_exact_duplicate_confirms_instead_of_adding(memory: Memory) -> None:
    first = memory.remember(
        "Prefers dark mode", user_id="ada", category="preference", confidence=0.7
    )
    again = memory.remember(
        "  prefers DARK mode. ", user_id="ada", category="preference", confidence=0.8
    )
    assert again.id == first.id
    assert again.confirmations == 1 and again.last_confirmed_at is not None
    assert again.confidence == pytest.approx(0.85)
    assert len(memory.list(user_id="ada")) == 1


def test_near_duplicate_that_says_more_enriches_and_keeps_history(memory: Memory) -> None:
    first = memory.remember("Lives in Berlin", user_id="ada", category="context")
    richer = memory.remember("Lives in Berlin Kreuzberg", user_id="ada", category="context")
    assert richer.id == first.id and richer.content == "Lives in Berlin Kreuzberg"
    assert [r.content for r in richer.history] == ["Lives in Berlin"]
    assert memory.recall("Kreuzberg", user_id="ada")[0].fact.id == first.id


def test_similar_but_different_facts_are_both_kept(memory: Memory) -> None:
    memory.remember("Has a dog named Max", user_id="ada", category="context")
    memory.remember("Has a cat named Max", user_id="ada", category="context")
    assert len(memory.list(user_id="ada")) == 2


def test_duplicates_inside_one_batch_collapse(memory: Memory) -> None:
    facts = memory.remember_many(
        [{"content": "Likes green tea", "category": "preference"},
         {"content": "likes green tea!", "category": "preference"}],
        user_id="ada",
    )  # fmt: skip
    assert facts[0].id == facts[1].id and facts[1].confirmations == 1
    assert len(memory.list(user_id="ada")) == 1


def test_update_keeps_old_text_and_reembeds(memory: Memory) -> None:
    fact = memory.remember("Team lead of the search team", user_id="ada", category="identity")
    edited = memory.update(
        fact.id, user_id="ada", content="Team lead of the payments team", reason="moved"
    )
    assert edited.history[0].content == "Team lead of the search team"
    assert edited.history[0].reason == "moved"
    assert memory.recall("payments", user_id="ada")[0].fact.id == fact.id
    assert memory.get(fact.id).content == "Team lead of the payments team"


def test_soft_forget_leaves_recall_but_stays_for_audit(memory: Memory) -> None:
    fact = memory.remember("Uses Vim", user_id="ada", category="preference")
    assert memory.forget(fact.id) == 1
    assert memory.recall("Vim", user_id="ada") == []
    assert memory.get(fact.id).status is Status.DELETED
    assert [h.fact.id for h in memory.recall("Vim", user_id="ada", include_inactive=True)] == [
        fact.id
    ]


def test_purge_erases_the_fact_and_its_vector(memory: Memory) -> None:
    fact = memory.remember("Uses Emacs", user_id="ada", category="preference")
    memory.forget(fact.id, purge=True)
    with pytest.raises(FactNotFoundError):
        memory.get(fact.id)
    assert memory.count() == 0


def test_forget_cascades_by_thread_and_by_user(memory: Memory) -> None:
    memory.remember("Fact from thread one", user_id="ada", category="context", thread_id="t1")
    memory.remember("Fact from thread two", user_id="ada", category="context", thread_id="t2")
    memory.remember("Bob's fact", user_id="bob", category="context", thread_id="t1")
    assert memory.forget(user_id="ada", thread_id="t1", purge=True) == 1
    assert [f.content for f in memory.list(user_id="ada")] == ["Fact from thread two"]
    assert memory.forget(user_id="ada", purge=True) == 1
    assert memory.list(user_id="ada", status=None) == []
    assert [f.content for f in memory.list(user_id="bob")] == ["Bob's fact"]


def test_list_filters_and_paginates(memory: Memory) -> None:
    memory.remember_many([{"content": f"Fact number {n}", "category": "context"} for n in range(7)],
                         user_id="ada")  # fmt: skip
    memory.remember("Likes tea", user_id="ada", category="preference")
    assert len(memory.list(user_id="ada", category="context", limit=5)) == 5
    assert len(memory.list(user_id="ada", category="context", limit=5, offset=5)) == 2
    assert [f.content for f in memory.list(user_id="ada", text="TEA")] == ["Likes tea"]


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda m: m.remember("", user_id="ada", category="preference"), "content is empty"),
        (lambda m: m.remember("x" * 2001, user_id="ada", category="preference"), "limit is 2000"),
        (lambda m: m.remember("ok", user_id="ada", category="hobby"), "use one of: identity"),
        (lambda m: m.remember("ok", user_id="ada", category="goal", confidence=1.5), "from 0 to 1"),
        (lambda m: m.remember("ok", user_id="", category="goal"), "user_id is required"),
        (lambda m: m.recall("", user_id="ada"), "query is empty"),
        (lambda m: m.recall("\u200b\u2060", user_id="ada"), "only invisible characters"),
        (lambda m: m.recall("x", user_id="ada", k=0), "k must be"),
        (
            lambda m: m.remember_many(
                [{"content": "x", "category": "goal", "evil": 1}], user_id="a"
            ),
            "unknown item keys",
        ),
    ],
)
def test_bad_input_is_a_clear_error_and_writes_nothing(memory: Memory, call, message: str) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(InvalidInputError, match=message):
        call(memory)
    assert memory.count() == 0


def test_missing_user_is_a_scope_error(memory: Memory) -> None:
    with pytest.raises(MissingScopeError):
        memory.recall("anything", user_id=None)  # type: ignore[arg-type]


def test_unknown_fact_id(memory: Memory) -> None:
    with pytest.raises(FactNotFoundError, match=r"memory\.list"):
        memory.get("nope")
    with pytest.raises(FactNotFoundError):
        memory.forget("nope")


async def test_async_twins_share_the_sync_behaviour(memory: Memory) -> None:
    fact = await memory.aremember("Drinks oolong", user_id="ada", category="preference")
    hits = await memory.arecall("oolong", user_id="ada")
    assert [h.fact.id for h in hits] == [fact.id]
    assert (await memory.aget(fact.id)).content == "Drinks oolong"
    assert await memory.aforget(fact.id, purge=True) == 1


def test_large_batches_are_merged_in_chunks_without_losing_duplicates(memory: Memory) -> None:
    items = [
        {"content": f"Project {n} uses the zebra{n} codename", "category": "context"}
        for n in range(1100)
    ]
    items.append(
        {"content": "Project 3 uses the zebra3 codename", "category": "context"}
    )  # a second-chunk duplicate
    facts = memory.remember_many(items, user_id="ada")
    assert len(facts) == 1101 and facts[-1].id == facts[3].id
    assert (
        len(memory.list(user_id="ada", limit=1000))
        + len(memory.list(user_id="ada", limit=1000, offset=1000))
        == 1100
    )


def test_a_time_named_in_the_query_shows_in_the_score_parts(memory: Memory) -> None:
    memory.remember("Went hiking in the Alps", user_id="ada", category="context")
    long_ago = Source(at=datetime.now(UTC) - timedelta(days=400))
    memory.remember("Went sailing in Greece", user_id="ada", category="context", source=long_ago)
    hits = memory.recall("what did I do this week?", user_id="ada", k=2)
    assert next(h.fact.content for h in hits) == "Went hiking in the Alps"
    assert hits[0].parts.time > 0 and hits[1].parts.time == 0.0
    assert hits[0].weights is not None and hits[0].weights.time > 0
    assert memory.recall("hiking", user_id="ada", k=1)[0].parts.time == 0.0


def test_a_time_that_every_fact_matches_alike_counts_for_nothing(memory: Memory) -> None:
    # Everything was said minutes ago: "this week" cannot tell the facts apart.
    memory.remember("Went hiking in the Alps", user_id="ada", category="context")
    memory.remember("Went sailing in Greece", user_id="ada", category="context")
    hits = memory.recall("what did I do this week?", user_id="ada", k=2)
    assert [h.parts.time for h in hits] == [0.0, 0.0]
    assert all(h.weights is not None and h.weights.time == 0.0 for h in hits)
