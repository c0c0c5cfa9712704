"""A new thread meets what the user said moments ago elsewhere.

A finished turn is extracted after ``debounce_seconds`` of quiet in its thread (30 s by
default). A user who says "from now on, reports in Chinese", closes the chat and opens a
new one at once would otherwise start without it. When a thread starts while turns of
the same user wait in other threads, :class:`FreshThreads` (the ``fresh_threads`` setting
of :class:`~recallmem.MemoryMiddleware`):

- ``"extract"`` (default): extracts that user's waiting windows now, for at most
  ``fresh_wait_seconds``; the facts this gives go into the new thread's block. What is
  still waiting when the wait ends (the model is slow or down) is carried instead, as
  below; the extraction goes on in the background and nothing queued is lost.
- ``"carry"``: no model call; the user's waiting words are carried into the new thread
  as a marked note (their own words, quoted, never instructions).
- ``"off"``: neither.

The latency this adds to a new thread's first turn is measured in docs/benchmarks.md
(agent-loop).
"""

from __future__ import annotations

import logging
import threading
import time
from dataclasses import dataclass, field
from datetime import tzinfo
from typing import Literal

from recallmem.agent.scope import Scope
from recallmem.errors import RecallmemError
from recallmem.extraction.report import ExtractionReport
from recallmem.memory import Memory
from recallmem.types import Fact

FreshMode = Literal["extract", "carry", "off"]
FRESH_MODES: tuple[FreshMode, ...] = ("extract", "carry", "off")
log = logging.getLogger("recallmem.agent")


@dataclass(frozen=True)
class CatchUp:
    """What a new thread gets of the user's waiting turns."""

    facts: tuple[Fact, ...] = ()  # extracted from them just now
    said: tuple[tuple[str, str], ...] = ()  # (when, text) still waiting, oldest first
    waited: float = 0.0  # seconds the turn waited for the extraction


@dataclass
class FreshThreads:
    """Catches a new thread up with the user's turns still waiting for extraction."""

    memory: Memory
    mode: FreshMode = "extract"
    wait_seconds: float = 2.0
    _running: dict[str, threading.Thread] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.mode not in FRESH_MODES:
            raise ValueError(f"fresh_threads must be one of {FRESH_MODES}, not {self.mode!r}")
        if self.wait_seconds < 0:
            raise ValueError("fresh_wait_seconds must be 0 or more")

    def _waiting(self, scope: Scope, zone: tzinfo) -> list[tuple[str, str]]:
        said = []
        for entry in self.memory.queue.pending(scope.user_id):
            if entry.thread_id == scope.thread_id:
                continue
            at = entry.first_pending_at
            when = at.astimezone(zone).strftime("%Y-%m-%d %H:%M") if at is not None else ""
            said += [(when, u.content) for u in entry.messages if u.role == "user"]
        return said

    def _extract(self, user_id: str) -> tuple[list[ExtractionReport], float]:
        """The user's waiting windows extracted, if that ends within the wait."""
        reports: list[ExtractionReport] = []

        def run() -> None:
            try:
                reports.extend(self.memory.flush(self.wait_seconds, user_id=user_id))
            except RecallmemError as exc:  # the windows stay queued for the worker
                log.warning("recallmem: could not extract the waiting turns: %s", exc)

        start = time.perf_counter()
        # One catch-up per user at a time; a second new thread waits on the same one.
        worker = self._running.get(user_id)
        if worker is None or not worker.is_alive():
            worker = threading.Thread(target=run, name="recallmem-fresh-thread", daemon=True)
            self._running[user_id] = worker
            worker.start()
        worker.join(self.wait_seconds)
        done = not worker.is_alive()
        return (reports if done else []), time.perf_counter() - start

    def catch_up(self, scope: Scope, zone: tzinfo) -> CatchUp:
        """What the new thread ``scope`` should carry of the user's waiting turns (``zone``:
        the user's, for the times shown)."""
        if self.mode == "off" or not self._waiting(scope, zone):
            return CatchUp()
        facts: list[Fact] = []
        waited = 0.0
        if self.mode == "extract" and self.memory.model is not None:
            reports, waited = self._extract(scope.user_id)
            facts = [c.fact for r in reports if r.user_id == scope.user_id for c in r.added]
        return CatchUp(tuple(facts), tuple(self._waiting(scope, zone)), waited)


__all__ = ["FRESH_MODES", "CatchUp", "FreshMode", "FreshThreads"]
