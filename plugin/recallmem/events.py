"""Observability: ``memory_retrieval``, ``memory_extraction`` and ``memory_maintenance`` events.

Each event is logged as one structured record on the ``recallmem.events`` logger (the
message is the event name and its JSON payload; ``record.event`` and ``record.data``
carry the same for log handlers that read attributes) and, inside a LangChain run, is
also dispatched as a custom callback event of the same name, so ``astream_events`` and
callback handlers see it. From these, hit rate (retrievals with hits / retrievals),
injection rate and extraction cost can be computed.

It lives in the vocabulary layer so that both the agent middleware and the extraction
pipeline can emit through it.

>>> event = RetrievalEvent(user_id="u", thread_id="t", agent_id=None, query="上次的方案",
...                        hits=2, top_score=0.71, injected=True, trigger="cue",
...                        fact_ids=("f1", "f2"))
>>> event.payload()["trigger"], event.payload()["fact_ids"], event.name
('cue', ['f1', 'f2'], 'memory_retrieval')
"""

from __future__ import annotations

import contextlib
import json
import logging
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any, ClassVar, Literal, Protocol

from langchain_core.callbacks.manager import adispatch_custom_event, dispatch_custom_event
from langchain_core.runnables import RunnableConfig

log = logging.getLogger("recallmem.events")

Trigger = Literal["tool", "cue", "hedge", "injection", "turn", "recent"]
_MAX_QUERY_CHARS = 200  # logs carry enough of the query to debug, not whole messages


class _Shown(Protocol):
    @property
    def fact_id(self) -> str: ...
    @property
    def score(self) -> float | None: ...


class Record(Protocol):
    """What an event needs of a ``RetrievalRecord`` (which lives above this layer)."""

    @property
    def user_id(self) -> str: ...
    @property
    def thread_id(self) -> str | None: ...
    @property
    def agent_id(self) -> str | None: ...
    @property
    def trigger(self) -> str: ...
    @property
    def query(self) -> str: ...
    @property
    def shown(self) -> Sequence[_Shown]: ...
    @property
    def tokens(self) -> int | None: ...


@dataclass(frozen=True)
class RetrievalEvent:
    """One retrieval: who asked, why, what came back, whether it reached the model, and
    the ids of the facts that did (``fact_ids``, in the order shown)."""

    name: ClassVar[str] = "memory_retrieval"

    user_id: str
    thread_id: str | None
    agent_id: str | None
    query: str
    hits: int
    top_score: float | None
    injected: bool
    trigger: Trigger
    tokens: int | None = None
    forced: bool = False
    fact_ids: tuple[str, ...] = ()

    @classmethod
    def from_record(cls, record: Record, *, injected: bool | None = None) -> RetrievalEvent:
        """The event of a retrieval record (its ``block`` trigger is this event's
        ``injection``); ``injected`` defaults to whether any fact was shown."""
        scores = [s.score for s in record.shown if s.score is not None]
        trigger = "injection" if record.trigger == "block" else record.trigger
        return cls(
            user_id=record.user_id,
            thread_id=record.thread_id,
            agent_id=record.agent_id,
            query=record.query,
            hits=len(record.shown),
            top_score=max(scores, default=None),
            injected=bool(record.shown) if injected is None else injected,
            trigger=trigger,  # type: ignore[arg-type]
            tokens=record.tokens,
            forced=record.trigger == "hedge",
            fact_ids=tuple(s.fact_id for s in record.shown),
        )

    def payload(self) -> dict[str, Any]:
        """The event as a JSON-ready mapping (``fact_ids`` as a list)."""
        data = asdict(self)
        data["query"] = self.query[:_MAX_QUERY_CHARS]
        data["top_score"] = None if self.top_score is None else round(self.top_score, 4)
        data["fact_ids"] = list(self.fact_ids)
        return data


class _Usage(Protocol):
    @property
    def input_tokens(self) -> int: ...
    @property
    def output_tokens(self) -> int: ...


class Report(Protocol):
    """What an event needs of an ``ExtractionReport`` (which lives above this layer)."""

    @property
    def user_id(self) -> str: ...
    @property
    def thread_id(self) -> str | None: ...
    @property
    def agent_id(self) -> str | None: ...
    @property
    def added(self) -> Sequence[object]: ...
    @property
    def confirmed(self) -> Sequence[object]: ...
    @property
    def superseded(self) -> Sequence[object]: ...
    @property
    def dropped(self) -> Sequence[object]: ...
    @property
    def usage(self) -> _Usage: ...
    @property
    def model(self) -> str | None: ...
    @property
    def error(self) -> str | None: ...


@dataclass(frozen=True)
class ExtractionEvent:
    """One extraction: what it added, confirmed, superseded and dropped, and its tokens."""

    name: ClassVar[str] = "memory_extraction"

    user_id: str
    thread_id: str | None
    agent_id: str | None
    added: int
    confirmed: int
    superseded: int
    dropped: int
    input_tokens: int = 0
    output_tokens: int = 0
    model: str | None = None
    error: str | None = None

    @classmethod
    def from_report(cls, report: Report) -> ExtractionEvent:
        """From an ``ExtractionReport``."""
        return cls(
            user_id=report.user_id,
            thread_id=report.thread_id,
            agent_id=report.agent_id,
            added=len(report.added),
            confirmed=len(report.confirmed),
            superseded=len(report.superseded),
            dropped=len(report.dropped),
            input_tokens=report.usage.input_tokens,
            output_tokens=report.usage.output_tokens,
            model=report.model,
            error=report.error,
        )

    def payload(self) -> dict[str, Any]:
        """The event as a JSON-ready mapping."""
        return asdict(self)


class _Merges(Protocol):
    @property
    def user_id(self) -> str: ...
    @property
    def agent_id(self) -> str | None: ...
    @property
    def shown(self) -> int: ...
    @property
    def proposed(self) -> int: ...
    @property
    def merged(self) -> int: ...
    @property
    def superseded(self) -> int: ...
    @property
    def refused(self) -> Sequence[object]: ...
    @property
    def usage(self) -> _Usage: ...
    @property
    def model(self) -> str | None: ...
    @property
    def replayed(self) -> bool: ...


@dataclass(frozen=True)
class ConsolidationEvent:
    """One consolidation run of one user: merges proposed, stored and refused."""

    name: ClassVar[str] = "memory_consolidation"

    user_id: str
    agent_id: str | None
    shown: int
    proposed: int
    merged: int
    superseded: int
    refused: int
    input_tokens: int = 0
    output_tokens: int = 0
    model: str | None = None
    replayed: bool = False

    @classmethod
    def from_report(cls, report: _Merges) -> ConsolidationEvent:
        """From a ``ConsolidationReport``."""
        return cls(
            user_id=report.user_id,
            agent_id=report.agent_id,
            shown=report.shown,
            proposed=report.proposed,
            merged=report.merged,
            superseded=report.superseded,
            refused=len(report.refused),
            input_tokens=report.usage.input_tokens,
            output_tokens=report.usage.output_tokens,
            model=report.model,
            replayed=report.replayed,
        )

    def payload(self) -> dict[str, Any]:
        """The event as a JSON-ready mapping."""
        return asdict(self)


@dataclass(frozen=True)
class CopyEvent:
    """Facts copied from one scope into another (``Memory.copy``)."""

    name: ClassVar[str] = "memory_copy"

    from_user_id: str
    from_agent_id: str | None
    to_user_id: str
    to_agent_id: str | None
    copied: int
    confirmed: int

    def payload(self) -> dict[str, Any]:
        """The event as a JSON-ready mapping."""
        return asdict(self)


@dataclass(frozen=True)
class MaintenanceEvent:
    """One user's maintenance run: the facts it expired, faded, purged and consolidated."""

    name: ClassVar[str] = "memory_maintenance"

    user_id: str
    expired: tuple[str, ...] = ()
    faded: tuple[str, ...] = ()
    purged: tuple[str, ...] = ()
    consolidated: tuple[str, ...] = ()
    replayed: bool = False  # the plan was a crashed run's, finished now

    def payload(self) -> dict[str, Any]:
        """The event as a JSON-ready mapping (ids as lists)."""
        return {k: list(v) if isinstance(v, tuple) else v for k, v in asdict(self).items()}


Event = RetrievalEvent | ExtractionEvent | MaintenanceEvent | ConsolidationEvent | CopyEvent


def log_event(event: Event) -> None:
    """Write the event to the ``recallmem.events`` logger."""
    data = event.payload()
    log.info(
        "%s %s",
        event.name,
        json.dumps(data, ensure_ascii=False, sort_keys=True),
        extra={"event": event.name, "data": data},
    )


def emit(event: Event, config: RunnableConfig | None = None) -> None:
    """Log the event and, inside a LangChain run, dispatch it as a custom callback event."""
    log_event(event)
    with contextlib.suppress(RuntimeError):  # outside a run the log record is the event
        dispatch_custom_event(event.name, event.payload(), config=config)


async def aemit(event: Event, config: RunnableConfig | None = None) -> None:
    """:func:`emit` for async code (callback handlers may be async)."""
    log_event(event)
    with contextlib.suppress(RuntimeError):
        await adispatch_custom_event(event.name, event.payload(), config=config)


__all__ = [
    "ConsolidationEvent",
    "CopyEvent",
    "Event",
    "ExtractionEvent",
    "MaintenanceEvent",
    "Record",
    "RetrievalEvent",
    "Trigger",
    "aemit",
    "emit",
    "log_event",
]
