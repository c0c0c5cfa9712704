"""A large user's search measures cosines from the memory's centre, and keeps it current."""

from __future__ import annotations

from datetime import UTC, datetime

import numpy as np
from recallmem.retrieval.index import Query, UserIndex
from recallmem.retrieval.ranking import Weights
from recallmem.types import Category, Fact

NOW = datetime(2026, 12, 1, tzinfo=UTC)


def _unit(rows: np.ndarray) -> np.ndarray:
    normed: np.ndarray = rows / np.linalg.norm(rows, axis=-1, keepdims=True)
    return normed.astype(np.float32)


def _fact(n: int, **fields: object) -> Fact:
    return Fact(id=f"f{n}", content=f"note {n}", category=Category.CONTEXT, user_id="ada",
                **fields)  # type: ignore[arg-type]  # fmt: skip


def _memory() -> tuple[UserIndex, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(0)
    common, own = _unit(rng.standard_normal(32)), _unit(rng.standard_normal(32))
    hubs = _unit(common + 0.15 * rng.standard_normal((1500, 32)))  # near every query
    answer = _unit(0.3 * common + own)
    facts = [_fact(n) for n in range(1501)]
    return UserIndex("ada", facts, np.vstack([hubs, answer])), _unit(common + 0.5 * own), own


def _first(index: UserIndex, vector: np.ndarray, weights: Weights, **scope: object) -> str:
    query = Query(text="", vector=vector, k=1, **scope)  # type: ignore[arg-type]
    return index.search(query, weights, NOW)[0].fact.id


def test_the_answer_comes_first_from_the_centre_and_not_from_plain_cosine() -> None:
    index, query, _ = _memory()
    assert _first(index, query, Weights()) == "f1500"
    assert _first(index, query, Weights(centring=0.0)) != "f1500"


def test_a_search_over_part_of_the_memory_uses_the_same_centre() -> None:
    index, query, _ = _memory()
    index.upsert([_fact(n, agent_id="bot") for n in range(0, 1500, 2)])  # out of scope
    assert _first(index, query, Weights(), agent_id=None) == "f1500"


def test_the_centre_follows_the_facts_a_write_adds() -> None:
    index, query, own = _memory()
    assert _first(index, query, Weights()) == "f1500"
    # A thousand facts more along the answer's own direction move the centre there:
    # what made the answer stand out is now what most of the memory says.
    rng = np.random.default_rng(1)
    crowd = _unit(own + 0.05 * rng.standard_normal((3000, 32)))
    index.upsert([_fact(n) for n in range(1501, 4501)], crowd)
    top = index.search(Query(text="", vector=query, k=3), Weights(), NOW)
    assert "f1500" not in {hit.fact.id for hit in top}
