"""The extraction pipeline: conversations in, vetted facts out, durably and cheaply.

``messages ─▶ intake (filter) ─▶ queue ─▶ planner (related facts, model, hygiene)
─▶ runner (journal, write) ─▶ store``

This module only composes the stages::

    pipeline = ExtractionPipeline(facts, model, config)   # facts: FactRepository; model or None
    pipeline.observe(messages, *, user_id, thread_id, agent_id=None, timezone=None)
    pipeline.flush(timeout=None) -> list[ExtractionReport]   # every pending window, now
    pipeline.extract(messages, *, user_id, thread_id, agent_id=None, timezone=None)
    pipeline.run_due() -> list[ExtractionReport]             # due windows, in this thread
    pipeline.start_background()                              # a worker runs due windows
    pipeline.backlog / pipeline.reports                      # what waits / what was done
    pipeline.close(timeout=10.0) -> int    # flushes within the bound; returns threads left

``messages`` are LangChain messages or ``{"role", "content"}`` dicts; the whole
conversation may be passed every turn (messages already seen are ignored). Without a
model, ``observe`` still queues durably and its :class:`Observation` says that
extraction waits for a model; ``flush`` and ``extract`` raise
:class:`~recallmem.errors.ModelNotConfiguredError` (after queueing). Nothing starts a
thread but ``start_background`` and ``observe`` with a model.
"""

from __future__ import annotations

import logging
import sqlite3
import threading
import time
from collections.abc import Callable, Sequence
from datetime import datetime, tzinfo
from typing import TYPE_CHECKING

from langchain_core.language_models import BaseChatModel

from recallmem.config import MemoryConfig
from recallmem.endpoints.failures import chat_endpoint
from recallmem.errors import ModelNotConfiguredError, QueueUnavailableError, StoreError
from recallmem.extraction.admission import Policy, Rules
from recallmem.extraction.backlog import Backlog
from recallmem.extraction.chain import create_extractor
from recallmem.extraction.filter import MessageLike
from recallmem.extraction.intake import WAITING_FOR_MODEL, Intake, Observation, thread_scope
from recallmem.extraction.planner import MAX_RELATED, Planner
from recallmem.extraction.report import ExtractionReport, RecentReports
from recallmem.extraction.runner import Runner
from recallmem.extraction.window_queue import QueueStore, Timing
from recallmem.extraction.worker import Worker
from recallmem.persistence.forget_ledger import ForgetLedger, work_began
from recallmem.prompts import ChatPromptSpec, load_prompt
from recallmem.signals.detector import load_signals

if TYPE_CHECKING:
    from recallmem.persistence.repository import FactRepository

log = logging.getLogger("recallmem.extraction")

__all__ = ["MAX_RELATED", "ExtractionPipeline", "Observation"]


class ExtractionPipeline:
    """Queue conversations, extract facts from due windows, apply hygiene, write."""

    def __init__(
        self,
        facts: FactRepository,
        model: BaseChatModel | None,
        config: MemoryConfig | None = None,
        *,
        prompt: ChatPromptSpec | None = None,
        clock: Callable[[], float] = time.time,
        background: bool = True,
        max_related: int = MAX_RELATED,
    ) -> None:
        self.config = config or MemoryConfig()
        self.model = model
        self.queue = QueueStore(
            self.config.queue_path, Timing.from_config(self.config), clock=clock,
            forgets=ForgetLedger.of(self.config.home),
        )  # fmt: skip
        self.backlog = Backlog(self.queue)
        self.reports = RecentReports()
        self.prompt = prompt or load_prompt("extract", self.config.prompt_dir)
        signals = load_signals(self.config.prompt_dir)
        self.intake = Intake(self.queue, signals, self.config.prompt_dir)
        planner = None
        if model is not None:
            planner = Planner(
                facts,
                create_extractor(model, prompt=self.prompt),
                extractor_name=type(model).__name__,
                prompt=self.prompt,
                policy=Policy.from_config(self.config),
                rules=Rules.load(self.config.prompt_dir),
                signals=signals,
                max_related=max_related,
                endpoint=chat_endpoint(model),
            )
        self.runner = Runner(self.queue, facts, planner, self.reports)
        self._worker = Worker(lambda: bool(self.run_due()), self.backlog.seconds_until_due)
        self._background = background and model is not None
        self._closed, self._left = False, 0

    @classmethod
    def open(
        cls, facts: FactRepository, model: BaseChatModel | None, config: MemoryConfig
    ) -> ExtractionPipeline:
        """The pipeline on ``config``'s queue; a queue that cannot be read raises
        QueueUnavailableError (saying what to do), while facts keep working."""
        try:
            return cls(facts, model, config)
        except (StoreError, sqlite3.DatabaseError) as exc:
            raise QueueUnavailableError(config.queue_path, exc) from exc

    def observe(
        self,
        messages: Sequence[MessageLike],
        *,
        user_id: str,
        thread_id: str,
        agent_id: str | None = None,
        timezone: str | tzinfo | None = None,
        said_at: datetime | str | None = None,
    ) -> Observation:
        """Queue a conversation for extraction; returns at once (the worker starts).

        ``timezone`` (the user's; None: UTC) is stored with the messages: their dates
        are resolved there, as of the day they were said. ``said_at``: when the whole
        transcript was said (a message's own ``said_at`` metadata wins; default: now).
        """
        with work_began():  # a forget of the thread from now on refuses the turn
            scope = thread_scope(user_id, thread_id, agent_id, timezone)
            seen = self.intake.observe(
                messages, scope, has_model=self.model is not None, said_at=said_at
            )
        self.start_background()
        return seen

    def run_due(
        self, *, force: bool = False, deadline: float | None = None
    ) -> list[ExtractionReport]:
        """Extract every window due now (``force``: every pending one), in this thread."""
        return self.runner.run_due(force=force, deadline=deadline)

    def _require_model(self, what: str) -> None:
        if self.model is None:
            waiting = sum(len(e.messages) for e in self.backlog.pending())
            raise ModelNotConfiguredError(
                f"cannot {what}: {waiting} message(s) {WAITING_FOR_MODEL}"
            )

    def flush(
        self, timeout: float | None = None, user_id: str | None = None
    ) -> list[ExtractionReport]:
        """Extract every pending window now (``user_id``: that user's), debounce or not;
        returns what each did.

        Windows being extracted by this process's worker are waited for (up to
        ``timeout`` seconds); a failed window stays queued and is reported with its error.
        """
        self._require_model("flush")
        deadline = None if timeout is None else time.monotonic() + timeout
        return self.runner.flush(deadline, user_id)

    def extract(
        self,
        messages: Sequence[MessageLike],
        *,
        user_id: str,
        thread_id: str,
        agent_id: str | None = None,
        timezone: str | tzinfo | None = None,
        said_at: datetime | str | None = None,
        wait: float = 60.0,
    ) -> ExtractionReport:
        """Queue a conversation and extract it now, in this thread; returns the report.

        Messages already extracted are not sent again. Raises ExtractionError (the
        window stays queued for a retry) when the model's output cannot be read or the
        write fails, and ModelNotConfiguredError (after queueing) without a model.
        ``timezone`` and ``said_at`` as for :meth:`observe`.
        """
        with work_began():
            scope = thread_scope(user_id, thread_id, agent_id, timezone)
            with self.runner.reserving(scope):
                self.intake.add(messages, scope, said_at)
                self._require_model("extract")
                return self.runner.extract_thread(scope, wait)

    def retry_dead_letter(self, letter_id: int) -> None:
        """Queue a dead letter's messages again; they are due at once."""
        self.backlog.retry_dead_letter(letter_id)
        self.start_background()

    # -- the background worker -----------------------------------------------------

    def start_background(self) -> None:
        """Run due windows in a background thread from now on (with a model)."""
        if self._background and not self._closed:
            self._worker.poke()

    def close(self, timeout: float = 10.0) -> int:
        """Stop the worker and flush within ``timeout`` seconds; returns threads left.

        Whatever is not extracted in time stays in the queue for the next start.
        """
        if self._closed:
            return self._left
        self._closed = True
        deadline = time.monotonic() + timeout
        self._worker.stop(timeout)
        finisher = None
        if self.model is not None and time.monotonic() < deadline:
            finisher = threading.Thread(target=self._final_flush, args=(deadline,), daemon=True)
            finisher.start()
            finisher.join(max(0.0, deadline - time.monotonic()))
        self._left = len(self.backlog.pending())
        if finisher is None or not finisher.is_alive():
            self.queue.close()
        return self._left

    def _final_flush(self, deadline: float) -> None:
        try:
            self.flush(timeout=max(0.0, deadline - time.monotonic()))
        except Exception:
            log.exception("recallmem: flush at shutdown failed; the work stays queued")
