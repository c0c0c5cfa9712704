"""``/v1/users/{user_id}/search``: the retrieval view, every hit with why it ranked.

Also ``search/explain`` (where one fact ranks for a query, and why: the inspector's
"why not this one").
"""

from __future__ import annotations

import time

from fastapi import APIRouter

from recallmem.embedders import recall_floor
from recallmem.server.admission import AdmittedRoute
from recallmem.server.auth import UserId
from recallmem.server.problems import PROBLEM_RESPONSES, problem_response
from recallmem.server.schemas import (
    MAX_SEARCH_K,
    ExplainRequest,
    Explanation,
    SearchRequest,
    SearchResult,
)
from recallmem.server.state import State
from recallmem.types import Fact, ScoredFact, Status

router = APIRouter(
    prefix="/v1/users/{user_id}",
    tags=["search"],
    responses=PROBLEM_RESPONSES,
    route_class=AdmittedRoute,
)

PARTS = ("dense", "lexical", "recency", "confidence", "time", "newer")


@router.post("/search", response_model=SearchResult, summary="Recall facts for a query")
async def search(user: UserId, state: State, body: SearchRequest) -> SearchResult:
    """The user's shared facts plus ``agent_id``'s own, ranked, with the score parts
    (dense, lexical, recency, confidence, time, newer; and the search key matched) of
    every hit and the weights they were summed with (``score = sum(weight * part)``)."""
    started = time.perf_counter()
    hits = await state.memory.arecall(
        body.query,
        user_id=user,
        k=body.k,
        agent_id=body.agent_id,
        categories=body.categories,
        min_score=body.min_score,
        include_inactive=body.include_inactive,
    )
    took = time.perf_counter() - started
    floor = recall_floor(state.memory.config.recall_floor, state.memory.embeddings)
    # The hit rate counts what an agent would have been shown: hits at or above the floor.
    state.recalls.record(user, seconds=took, hits=sum(h.score >= floor for h in hits))
    return SearchResult(query=body.query, hits=hits, took_ms=round(took * 1000, 3), floor=floor)


def _shortfall(hit: ScoredFact, kth: ScoredFact) -> str:
    """The part that cost the fact most against the k-th hit, as weight x part."""
    if hit.weights is None or kth.weights is None:
        return ""

    def term(scored: ScoredFact, name: str) -> float:
        return float(getattr(scored.weights, name)) * float(getattr(scored.parts, name))

    worst = max(PARTS, key=lambda name: term(kth, name) - term(hit, name))
    weight = getattr(hit.weights, worst)
    return (
        f"; it loses most on {worst}: {weight:.2f}×{getattr(hit.parts, worst):.2f} "
        f"against {weight:.2f}×{getattr(kth.parts, worst):.2f}"
    )


def _unranked_reason(fact: Fact, body: ExplainRequest, ranked: list[ScoredFact]) -> str:
    if fact.status is not Status.ACTIVE and not body.include_inactive:
        return f"it is {fact.status.value}; recall searches active facts only (include inactive)"
    if fact.agent_id is not None and fact.agent_id != body.agent_id:
        return f"it is agent {fact.agent_id!r}'s own fact; recall as that agent to rank it"
    if body.categories and fact.category not in body.categories:
        return f"its category {fact.category.value} is not among the categories asked for"
    floor = f" (the last of them scored {ranked[-1].score:.3f})" if ranked else ""
    return f"it is not among the first {len(ranked)} candidates{floor}"


def _ranked_reason(rank: int, hit: ScoredFact, body: ExplainRequest, kth: ScoredFact | None) -> str:
    if rank <= body.k or kth is None:
        return f"ranked {rank}: in the top {body.k}"
    return (
        f"ranked {rank}: below the top {body.k}; it scored {hit.score:.3f}, hit #{body.k} "
        f"{kth.score:.3f}{_shortfall(hit, kth)}"
    )


@router.post(
    "/search/explain",
    response_model=Explanation,
    summary="Where one fact ranks for a query",
    responses={404: problem_response("No such fact for this user")},
)
async def explain(user: UserId, state: State, body: ExplainRequest) -> Explanation:
    """Rank the first ``MAX_SEARCH_K`` candidates for the query (no score floor) and say
    where ``fact_id`` is among them, with its score parts and weights, even when it is not
    in the top ``k``; when it is not ranked at all, say why (status, agent, category)."""
    fact = await state.memory.aget(body.fact_id, user_id=user)
    ranked = await state.memory.arecall(
        body.query,
        user_id=user,
        k=MAX_SEARCH_K,
        agent_id=body.agent_id,
        categories=body.categories,
        min_score=None,
        include_inactive=body.include_inactive,
    )
    rank = next((n for n, h in enumerate(ranked, 1) if h.fact.id == fact.id), None)
    hit = None if rank is None else ranked[rank - 1]
    kth = ranked[body.k - 1] if len(ranked) >= body.k else None
    reason = (
        _unranked_reason(fact, body, ranked)
        if rank is None or hit is None
        else _ranked_reason(rank, hit, body, kth)
    )
    return Explanation(
        query=body.query,
        fact=fact,
        k=body.k,
        depth=MAX_SEARCH_K,
        rank=rank,
        in_top_k=rank is not None and rank <= body.k,
        hit=hit,
        kth_score=None if kth is None else kth.score,
        reason=reason,
    )
