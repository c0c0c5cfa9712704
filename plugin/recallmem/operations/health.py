"""``memory.health()``: whether this Memory can serve now, in one call.

The store answers a read of a fact record and of a profile or revision record (within
``timeout`` seconds when one is given: a hung Chroma server is as good as unreachable),
this process still owns the store's home if it needs to (an embedded store), and the
extraction queue works. A failing queue is reported apart: facts and recall still work
without it.

>>> from recallmem import Memory, MemoryConfig
>>> from recallmem.testing import HashingEmbeddings
>>> memory = Memory(MemoryConfig(store="memory"), embeddings=HashingEmbeddings())
>>> report = memory.health()
>>> report.ok, report.store.kind, report.hold.mode
(True, 'memory', 'none')
>>> memory.close()
"""

from __future__ import annotations

import threading
import time

from pydantic import BaseModel, ConfigDict, Field

from recallmem.errors import RecallmemError
from recallmem.operations.queue_admin import QueueAdmin
from recallmem.store.fact_store import FactStore, HomeHold


class StoreState(BaseModel):
    """Whether the store answered its reads, and how fast."""

    model_config = ConfigDict(frozen=True)

    kind: str = Field(description="'memory', 'chroma-embedded' or 'chroma-server'")
    reachable: bool
    seconds: float | None = Field(default=None, description="How long the reads took")
    problem: str | None = None


class MemoryHealth(BaseModel):
    """The store, this process's hold on its home, and the extraction queue."""

    model_config = ConfigDict(frozen=True)

    store: StoreState
    hold: HomeHold
    queue_problems: list[str] = Field(default_factory=list)

    @property
    def ok(self) -> bool:
        """The store reads, this process holds what it must, and the queue works."""
        return self.store.reachable and self.hold.held and not self.queue_problems


def check_health(store: FactStore, queue: QueueAdmin, timeout: float | None) -> MemoryHealth:
    """Probe ``store`` (giving up after ``timeout`` seconds, if given), then the queue
    if the store answered."""
    state = _probe(store, timeout)
    problems = queue.problems() if state.reachable else []
    return MemoryHealth(store=state, hold=store.hold(), queue_problems=problems)


def _probe(store: FactStore, timeout: float | None) -> StoreState:
    failure: list[Exception] = []

    def read() -> None:
        try:
            store.count()
            store.probe()
        except Exception as exc:  # handed to the caller's thread below
            failure.append(exc)

    started = time.monotonic()
    reader = threading.Thread(target=read, name="recallmem-health", daemon=True)
    reader.start()
    reader.join(timeout)
    if reader.is_alive():
        problem = (
            f"the store did not answer within {timeout:g} s; check that the Chroma server "
            "is up and not overloaded"
        )
        return StoreState(kind=store.kind, reachable=False, problem=problem)
    if failure and isinstance(failure[0], RecallmemError):
        return StoreState(kind=store.kind, reachable=False, problem=str(failure[0]))
    if failure:
        raise failure[0]
    seconds = round(time.monotonic() - started, 4)
    return StoreState(kind=store.kind, reachable=True, seconds=seconds)
