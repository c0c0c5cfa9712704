"""The extraction pipeline: conversations in, vetted facts out, durably and cheaply.

``messages ─▶ filter ─▶ queue ─▶ related facts ─▶ extractor ─▶ hygiene ─▶ store``

Contract with :class:`recallmem.Memory` (whose methods are thin delegates to these)::

    pipeline = ExtractionPipeline(memory, model, config)    # model may be None
    pipeline.observe(messages, *, user_id, thread_id, agent_id=None) -> Observation
    pipeline.flush(timeout=None) -> list[ExtractionReport]   # every pending window, now
    pipeline.extract(messages, *, user_id, thread_id, agent_id=None) -> ExtractionReport
    pipeline.pending(user_id=None) -> list[PendingEntry]
    pipeline.dead_letters(user_id=None) -> list[DeadLetter]
    pipeline.retry_dead_letter(letter_id) -> None;  pipeline.drop_dead_letter(letter_id)
    pipeline.purge(user_id, *, thread_id=None, agent_id=None) -> int   # queued data only
    pipeline.usage(user_id=None) -> dict   # model calls and tokens recorded
    pipeline.close(timeout=10.0) -> int    # flushes within the bound; returns threads left

``messages`` are LangChain messages or ``{"role", "content"}`` dicts; the whole
conversation may be passed every turn (messages already seen are ignored). ``memory``
is anything with Memory's ``nearest``, ``get``, ``put``, ``list``, ``get_profile`` and
``set_profile``. Without a model, ``observe`` still queues durably and its
:class:`Observation` says that extraction waits for a model; ``flush`` and ``extract``
raise :class:`~recallmem.errors.ModelNotConfiguredError` (after queueing).

The model sees the window and only the ``max_related`` stored facts nearest to it, so
the prompt does not grow with the size of the memory; there is one model call per
window and its tokens are recorded. A background thread (started on the first
``observe`` with a model, or at start-up when work is left from before) extracts windows
as they fall due.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import Counter, deque
from collections.abc import Callable, Sequence
from datetime import UTC, datetime

from langchain_core.language_models import BaseChatModel
from pydantic import BaseModel, ConfigDict

from recallmem.config import MemoryConfig
from recallmem.errors import ExtractionError, MissingScopeError, ModelNotConfiguredError
from recallmem.events import ExtractionEvent, log_event
from recallmem.extraction.backlog import Backlog, DeadLetter, PendingEntry
from recallmem.extraction.chain import create_extractor, prepare
from recallmem.extraction.filter import MessageLike, Utterance, filter_messages, load_filter_rules
from recallmem.extraction.hygiene import Context, Policy, Rules, add_evictions, make_plan
from recallmem.extraction.plan import Add, Plan
from recallmem.extraction.queue import QueueStore, ThreadScope, Timing, Window
from recallmem.extraction.report import ExtractionReport, Journal
from recallmem.extraction.worker import Worker
from recallmem.extraction.writer import MemoryPort, write_journal
from recallmem.prompts import ChatPromptSpec, load_prompt
from recallmem.signals import load_signals
from recallmem.types import Fact, Status
from recallmem.validation import require_user

log = logging.getLogger("recallmem.extraction")
MAX_RELATED = 20  # stored facts shown to the model per window, whatever the memory's size
_WAITING = (
    "queued; extraction waits for a chat model: pass Memory(model=...) or set "
    "RECALLMEM_LLM_MODEL and RECALLMEM_OPENAI_API_KEY (or RECALLMEM_OPENAI_BASE_URL)"
)


class Observation(BaseModel):
    """What ``observe`` did with a conversation."""

    model_config = ConfigDict(frozen=True)

    queued: int
    pending: int
    remember_request: bool
    waiting_for_model: bool
    note: str


class ExtractionPipeline:
    """Queue conversations, extract facts from due windows, apply hygiene, write."""

    def __init__(
        self,
        memory: MemoryPort,
        model: BaseChatModel | None,
        config: MemoryConfig | None = None,
        *,
        prompt: ChatPromptSpec | None = None,
        clock: Callable[[], float] = time.time,
        background: bool = True,
        max_related: int = MAX_RELATED,
    ) -> None:
        self.config = config or MemoryConfig()
        self.memory, self.model, self.max_related = memory, model, max_related
        self.policy = Policy.from_config(self.config)
        self.queue = QueueStore(
            self.config.queue_path, Timing.from_config(self.config), clock=clock
        )
        self.backlog = Backlog(self.queue)
        self.prompt = prompt or load_prompt("extract", self.config.prompt_dir)
        self._filter = load_filter_rules(self.config.prompt_dir)
        self._signals = load_signals(self.config.prompt_dir)
        self._rules = Rules.load(self.config.prompt_dir)
        self._extractor = create_extractor(model, prompt=self.prompt) if model else None
        self.reports: deque[ExtractionReport] = deque(maxlen=100)
        self._worker = Worker(lambda: bool(self.run_due()), self.backlog.seconds_until_due)
        self._background = background and model is not None
        self._reserved: Counter[str] = Counter()  # threads `extract` calls are working on
        self._reserved_lock = threading.Lock()
        self._warned = False
        self._closed, self._left = False, 0

    # -- queueing ---------------------------------------------------------------------

    def _scope(self, user_id: str, thread_id: str, agent_id: str | None) -> ThreadScope:
        if not isinstance(thread_id, str) or not thread_id.strip():
            raise MissingScopeError(
                "thread_id is required (pass thread_id=...): windows are debounced per thread"
            )
        return ThreadScope(user_id=require_user(user_id), thread_id=thread_id, agent_id=agent_id)

    def _queue(self, messages: Sequence[MessageLike], scope: ThreadScope) -> tuple[int, bool]:
        kept = filter_messages(messages, self._filter)
        urgent = [
            u.role == "user" and self._signals.detect("remember_request", u.content) is not None
            for u in kept
        ]
        return self.queue.add(scope, kept, urgent), any(urgent)

    def observe(
        self,
        messages: Sequence[MessageLike],
        *,
        user_id: str,
        thread_id: str,
        agent_id: str | None = None,
    ) -> Observation:
        """Queue a conversation for extraction; returns at once."""
        scope = self._scope(user_id, thread_id, agent_id)
        queued, urgent = self._queue(messages, scope)
        if self.model is None:
            note = f"{queued} new message(s) {_WAITING}"
            if not self._warned:  # once per process, not once per turn
                log.warning("recallmem: %s", note)
                self._warned = True
        else:
            note = f"{queued} new message(s) queued" + ("; due now" if urgent else "")
            self._poke()
        return Observation(
            queued=queued,
            pending=self.queue.pending_count(scope),
            remember_request=urgent,
            waiting_for_model=self.model is None,
            note=note,
        )

    # -- extracting ---------------------------------------------------------------------

    def _related(self, scope: ThreadScope, lines: Sequence[Utterance]) -> list[Fact]:
        rows = self.memory.nearest(
            [u.content for u in lines],
            user_id=scope.user_id,
            agent_id=scope.agent_id,
            k=self.max_related,
        )
        best: dict[str, tuple[float, Fact]] = {}
        for hit in (hit for row in rows for hit in row):
            if hit.fact.user_id == scope.user_id and hit.score > best.get(hit.fact.id, (-2.0,))[0]:
                best[hit.fact.id] = (hit.score, hit.fact)
        ranked = sorted(best.values(), key=lambda pair: -pair[0])
        return [fact for _, fact in ranked[: self.max_related]]

    def _active(self, scope: ThreadScope) -> list[Fact]:
        facts: list[Fact] = []
        while True:
            page = self.memory.list(
                user_id=scope.user_id,
                agent_id=scope.agent_id,
                status=Status.ACTIVE,
                limit=1000,
                offset=len(facts),
            )
            facts.extend(page)
            if len(page) < 1000:
                return [f for f in facts if f.agent_id == scope.agent_id]

    def _now(self) -> datetime:
        return datetime.fromtimestamp(self.queue.clock(), UTC)

    def _plan(self, window: Window) -> Journal:
        """Call the model once for a window and vet what it proposes."""
        assert self._extractor is not None
        scope, now = window.scope, self._now()
        lines = [u for u in window.messages if u.role == "user"]
        if not lines:  # nothing the user said: nothing to remember, no call
            return Journal(
                plan=Plan(user_id=scope.user_id, agent_id=scope.agent_id, at=now),
                messages=len(window.messages),
            )
        profile = self.memory.get_profile(user_id=scope.user_id, agent_id=scope.agent_id)
        prepared = prepare(
            window.messages,
            self._related(scope, lines),
            profile=profile,
            today=now,
            signals=self._signals,
        )
        result = self._extractor.invoke(prepared.inputs)
        rows = (
            self.memory.nearest(
                [c.content for c in result.facts], user_id=scope.user_id, agent_id=scope.agent_id
            )
            if result.facts
            else []
        )
        context = Context(
            user_id=scope.user_id,
            window=window.messages,
            shown=prepared.fact_refs,
            agent_id=scope.agent_id,
            thread_id=scope.thread_id,
            extractor=result.model_name or type(self.model).__name__,
            prompt_version=self.prompt.label,
        )
        neighbours = [[(hit.fact, hit.score) for hit in row] for row in rows]
        plan = make_plan(
            result, context, neighbours, policy=self.policy, now=now, rules=self._rules
        )
        if plan.count(Add):
            plan = add_evictions(plan, self._active(scope), self.policy.max_facts_per_scope)
        return Journal(
            plan=plan,
            usage=result.usage,
            model=context.extractor,
            prompt=self.prompt.label,
            messages=len(window.messages),
        )

    def _process(self, window: Window) -> ExtractionReport | None:
        """Extract (or replay) and write one claimed window; failures stay queued."""
        scope = window.scope
        replayed = window.journal is not None
        if not replayed and self._extractor is None:
            self.queue.release(window)
            return None
        stage = "extraction"
        try:
            if window.journal is not None:
                journal = Journal.model_validate_json(window.journal)
            else:
                journal = self._plan(window)
                self.queue.journal(
                    window,
                    journal.model_dump_json(),
                    {"model": journal.model, **journal.usage.model_dump()},
                )
            stage = "writing"
            report = write_journal(
                self.memory, journal, thread_id=scope.thread_id, replayed=replayed
            )
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
        self.reports.append(report)
        log.info("recallmem: thread %s: %s", scope.thread_id, report.summary())
        return report

    def run_due(
        self, *, force: bool = False, deadline: float | None = None
    ) -> list[ExtractionReport]:
        """Extract every window due now (``force``: every pending one), in this thread.

        No new window is started after ``deadline`` (a ``time.monotonic()`` value).
        """
        reports: list[ExtractionReport] = []
        failed: set[str] = set()
        while deadline is None or time.monotonic() < deadline:
            window = self.queue.claim(force=force, exclude=[*self._reserved_keys(), *failed])
            if window is None or (report := self._process(window)) is None:
                break
            # Background and flushed windows have no caller to report to: log the event.
            log_event(ExtractionEvent.from_report(report))
            reports.append(report)
            if report.error:
                failed.add(window.scope.key)  # one attempt per thread per run
        return reports

    def _require_model(self, what: str) -> None:
        if self.model is None:
            waiting = sum(len(e.messages) for e in self.backlog.pending())
            raise ModelNotConfiguredError(f"cannot {what}: {waiting} message(s) {_WAITING}")

    def flush(self, timeout: float | None = None) -> list[ExtractionReport]:
        """Extract every pending window now, debounce or not; returns what each did.

        Windows being extracted by this process's worker are waited for (up to
        ``timeout`` seconds); a failed window stays queued and is reported with its error.
        """
        self._require_model("flush")
        deadline = None if timeout is None else time.monotonic() + timeout
        reports: list[ExtractionReport] = []
        while True:
            reports += self.run_due(force=True, deadline=deadline)
            failed = [r for r in reports if r.error]
            busy = self.queue.in_progress_here(exclude=self._reserved_keys())
            if not busy or (deadline is not None and time.monotonic() >= deadline):
                return reports
            if failed and busy <= len(failed):
                return reports
            time.sleep(0.05)

    def extract(
        self,
        messages: Sequence[MessageLike],
        *,
        user_id: str,
        thread_id: str,
        agent_id: str | None = None,
        wait: float = 60.0,
    ) -> ExtractionReport:
        """Queue a conversation and extract it now, in this thread; returns the report.

        Messages already extracted are not sent again. Raises ExtractionError (the
        window stays queued for a retry) when the model's output cannot be read or the
        write fails, and ModelNotConfiguredError (after queueing) without a model.
        """
        scope = self._scope(user_id, thread_id, agent_id)
        with self._reserved_lock:
            self._reserved[scope.key] += 1
        try:
            self._queue(messages, scope)
            self._require_model("extract")
            return self._extract_thread(scope, wait)
        finally:
            with self._reserved_lock:
                self._reserved -= Counter({scope.key: 1})

    def _reserved_keys(self) -> list[str]:
        with self._reserved_lock:
            return list(self._reserved)

    def _extract_thread(self, scope: ThreadScope, wait: float) -> ExtractionReport:
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
                time.sleep(0.05)
                continue
            step = self._process(window)
            if step is None:
                break
            if step.error:
                raise ExtractionError(step.error)
            report = report.merge(step)
        return report

    # -- the queue's contents ----------------------------------------------------------

    def pending(self, user_id: str | None = None) -> list[PendingEntry]:
        """Threads with messages waiting for extraction (user, thread, messages, due time)."""
        return self.backlog.pending(user_id=user_id)

    def dead_letters(self, user_id: str | None = None) -> list[DeadLetter]:
        """Windows that failed too often, with the reason."""
        return self.backlog.dead_letters(user_id=user_id)

    def retry_dead_letter(self, letter_id: int) -> None:
        """Queue a dead letter's messages again; they are due at once."""
        self.backlog.retry_dead_letter(letter_id)
        self._poke()

    def drop_dead_letter(self, letter_id: int) -> None:
        """Discard a dead letter."""
        self.backlog.drop_dead_letter(letter_id)

    def purge(
        self, user_id: str, *, thread_id: str | None = None, agent_id: str | None = None
    ) -> int:
        """Erase a user's queued messages and dead letters; returns messages erased."""
        return self.backlog.purge(require_user(user_id), thread_id=thread_id, agent_id=agent_id)

    def usage(self, user_id: str | None = None) -> dict[str, int]:
        """Windows extracted, model calls and tokens, as recorded."""
        return self.backlog.usage(user_id=user_id)

    # -- the background worker -----------------------------------------------------------

    def start_background(self) -> None:
        """Run due windows in a background thread from now on (with a model)."""
        self._poke()

    def _poke(self) -> None:
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
