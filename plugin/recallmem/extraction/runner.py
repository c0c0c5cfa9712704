"""Running claimed windows: plan (or replay the journal), write, and settle the lease.

A window's plan is journaled before it is applied, so a crash in between is finished
after a restart without calling the model again. A failure keeps the window queued
with backoff (or moves it to the dead letters) and is reported, never raised, except
by :meth:`Runner.extract`, whose caller asked for this one thread.

Waiting is on a condition that every window settled in this process signals; a lease
held by another process can only be seen by looking again, so waits also wake at
``RECHECK_SECONDS``.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from functools import partial
from typing import TYPE_CHECKING

from recallmem.errors import ExtractionError, ForgottenMeanwhileError
from recallmem.events import ExtractionEvent, log_event
from recallmem.extraction.planner import Planner
from recallmem.extraction.report import ExtractionReport, Journal, RecentReports
from recallmem.extraction.window_queue import QueueStore, ThreadScope, Window
from recallmem.extraction.writer import write_journal
from recallmem.persistence.forget_ledger import work_began

if TYPE_CHECKING:
    from recallmem.persistence.repository import FactRepository

log = logging.getLogger("recallmem.extraction")
RECHECK_SECONDS = 0.5
# Process-wide: windows of this process may be held by another Memory on the same queue.
_SETTLED = threading.Condition()


def _settled() -> None:
    with _SETTLED:
        _SETTLED.notify_all()


def _wait(deadline: float | None) -> None:
    """Until a window settles in this process, the recheck interval passes, or the deadline."""
    pause = RECHECK_SECONDS
    if deadline is not None:
        pause = min(pause, max(0.0, deadline - time.monotonic()))
    with _SETTLED:
        _SETTLED.wait(pause)


class Runner:
    """Extracts windows from one queue into one store."""

    def __init__(
        self,
        queue: QueueStore,
        facts: FactRepository,
        planner: Planner | None,
        reports: RecentReports,
    ) -> None:
        self.queue, self.facts, self.planner, self.reports = queue, facts, planner, reports
        self._reserved: Counter[str] = Counter()  # threads `extract` calls are working on
        self._reserved_lock = threading.Lock()

    def _now(self) -> datetime:
        return datetime.fromtimestamp(self.queue.clock(), UTC)

    def _journal(self, window: Window) -> tuple[Journal, bool]:
        if window.journal is not None:
            return Journal.model_validate_json(window.journal), True
        assert self.planner is not None
        journal = self.planner.plan(window, self._now())
        usage = {"model": journal.model, **journal.usage.model_dump()}
        self.queue.journal(window, journal.model_dump_json(), usage)
        return journal, False

    def process(self, window: Window) -> ExtractionReport | None:
        """Extract (or replay) and write one claimed window; failures stay queued.

        The window's work began when it was claimed: a forget of its thread (or of a fact
        it writes) after that refuses its writes, and the window is given back; a forget
        of the thread also deleted its rows, so nothing of it is left to retry.
        """
        scope = window.scope
        try:
            with work_began(window.began, user_id=scope.user_id, thread_id=scope.thread_id,
                            agent_id=scope.agent_id):  # fmt: skip
                return self._process(window)
        except ForgottenMeanwhileError as exc:
            self.queue.release(window)
            log.info("recallmem: thread %s: dropped: %s", scope.thread_id, exc)
            return ExtractionReport(user_id=scope.user_id, agent_id=scope.agent_id,
                                    thread_id=scope.thread_id, error=str(exc))  # fmt: skip
        finally:
            _settled()

    def _process(self, window: Window) -> ExtractionReport | None:
        scope = window.scope
        if window.journal is None and self.planner is None:
            self.queue.release(window)
            return None
        stage = "extraction"
        try:
            journal, replayed = self._journal(window)
            stage = "writing"
            report = write_journal(
                self.facts, journal, thread_id=scope.thread_id, replayed=replayed
            )
        except ForgottenMeanwhileError:
            raise
        except Exception as exc:
            reason = f"{stage} failed: {type(exc).__name__}: {exc}"
            dead = self.queue.fail(window, reason)
            log.warning("recallmem: %s (%s)", reason, "dead letter" if dead else "will retry")
            fate = "moved to the dead letters" if dead else "kept queued for a retry"
            return ExtractionReport(
                user_id=scope.user_id,
                agent_id=scope.agent_id,
                thread_id=scope.thread_id,
                messages=len(window.messages),
                error=f"{reason}; {fate}",
            )
        self.queue.complete(window)
        forgets = self.queue.forgets
        # Reports quote the user's words: none is kept of a user purged meanwhile.
        purged = None if forgets is None else partial(forgets.forgotten, scope.user_id, purged=True)
        self.reports.add(report, unless=purged)
        log.info("recallmem: thread %s: %s", scope.thread_id, report.summary())
        return report

    def run_due(
        self, *, force: bool = False, deadline: float | None = None, user_id: str | None = None
    ) -> list[ExtractionReport]:
        """Extract every window due now (``force``: every pending one; ``user_id``: that
        user's only), in this thread.

        No new window is started after ``deadline`` (a ``time.monotonic()`` value).
        """
        reports: list[ExtractionReport] = []
        failed: set[str] = set()
        while deadline is None or time.monotonic() < deadline:
            exclude = [*self.reserved(), *failed]
            window = self.queue.claim(force=force, exclude=exclude, user_id=user_id)
            if window is None or (report := self.process(window)) is None:
                break
            # Background and flushed windows have no caller to report to: log the event.
            log_event(ExtractionEvent.from_report(report))
            reports.append(report)
            if report.error:
                failed.add(window.scope.key)  # one attempt per thread per run
        return reports

    def flush(self, deadline: float | None, user_id: str | None = None) -> list[ExtractionReport]:
        """Extract every pending window now (``user_id``: that user's); waits for this
        process's other workers."""
        reports: list[ExtractionReport] = []
        while True:
            reports += self.run_due(force=True, deadline=deadline, user_id=user_id)
            failed = sum(1 for r in reports if r.error)
            busy = self.queue.in_progress_here(exclude=self.reserved())
            if not busy or (deadline is not None and time.monotonic() >= deadline):
                return reports
            if failed and busy <= failed:
                return reports
            _wait(deadline)

    @contextmanager
    def reserving(self, scope: ThreadScope) -> Iterator[None]:
        """Keep the worker and ``flush`` off a thread an ``extract`` call works on."""
        with self._reserved_lock:
            self._reserved[scope.key] += 1
        try:
            yield
        finally:
            with self._reserved_lock:
                self._reserved -= Counter({scope.key: 1})

    def reserved(self) -> list[str]:
        """Threads reserved by ``extract`` calls in progress."""
        with self._reserved_lock:
            return list(self._reserved)

    def extract_thread(self, scope: ThreadScope, wait: float) -> ExtractionReport:
        """Extract a thread's pending windows now; raises ExtractionError on a failure."""
        report = ExtractionReport(
            user_id=scope.user_id, agent_id=scope.agent_id, thread_id=scope.thread_id
        )
        deadline = time.monotonic() + wait
        while self.queue.pending_count(scope):
            window = self.queue.claim(scope.key, force=True)
            if window is None:  # another worker holds it: wait for its lease to end
                if time.monotonic() >= deadline:
                    raise ExtractionError(
                        f"thread {scope.thread_id!r} is being extracted by another worker; "
                        "its messages stay queued, call flush() later"
                    )
                _wait(deadline)
                continue
            step = self.process(window)
            if step is None:
                break
            if step.error:
                raise ExtractionError(step.error)
            report = report.merge(step)
        return report
