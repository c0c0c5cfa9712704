"""Derived arrays brought up to date row by row equal those computed from scratch."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from recallmem.retrieval.derived import Derived
from recallmem.retrieval.index import Query, UserIndex
from recallmem.retrieval.lexical import LexicalIndex
from recallmem.retrieval.ranking import Weights
from recallmem.types import Category, Fact, Status

TEXTS = [
    "Switched from Vim to Neovim last month",
    "其实是周五，不是周四",
    "Lives in Munich with her partner",
    "喜欢喝乌龙茶，不加糖",
    "Allergic to shellfish",
    "现在改用 Pytest 了",
    "Runs a half marathon every spring",
]
QUERIES = ["what editor do I use", "周五", "where do I live", "茶", "shellfish allergy", "pytest"]
NOW = datetime(2026, 12, 4, tzinfo=UTC)


def _fact(n: int, text: str, **change: object) -> Fact:
    base = Fact(
        id=f"f{n}", content=text, category=Category.CONTEXT, user_id="u",
        created_at=NOW - timedelta(days=n), updated_at=NOW - timedelta(days=n),
    )  # fmt: skip
    return base.model_copy(update=change)


def assert_same(grown: Derived, fresh: Derived) -> None:
    for name in ("active", "shared", "agents", "categories", "confidence", "seen", "said",
                 "pinned", "alive", "until", "cjk"):  # fmt: skip
        assert getattr(grown, name).tolist() == getattr(fresh, name).tolist(), name
    for got, want in zip(grown.change_flags, fresh.change_flags, strict=True):
        assert got.tolist() == want.tolist()
    for query in QUERIES:
        assert grown.lexical.scores(query).tolist() == fresh.lexical.scores(query).tolist()
    assert grown.lexical.length_norm(0.75).tolist() == fresh.lexical.length_norm(0.75).tolist()


# One change to a user's facts: a new fact, or a field of a stored one.
change = st.one_of(
    st.tuples(st.just("add"), st.sampled_from(TEXTS)),
    st.tuples(st.just("status"), st.integers(0, 99)),
    st.tuples(st.just("text"), st.integers(0, 99), st.sampled_from(TEXTS)),
    st.tuples(st.just("keywords"), st.integers(0, 99), st.sampled_from(["茶", "editor", "周五"])),
    st.tuples(st.just("correction"), st.integers(0, 99)),
    st.tuples(st.just("pin"), st.integers(0, 99)),
)


@settings(max_examples=150, deadline=None)
@given(start=st.lists(st.sampled_from(TEXTS), max_size=6),
       writes=st.lists(st.lists(change, min_size=1, max_size=4), max_size=4))  # fmt: skip
def test_updated_rows_equal_arrays_computed_from_scratch(
    start: list[str], writes: list[list[tuple[object, ...]]]
) -> None:
    facts = [_fact(n, text) for n, text in enumerate(start)]
    derived = Derived(facts)
    derived.lexical, derived.change_flags  # noqa: B018  (built, as after a first search)
    for write in writes:
        facts, replaced = list(facts), []
        for kind, *args in write:
            if kind == "add" or not facts:
                facts.append(_fact(len(facts), str(args[-1]) if kind != "status" else TEXTS[0]))
                continue
            row = int(str(args[0])) % len(facts)
            old = facts[row]
            facts[row] = old.model_copy(update={
                "status": {"status": Status.SUPERSEDED if old.status is Status.ACTIVE
                           else Status.ACTIVE},
                "text": {"content": args[-1]},
                "keywords": {"keywords": (args[-1],)},
                "correction": {"category": Category.CORRECTION},
                "pin": {"pinned": not old.pinned},
            }[str(kind)])  # fmt: skip
            replaced.append(row)
        derived = derived.updated(facts, replaced)
        assert_same(derived, Derived(facts))


def test_a_new_fact_extends_the_lexical_index_and_a_rewritten_text_rebuilds_it() -> None:
    facts = [_fact(0, TEXTS[0]), _fact(1, TEXTS[2])]
    derived = Derived(facts)
    built = derived.lexical
    grown = derived.updated([*facts, _fact(2, TEXTS[3])], replaced=[])
    assert "lexical" in vars(grown) and grown.lexical is not built
    assert built.size == 2  # the old index is unchanged: a search holding it sees its rows
    edited = grown.updated([facts[0].model_copy(update={"content": "Uses Emacs"}), *facts[1:],
                            _fact(2, TEXTS[3])], replaced=[0])  # fmt: skip
    assert "lexical" not in vars(edited)  # built again, from every text, at the next search
    assert edited.lexical.rows_with(["emac"]).tolist() == [True, False, False]


def test_an_extended_lexical_index_scores_as_one_built_at_once() -> None:
    once = LexicalIndex(TEXTS, keywords=[("k",)] * len(TEXTS))
    grown = LexicalIndex(TEXTS[:3], keywords=[("k",)] * 3).extended(
        TEXTS[3:], keywords=[("k",)] * (len(TEXTS) - 3)
    )
    for query in QUERIES:
        assert grown.scores(query).tolist() == once.scores(query).tolist()


@pytest.mark.parametrize("searched_first", [True, False])
def test_a_user_index_searches_after_writes_as_one_loaded_afresh(searched_first: bool) -> None:
    rng = np.random.default_rng(7)
    vectors = rng.normal(size=(len(TEXTS), 8)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    facts = [_fact(n, t) for n, t in enumerate(TEXTS)]
    index = UserIndex("u", facts[:4], vectors[:4])
    query = Query(text="周五 tea editor", vector=vectors[1], k=7)
    if searched_first:
        index.search(query, Weights(), NOW)
    index.upsert(facts[4:], vectors[4:])
    index.upsert([facts[0].model_copy(update={"status": Status.SUPERSEDED})])
    fresh = UserIndex("u", index.facts(), vectors)
    got, want = index.search(query, Weights(), NOW), fresh.search(query, Weights(), NOW)
    assert [(h.fact.id, h.score) for h in got] == [(h.fact.id, h.score) for h in want]
