"""``/v1/live`` and ``/v1/ready``: the checks a load balancer and an orchestrator ask.

- Liveness says this worker process answers; it touches no store, so an unreachable
  Chroma server never gets healthy workers restarted.
- Readiness says whether this worker can serve memory now: the store answers a read of
  each collection (facts; profiles and revisions) within the timeout, and the process
  holds what it must (an embedded store: this process owns the home's lock; a Chroma
  server: no lock, the server serialises writers). ``503`` with the same body when
  not, so a load balancer takes the worker out until it is. A failing extraction queue
  is reported but does not make a worker unready: facts and recall still work.

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

from recallmem.errors import RecallmemError
from recallmem.memory import Memory
from recallmem.server.problems import PROBLEM_RESPONSES
from recallmem.server.routes.health_routes import check_store, queue_problems
from recallmem.server.state import State
from recallmem.store.chroma.home_lock import read_holder

router = APIRouter(tags=["service"], responses=PROBLEM_RESPONSES)

STORE_TIMEOUT_SECONDS = 5.0  # a store slower than this is as good as unreachable here
_STARTED_AT = time.time()


class Liveness(BaseModel):
    """This worker process answers."""

    status: Literal["alive"] = "alive"
    pid: int


class StoreCheck(BaseModel):
    """Whether the store answered a read of each collection."""

    kind: Literal["chroma-server", "chroma-embedded"]
    reachable: bool
    seconds: float | None = Field(default=None, description="How long the reads took")
    problem: str | None = None


class LockCheck(BaseModel):
    """Who may write the store from here."""

    mode: Literal["home-lock", "none"] = Field(
        description="'home-lock': an embedded store, owned by one process; 'none': a "
        "Chroma server, which any number of workers share"
    )
    held: bool = Field(description="This process holds what its mode needs")
    holder_pid: int | None = Field(default=None, description="The pid the lock file names")


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
    store = await _store_check(state.memory)
    lock = lock_check(state.memory)
    problems = [store.problem] if store.problem else []
    if not lock.held:
        problems.append(
            f"this process (pid {os.getpid()}) no longer owns the embedded home; the lock "
            f"file names pid {lock.holder_pid}. Restart the service."
        )
    report = Readiness(
        status="not-ready" if problems else "ready",
        problems=problems,
        store=store,
        lock=lock,
        worker=WorkerState(
            pid=os.getpid(),
            workers=state.settings.workers,
            uptime_seconds=round(time.time() - _STARTED_AT, 3),
        ),
        queue_problems=await asyncio.to_thread(queue_problems, state.memory)
        if store.reachable
        else [],
    )
    return JSONResponse(report.model_dump(mode="json"), status_code=503 if problems else 200)


async def _store_check(memory: Memory) -> StoreCheck:
    kind: Literal["chroma-server", "chroma-embedded"] = (
        "chroma-server" if memory.config.chroma_url else "chroma-embedded"
    )
    started = time.monotonic()
    try:
        await asyncio.wait_for(asyncio.to_thread(check_store, memory), STORE_TIMEOUT_SECONDS)
    except TimeoutError:
        problem = (
            f"the store did not answer within {STORE_TIMEOUT_SECONDS:g} s; check that the "
            "Chroma server is up and not overloaded"
        )
        return StoreCheck(kind=kind, reachable=False, problem=problem)
    except RecallmemError as exc:
        return StoreCheck(kind=kind, reachable=False, problem=str(exc))
    return StoreCheck(kind=kind, reachable=True, seconds=round(time.monotonic() - started, 4))


def lock_check(memory: Memory) -> LockCheck:
    """The embedded home's lock as the lock file names it; none for a Chroma server."""
    lock = memory.store.lock
    if lock is None:
        return LockCheck(mode="none", held=True)
    holder = read_holder(lock.home)
    pid = holder.pid if holder else None
    return LockCheck(mode="home-lock", held=pid == os.getpid(), holder_pid=pid)
