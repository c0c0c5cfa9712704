from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pytest
from recallmem.testing import HashingEmbeddings

from bench.data import Corpus, Dataset, Doc, Query, load_locomo, load_madial
from bench.runner import cited_evidence, run
from bench.systems import make_system
from bench.systems.base import Hit
from bench.systems.bm25 import BM25, tokenize


class Scripted:
    """Answers each query with a fixed ranking, so the expected scores are known."""

    name = "scripted"

    def __init__(self, rankings: dict[str, list[Hit]]) -> None:
        self.rankings = rankings
        self.added: dict[str, list[str]] = {}

    def add(self, user_id: str, docs: Sequence[Doc]) -> None:
        self.added.setdefault(user_id, []).extend(d.id for d in docs)

    def search(self, user_id: str, query: str, k: int) -> list[Hit]:
        return self.rankings[query][:k]

    def close(self) -> None:
        return None


def _toy_dataset() -> Dataset:
    docs = (
        Doc("a", "Ann adopted Rex", frozenset({"D1:1"})),
        Doc("b", "Bo runs", frozenset({"D1:2"})),
        Doc("c", "Rex chewed a case", frozenset({"D2:1", "D1:1"})),
    )
    queries = (
        Query("q1", "puppy", frozenset({"D1:1"}), "single-hop"),
        Query("q2", "chew", frozenset({"D2:1", "D1:2"}), "multi-hop"),
    )
    return Dataset("toy", (Corpus("u", docs, queries),), (1, 2))


def test_run_scores_hand_checked_rankings() -> None:
    system = Scripted(
        {
            "puppy": [frozenset({"b"}), frozenset({"a"})],
            "chew": [frozenset({"c"}), frozenset({"b"})],
        }
    )
    result = run(system, _toy_dataset())
    # q1: R@1 = 0, R@2 = 1; q2: R@1 = 1/2 (c cites D2:1), R@2 = 1.
    assert result.recall["single-hop"] == {1: 0.0, 2: 100.0}
    assert result.recall["multi-hop"] == {1: 50.0, 2: 100.0}
    assert result.recall["overall"] == {1: 25.0, 2: 100.0}
    assert result.query_counts == {"single-hop": 1, "multi-hop": 1}
    assert system.added == {"u": ["a", "b", "c"]}
    assert result.n_docs == 3
    assert result.n_queries == 2
    assert set(result.to_json()["recall"]["overall"]) == {"1", "2"}


def test_a_merged_hit_cites_every_document_it_stands_for() -> None:
    corpus = _toy_dataset().corpora[0]
    assert cited_evidence([frozenset({"a", "b"}), frozenset({"zz"})], corpus) == [
        frozenset({"D1:1", "D1:2"}),
        frozenset(),
    ]


def test_bm25_tokenizes_words_and_cjk_bigrams() -> None:
    assert tokenize("Rex's 冰淇淋 ok") == ["rex", "s", "冰淇", "淇淋", "ok"]
    assert tokenize("吃") == ["吃"]


def test_bm25_ranks_the_document_sharing_rare_terms_first() -> None:
    bm25 = BM25()
    bm25.add("u", _toy_dataset().corpora[0].docs)
    assert bm25.search("u", "who chewed the case", 1) == [frozenset({"c"})]
    assert bm25.search("nobody", "x", 3) == []


@pytest.mark.parametrize("name", ["dense-numpy", "bm25", "langgraph-store", "langmem", "recallmem"])
def test_each_system_runs_end_to_end_on_toy_locomo(
    name: str, toy_data: Path, tmp_path: Path
) -> None:
    if name in ("langgraph-store", "langmem"):
        pytest.importorskip("langmem")
    dataset = load_locomo("fact", path=toy_data / "locomo" / "locomo10.json")
    system = make_system(name, HashingEmbeddings(dimension=64), tmp_path / "work")
    try:
        result = run(system, dataset)
    finally:
        system.close()
    # Every corpus has at most 3 facts, so the top 5 holds them all: recall is complete.
    assert result.recall["overall"] == {5: 100.0, 10: 100.0, 20: 100.0}
    assert result.system == name


def test_recallmem_on_toy_madial_finds_the_relevant_memory(toy_data: Path, tmp_path: Path) -> None:
    dataset = load_madial(folder=toy_data / "madial_bench_zh")
    system = make_system("recallmem", HashingEmbeddings(dimension=64), tmp_path / "work")
    try:
        result = run(system, dataset)
    finally:
        system.close()
    # user 1 holds two memories and user 2 one: within k=3 every relevant id is found.
    assert result.recall["overall"][3] == 100.0


def test_unknown_system_is_named() -> None:
    with pytest.raises(ValueError, match="unknown system 'nope'"):
        make_system("nope", HashingEmbeddings(), Path("."))


def test_langgraph_store_accepts_repeated_texts(tmp_path: Path) -> None:
    pytest.importorskip("langgraph")
    docs = (
        Doc("a", "Bart got a new bike", frozenset({"a"})),
        Doc("b", "Bart got a new bike", frozenset({"b"})),
        Doc("c", "Lisa likes mango ice cream", frozenset({"c"})),
    )
    system = make_system("langgraph-store", HashingEmbeddings(dimension=64), tmp_path)
    system.add("u", docs)
    found = system.search("u", "new bike", 3)
    assert {d for hit in found for d in hit} == {"a", "b", "c"}
