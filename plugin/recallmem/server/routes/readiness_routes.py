"""``/v1/live`` and ``/v1/ready``: the checks a load balancer and an orchestrator ask.

- Liveness says this worker process answers; it touches no store, so an unreachable
  Chroma server never gets healthy workers restarted.
- Readiness says whether this worker can serve memory now: the store answers a read of
  each collection (facts; profiles and revisions) within the timeout, and the process
  holds what it must (an embedded store: this process owns the home's lock; a Chroma
  server: no lock, the server serialises writers). ``503`` with the same body when
  not, so a load balancer takes the worker out until it is. A failing extraction queue
  or an unreachable chat model is reported but does not make a worker unready: facts and
  recall still work. The model's state comes from the last chat turn, or from listing the
  endpoint's models at most once a minute: a probe never calls the model.

Neither needs a token or tells anything about a user.
"""

from __future__ import annotations

import asyncio
import os
import time
from typing import Literal

from fastapi import APIRouter
from fastapi.responses import JSONResponse
from pydantic import BaseModel, Field

from recallmem.server.problems import PROBLEM_RESPONSES
from recallmem.server.state import ServiceState, State

router = APIRouter(tags=["service"], responses=PROBLEM_RESPONSES)

STORE_TIMEOUT_SECONDS = 5.0  # a store slower than this is as good as unreachable here
_STARTED_AT = time.time()


class Liveness(BaseModel):
    """This worker process answers."""

    status: Literal["alive"] = "alive"
    pid: int


class StoreCheck(BaseModel):
    """Whether the store answered a read of each collection."""

    kind: Literal["chroma-server", "chroma-embedded", "memory"]
    reachable: bool
    seconds: float | None = Field(default=None, description="How long the reads took")
    problem: str | None = None


class LockCheck(BaseModel):
    """Who may write the store from here."""

    mode: Literal["home-lock", "none"] = Field(
        description="'home-lock': an embedded store, owned by one process; 'none': a "
        "Chroma server, which any number of workers share, or a store in memory"
    )
    held: bool = Field(description="This process holds what its mode needs")
    holder_pid: int | None = Field(default=None, description="The pid the lock file names")


class ModelCheck(BaseModel):
    """The chat model's endpoint as this worker last saw it: by a chat turn, or by listing
    the endpoint's models at most once a minute (a probe never calls the model)."""

    base_url: str = Field(description="Where calls go")
    model: str
    reachable: bool | None = Field(description="None until first seen")
    problem: str | None = Field(default=None, description="What failed, and what to check")
    seen_seconds_ago: float | None = None
    seen_by: Literal["call", "check"] | None = None


def model_check(state: ServiceState) -> ModelCheck | None:
    """The chat model endpoint's state (None: no OpenAI-compatible model configured);
    blocks for at most one check's timeout when the state is stale."""
    if state.model_status is None:
        return None
    seen = state.model_status.current()
    return ModelCheck(base_url=seen.endpoint.where, model=seen.endpoint.model,
                      reachable=seen.reachable, problem=seen.problem,
                      seen_seconds_ago=seen.seen_seconds_ago, seen_by=seen.seen_by)  # fmt: skip


class WorkerState(BaseModel):
    """This worker among its siblings."""

    pid: int
    workers: int = Field(description="Worker processes this service was started with")
    uptime_seconds: float


class Readiness(BaseModel):
    """Whether this worker can serve memory now, and why not."""

    status: Literal["ready", "not-ready"]
    problems: list[str] = Field(default_factory=list, description="What fails, and what to do")
    store: StoreCheck
    lock: LockCheck
    worker: WorkerState
    queue_problems: list[str] = Field(
        default_factory=list, description="Extraction queue failures (not a reason for 503)"
    )
    model: ModelCheck | None = Field(
        default=None,
        description="The chat model's endpoint (not a reason for 503: memory works without "
        "it; turns stay queued); null when none is configured",
    )


@router.get("/v1/live", response_model=Liveness, summary="Liveness (touches no store)")
async def live() -> Liveness:
    """``200`` while this worker process answers requests."""
    return Liveness(pid=os.getpid())


@router.get(
    "/v1/ready",
    response_model=Readiness,
    summary="Readiness",
    responses={503: {"model": Readiness, "description": "Not ready: see problems"}},
)
async def ready(state: State) -> JSONResponse:
    """``200`` when the store answers and this process holds what it must; ``503``
    (same body) otherwise."""
    health = await asyncio.to_thread(state.memory.health, STORE_TIMEOUT_SECONDS)
    store, hold = health.store, health.hold
    problems = [store.problem] if store.problem else []
    if not hold.held:
        problems.append(
            f"this process (pid {os.getpid()}) no longer owns the embedded home; the lock "
            f"file names pid {hold.holder_pid}. Restart the service."
        )
    report = Readiness(
        status="not-ready" if problems else "ready",
        problems=problems,
        store=StoreCheck.model_validate(store.model_dump()),
        lock=LockCheck(mode=hold.mode, held=hold.held, holder_pid=hold.holder_pid),
        worker=WorkerState(
            pid=os.getpid(),
            workers=state.settings.workers,
            uptime_seconds=round(time.time() - _STARTED_AT, 3),
        ),
        queue_problems=health.queue_problems,
        model=await asyncio.to_thread(model_check, state),
    )
    return JSONResponse(report.model_dump(mode="json"), status_code=503 if problems else 200)
