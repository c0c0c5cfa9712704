"""Forgets in flight: work that began before a forget cannot write back what it forgot.

"Forget me" must hold against work already under way when it is asked: a chat turn whose
model is still answering, an ``observe`` or ``remember`` on another thread, a window
being extracted, a maintenance or consolidation run, a LangGraph store ``put`` that read
a record first. Each began before the forget and would end after it, writing back what
the user said (or what was read) before it.

So every forget of a scope (a user, a thread, an agent, and a purged fact) is recorded
here as a :class:`Forget` before anything is erased, stamped with a process-wide clock
that never repeats a value, and every unit of work carries the time it began
(:func:`work_began`: a context variable, so an outer unit, a chat turn or a claimed
window, holds for everything it calls, in ``asyncio.to_thread`` workers too). A write
asks, under the user's lock, whether a forget after that time covers what it writes
(:meth:`ForgetLedger.admit`: the facts' scope or ids, or the scope the work came from)
and is refused with :class:`~recallmem.errors.ForgottenMeanwhileError` if one does; the
extraction queue asks inside the SQLite transaction that a purge's deletion of the
queued turns also takes, so a turn is either deleted by the purge or refused after it.

The ledger is per home and in this process's memory: in-flight work is this process's.
It keeps the last :data:`KEPT_FORGETS` forgets of all users; work older than the oldest
it still holds, should one ever be dropped, is refused for every user (no work lives
that long in practice: a window's lease is ten minutes).

>>> from recallmem.types import Fact
>>> ledger = ForgetLedger()
>>> with work_began():
...     _ = ledger.record("ada", purge=True)  # a purge while the work ran
...     ledger.forgotten("ada", [Fact(content="Owns a cat", category="context", user_id="ada")])
...     ledger.forgotten("bob", [Fact(content="Owns a dog", category="context", user_id="bob")])
Forget(user_id='ada', thread_id=None, agent_id=None, ids=None, purge=True)
>>> ledger.forgotten("ada", []) is None  # no work began: nothing to refuse
True
"""

from __future__ import annotations

import bisect
import functools
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager, suppress
from contextvars import ContextVar
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import ClassVar, ParamSpec, TypeVar

from recallmem.errors import ForgottenMeanwhileError
from recallmem.persistence.pending_erasures import PendingErasures
from recallmem.types import Fact

KEPT_FORGETS = 65536  # about 200 bytes each
Scope = tuple[str | None, str | None]  # a thread id and an agent id
P = ParamSpec("P")
R = TypeVar("R")


@dataclass(frozen=True)
class Forget:
    """One forget: of a user whole, or narrowed to a thread, an agent or fact ids."""

    user_id: str
    thread_id: str | None = None
    agent_id: str | None = None
    ids: frozenset[str] | None = None  # facts forgotten by id
    purge: bool = False
    at: float = field(default=0.0, compare=False, repr=False)

    @property
    def whole(self) -> bool:
        """Whether the user's whole memory was forgotten."""
        return self.ids is None and self.thread_id is None and self.agent_id is None

    def covers_scope(self, thread_id: str | None, agent_id: str | None) -> bool:
        """Whether work from this thread and agent lost its words to this forget."""
        if self.ids is not None:
            return False
        return (self.thread_id is None or self.thread_id == thread_id) and (
            self.agent_id is None or self.agent_id == agent_id
        )

    def covers_fact(self, fact: Fact) -> bool:
        """Whether ``fact`` is one this forget erased or would have."""
        if self.ids is not None:
            return fact.id in self.ids
        return self.covers_scope(fact.thread_id, fact.agent_id)

    def describe(self) -> str:
        """The forgotten scope, in words."""
        if self.ids is not None:
            return f"fact {sorted(self.ids)[0]!r} of user {self.user_id!r}"
        narrowed = [f"{name} {value!r}" for name, value in
                    (("thread", self.thread_id), ("agent", self.agent_id)) if value]  # fmt: skip
        return f"the memory of user {self.user_id!r}" + (
            f" ({', '.join(narrowed)})" if narrowed else ""
        )


@dataclass(frozen=True)
class Began:
    """When a unit of work began, and the scope it works for (when it has one)."""

    at: float
    user_id: str | None = None
    thread_id: str | None = None
    agent_id: str | None = None


_began: ContextVar[Began | None] = ContextVar("recallmem_work_began", default=None)
_clock_guard = threading.Lock()
_last = 0.0


def now() -> float:
    """The ledger's clock: wall time, strictly increasing within the process."""
    global _last
    with _clock_guard:
        _last = max(time.time(), _last + 1e-6)
        return _last


def current_work() -> Began | None:
    """The unit of work this code runs in, if one began."""
    return _began.get()


@contextmanager
def work_began(
    at: float | None = None,
    *,
    user_id: str | None = None,
    thread_id: str | None = None,
    agent_id: str | None = None,
) -> Iterator[Began]:
    """Run the block as (part of) a unit of work that began at ``at`` (default: now).

    Inside an outer unit the outer one holds, being older; it only gains the scope if it
    had none. Nothing is refused here: writes ask the ledger (:meth:`ForgetLedger.admit`).
    """
    outer = _began.get()
    began = Began(now() if at is None else at, user_id, thread_id, agent_id)
    if outer is not None:
        scoped = outer.user_id is not None or user_id is None
        began = outer if scoped else replace(began, at=min(outer.at, began.at))
    token = _began.set(began)
    try:
        yield began
    finally:
        # An async generator closed by the event loop's finaliser runs in another
        # context, whose variable is not ours to reset: that context ends anyway.
        with suppress(ValueError):
            _began.reset(token)


def as_work(method: Callable[P, R]) -> Callable[P, R]:
    """A call of ``method`` is a unit of work from its start (inside a unit that began
    earlier, part of that one)."""

    @functools.wraps(method)
    def within(*args: P.args, **kwargs: P.kwargs) -> R:
        with work_began():
            return method(*args, **kwargs)

    return within


@contextmanager
def outside_work() -> Iterator[None]:
    """Run the block as no unit of work: a forget's own writes are not refused by it."""
    token = _began.set(None)
    try:
        yield
    finally:
        _began.reset(token)


class ForgetLedger:
    """The forgets of one home recorded by this process, oldest first."""

    _homes: ClassVar[dict[Path, ForgetLedger]] = {}
    _homes_guard: ClassVar[threading.Lock] = threading.Lock()

    def __init__(self, kept: int = KEPT_FORGETS, erasing: PendingErasures | None = None) -> None:
        self.erasing = erasing  # purges under way or interrupted (pending_erasures.py)
        self._forgets: list[Forget] = []
        self._times: list[float] = []
        self._kept = kept
        self._horizon = 0.0  # the time of the newest forget dropped to keep the bound
        self._guard = threading.Lock()

    @classmethod
    def of(cls, home: Path) -> ForgetLedger:
        """The ledger of ``home``, shared by every Memory of this process on it."""
        with cls._homes_guard:
            key = Path(home).resolve()
            if key not in cls._homes:
                cls._homes[key] = cls(erasing=PendingErasures.of(home))
            return cls._homes[key]

    def record(
        self,
        user_id: str,
        *,
        thread_id: str | None = None,
        agent_id: str | None = None,
        ids: Sequence[str] | None = None,
        purge: bool,
    ) -> Forget:
        """Record a forget; call before anything of it is erased."""
        with self._guard:
            forget = Forget(user_id, thread_id, agent_id,
                            None if ids is None else frozenset(ids), purge, now())  # fmt: skip
            self._forgets.append(forget)
            self._times.append(forget.at)
            if len(self._forgets) > self._kept:
                self._horizon = self._times[0]
                del self._forgets[0], self._times[0]
            return forget

    def _since(self, user_id: str, since: float) -> list[Forget]:
        with self._guard:
            if since < self._horizon:  # the forgets it would be checked against are gone
                return [Forget(user_id, purge=True, at=self._horizon)]
            start = bisect.bisect_right(self._times, since)
            return [f for f in self._forgets[start:] if f.user_id == user_id]

    def forgotten(
        self,
        user_id: str,
        facts: Sequence[Fact] = (),
        *,
        scope: Scope | None = None,
        purged: bool = False,
    ) -> Forget | None:
        """The forget, after the current work began, that covers writing ``facts`` of
        ``user_id``, or anything of ``scope`` (a thread and agent) or of the work's own
        scope; None outside work. ``purged``: only purges count (what a soft forget
        keeps, such as the logs)."""
        began = _began.get()
        if began is None:
            return None
        scopes = [] if scope is None else [scope]
        if began.user_id == user_id:
            scopes.append((began.thread_id, began.agent_id))
        for forget in self._since(user_id, began.at):
            if purged and not forget.purge:
                continue
            if forget.whole or any(forget.covers_fact(f) for f in facts):
                return forget
            if any(forget.covers_scope(*s) for s in scopes):
                return forget
        return None

    def admit(
        self, user_id: str, facts: Sequence[Fact] = (), *, scope: Scope | None = None
    ) -> None:
        """Refuse (ForgottenMeanwhileError) a write a forget since the work began covers:
        of ``user_id``'s, or of the user a fact is a copy of (``Memory.copy``); and
        (StoreError) one to a user whose erasure was interrupted (the finish erases it)."""
        if self.erasing is not None:
            self.erasing.refuse_writes(user_id)
        forget = self.forgotten(user_id, facts, scope=scope)
        for fact in facts:
            origin = fact.copied_from
            if forget is None and origin is not None and origin.user_id != user_id:
                # The original as the forget would have met it: its id, agent, thread.
                thread = next((s.thread_id for s in fact.sources if s.thread_id), None)
                original = fact.model_copy(update={"id": origin.fact_id, "thread_id": thread,
                                                   "agent_id": origin.agent_id})  # fmt: skip
                forget = self.forgotten(origin.user_id, [original])
        if forget is not None:
            raise ForgottenMeanwhileError(forget.describe(), forget)
