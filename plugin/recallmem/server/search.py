"""``/v1/users/{user_id}/search``: the retrieval view, every hit with why it ranked."""

from __future__ import annotations

import time

from fastapi import APIRouter

from recallmem.server.admission import AdmittedRoute
from recallmem.server.auth import UserId
from recallmem.server.problems import PROBLEM_RESPONSES
from recallmem.server.schemas import SearchRequest, SearchResult
from recallmem.server.state import State

router = APIRouter(
    prefix="/v1/users/{user_id}",
    tags=["search"],
    responses=PROBLEM_RESPONSES,
    route_class=AdmittedRoute,
)


@router.post("/search", response_model=SearchResult, summary="Recall facts for a query")
async def search(user: UserId, state: State, body: SearchRequest) -> SearchResult:
    """The user's shared facts plus ``agent_id``'s own, ranked, with the score parts
    (dense, lexical, recency, confidence) of every hit."""
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
    state.recalls.record(user, seconds=took, hits=len(hits))
    return SearchResult(query=body.query, hits=hits, took_ms=round(took * 1000, 3))
