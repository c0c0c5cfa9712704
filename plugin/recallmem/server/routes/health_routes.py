"""``/v1/health`` and metrics: is the service up, and how is memory doing.

Health needs no token and tells nothing about any user. Metrics need a token: a user
token sees its own user's figures; the process-wide figures are for admin tokens.
"""

from __future__ import annotations

import asyncio
from importlib.metadata import PackageNotFoundError, version

from fastapi import APIRouter

from recallmem.errors import StoreError
from recallmem.memory import Memory
from recallmem.server.auth import Caller, UserId
from recallmem.server.problems import PROBLEM_RESPONSES, ProblemError
from recallmem.server.schemas import ExtractionStats, FactCounts, Health, Metrics
from recallmem.server.state import State
from recallmem.types import Status

router = APIRouter(tags=["service"], responses=PROBLEM_RESPONSES)

_COUNT_PAGE = 1000


def service_version() -> str:
    """The installed recallmem version."""
    try:
        return version("recallmem")
    except PackageNotFoundError:
        return "unknown"


@router.get("/v1/health", response_model=Health, summary="Liveness")
async def health(state: State) -> Health:
    """``ok`` when the store reads; ``degraded`` (with ``problems``) when the extraction
    queue fails or the chat model's endpoint was last seen failing, while facts still
    work; 503 when the store cannot be read. Also says which store and auth mode are in
    use."""
    report = await asyncio.to_thread(state.memory.health)
    if not report.store.reachable:
        raise StoreError(report.store.problem or "the store cannot be read")
    problems = list(report.queue_problems)
    if state.model_status is not None:
        seen = await asyncio.to_thread(state.model_status.current)
        if seen.reachable is False and seen.problem:
            problems.append(seen.problem)
    return Health(
        status="degraded" if problems else "ok",
        problems=problems,
        version=service_version(),
        store=report.store.kind,
        auth="open-loopback" if state.settings.open_access else "bearer",
    )


def count_facts(memory: Memory, user: str) -> FactCounts:
    """The user's facts by status."""
    counts = dict.fromkeys((s.value for s in Status), 0)
    offset = 0
    while True:
        page = memory.list(user_id=user, status=None, limit=_COUNT_PAGE, offset=offset)
        for fact in page:
            counts[fact.status.value] += 1
        if len(page) < _COUNT_PAGE:
            break
        offset += _COUNT_PAGE
    return FactCounts(**counts, total=sum(counts.values()))


def extraction_stats(memory: Memory, user: str | None) -> ExtractionStats:
    """Model calls and tokens the extraction queue recorded (for one user, or all)."""
    usage = memory.queue.usage(user_id=user)
    return ExtractionStats(
        calls=usage["calls"],
        input_tokens=usage["input_tokens"],
        output_tokens=usage["output_tokens"],
        keying_calls=usage["keying_calls"],
    )


@router.get("/v1/users/{user_id}/metrics", response_model=Metrics, summary="A user's metrics")
async def user_metrics(user: UserId, state: State) -> Metrics:
    """The user's fact counts, recall latency and hit rate, and extraction cost."""
    facts = await asyncio.to_thread(count_facts, state.memory, user)
    extraction = await asyncio.to_thread(extraction_stats, state.memory, user)
    return Metrics(
        scope=f"user:{user}", facts=facts, recall=state.recalls.view(user), extraction=extraction
    )


@router.get("/v1/metrics", response_model=Metrics, summary="Service-wide metrics (admin)")
async def service_metrics(principal: Caller, state: State) -> Metrics:
    """All users together: total facts, every recall served here, all extraction cost."""
    if not principal.admin:
        raise ProblemError(
            403,
            "Forbidden",
            "service-wide metrics need an admin token; a user's token can read "
            "/v1/users/me/metrics",
        )
    total = await asyncio.to_thread(state.memory.count)
    extraction = await asyncio.to_thread(extraction_stats, state.memory, None)
    return Metrics(
        scope="service",
        facts=FactCounts(total=total),
        recall=state.recalls.view(),
        extraction=extraction,
    )
