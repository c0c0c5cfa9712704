"""What one extraction did, and why: the report returned by ``extract`` and ``flush``.

A :class:`Journal` is what the queue keeps between extraction and write (the plan and
the tokens it cost); the report is built from it and the records as written.

>>> report = ExtractionReport(user_id="u", thread_id="t")
>>> report.summary()
'nothing to remember (0 messages, 0 model calls, 0 prompt tokens)'
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable, Mapping

from pydantic import BaseModel, ConfigDict

from recallmem.extraction.parser import TokenUsage
from recallmem.extraction.write_plan import (
    Add,
    Confirm,
    Dropped,
    Evict,
    MarkDone,
    Plan,
    Supersede,
)
from recallmem.types import Fact


class Journal(BaseModel):
    """A window's extraction as journaled before its plan is applied."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    plan: Plan
    usage: TokenUsage = TokenUsage()
    model: str | None = None
    prompt: str | None = None
    messages: int = 0


class Change(BaseModel):
    """A fact as written, and why it changed."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    fact: Fact
    reason: str


class ExtractionReport(BaseModel):
    """What one window (or several, merged) added, confirmed, superseded and dropped."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    user_id: str
    thread_id: str
    agent_id: str | None = None
    messages: int = 0
    added: tuple[Change, ...] = ()
    confirmed: tuple[Change, ...] = ()
    superseded: tuple[Change, ...] = ()
    done: tuple[Change, ...] = ()
    evicted: tuple[Change, ...] = ()
    dropped: tuple[Dropped, ...] = ()
    profile_sections: tuple[str, ...] = ()
    usage: TokenUsage = TokenUsage()
    model: str | None = None
    prompt: str | None = None
    replayed: bool = False
    error: str | None = None

    def merge(self, other: ExtractionReport) -> ExtractionReport:
        """This report and a later one of the same thread, as one."""
        return self.model_copy(
            update={
                "messages": self.messages + other.messages,
                "added": self.added + other.added,
                "confirmed": self.confirmed + other.confirmed,
                "superseded": self.superseded + other.superseded,
                "done": self.done + other.done,
                "evicted": self.evicted + other.evicted,
                "dropped": self.dropped + other.dropped,
                "profile_sections": tuple(
                    dict.fromkeys(self.profile_sections + other.profile_sections)
                ),
                "usage": self.usage + other.usage,
                "model": other.model or self.model,
                "prompt": other.prompt or self.prompt,
                "replayed": self.replayed or other.replayed,
                "error": other.error or self.error,
            }
        )

    def summary(self) -> str:
        """One line for logs and the CLI."""
        counts = [
            (len(self.added), "added"),
            (len(self.confirmed), "confirmed"),
            (len(self.superseded), "superseded"),
            (len(self.done), "done"),
            (len(self.evicted), "evicted"),
            (len(self.dropped), "dropped"),
        ]
        said = ", ".join(f"{n} {what}" for n, what in counts if n) or "nothing to remember"
        cost = (
            f"{self.messages} messages, {self.usage.calls} model calls, "
            f"{self.usage.input_tokens} prompt tokens"
        )
        failed = f"; failed: {self.error}" if self.error else ""
        return f"{said} ({cost}){failed}"


def build_report(
    journal: Journal, written: Mapping[str, Fact], *, thread_id: str, replayed: bool
) -> ExtractionReport:
    """The report of an applied journal; ``written`` holds the records as they now are."""
    buckets: dict[type, list[Change]] = {
        kind: [] for kind in (Add, Confirm, Supersede, MarkDone, Evict)
    }
    for op in journal.plan.operations:
        fact_id = op.fact.id if isinstance(op, Add) else op.fact_id
        fact = written.get(fact_id)
        if fact is not None:
            buckets[type(op)].append(Change(fact=fact, reason=op.reason))
    plan = journal.plan
    return ExtractionReport(
        user_id=plan.user_id,
        agent_id=plan.agent_id,
        thread_id=thread_id,
        messages=journal.messages,
        added=tuple(buckets[Add]),
        confirmed=tuple(buckets[Confirm]),
        superseded=tuple(buckets[Supersede]),
        done=tuple(buckets[MarkDone]),
        evicted=tuple(buckets[Evict]),
        dropped=plan.dropped,
        profile_sections=tuple(change.section for change in plan.profile),
        usage=journal.usage,
        model=journal.model,
        prompt=journal.prompt,
        replayed=replayed,
    )


class RecentReports:
    """The last reports of windows extracted in the background, newest kept."""

    def __init__(self, keep: int = 100) -> None:
        self._reports: deque[ExtractionReport] = deque(maxlen=keep)
        self._lock = threading.Lock()

    def add(self, report: ExtractionReport, *, unless: Callable[[], object] | None = None) -> None:
        """Keep a report (the oldest is dropped past ``keep``), unless ``unless()``, asked
        under the lock :meth:`forget` takes (a purge of the user meanwhile)."""
        with self._lock:
            if unless is None or not unless():
                self._reports.append(report)

    def forget(self, user_id: str) -> None:
        """Drop every report of the user (a purge: reports quote the user's words)."""
        with self._lock:
            kept = [r for r in self._reports if r.user_id != user_id]
            self._reports.clear()
            self._reports.extend(kept)

    def latest(self, user_id: str | None = None, limit: int = 20) -> list[ExtractionReport]:
        """The newest reports first, of one user if given."""
        with self._lock:
            newest = list(reversed(self._reports))
        return [r for r in newest if user_id is None or r.user_id == user_id][:limit]
