"""What ``Memory`` does beside reading and writing: extracting facts from conversations
(the durable queue and its worker) and maintaining what is stored (expiry, decay,
consolidation, search keys). Kept apart from :mod:`recallmem.memory` so each holds one
part of the facade; ``Memory`` is the only class built on it.
"""

from __future__ import annotations

import builtins
from collections.abc import Sequence
from datetime import datetime, tzinfo
from typing import TYPE_CHECKING, Any

from langchain_core.language_models import BaseChatModel

from recallmem._async import async_twin
from recallmem.facts.validation import require_user
from recallmem.lifecycle.consolidation import ConsolidationReport
from recallmem.lifecycle.keying import KeyingReport
from recallmem.operations.extracting import Extracting
from recallmem.operations.maintaining import Maintaining

if TYPE_CHECKING:
    from recallmem.extraction.pipeline import ExtractionPipeline, Observation
    from recallmem.extraction.report import ExtractionReport
    from recallmem.lifecycle.maintenance import Maintainer, MaintenanceReport


class BackgroundWork:
    """Extraction and maintenance, for :class:`recallmem.memory.Memory`."""

    model: BaseChatModel | None
    _extracting: Extracting
    _maintaining: Maintaining

    @property
    def extraction(self) -> ExtractionPipeline:
        """The durable extraction queue and its stages (created on first use)."""
        return self._extracting.pipeline

    def start_background(self) -> None:
        """Extract queued windows in a background thread as they fall due, and maintain
        each active user about once a day (:meth:`maintain`).

        Called by ``MemoryMiddleware``, the service and every ``observe``; opening a
        ``Memory`` or reading from it never starts model calls. Without a model windows
        stay queued.
        """
        self._extracting.start_background()
        self.lifecycle.start_background()

    @property
    def lifecycle(self) -> Maintainer:
        """Decay, expiry, purge of old faded facts, consolidation (created on first use)."""
        return self._maintaining.maintainer(self.model)

    def maintain(self, *, now: datetime | None = None, user_id: str | None = None,
                 simulated_clock: bool = False) -> MaintenanceReport:  # fmt: skip
        """Expire facts past their ``valid_until``, fade facts whose decayed confidence
        fell below ``fade_below``, purge facts faded longer than ``faded_retention_days``,
        then consolidate each user whose memory changed since (:meth:`consolidate`).

        For one user, or every user if None, as of ``now`` (timezone-aware, within a day
        of the current time unless ``simulated_clock``, for tests and simulations, which
        HTTP cannot set; default the current time). Journaled per user, so a crash loses
        nothing and applies nothing twice; a second run at the same ``now`` changes nothing.
        """
        return self.lifecycle.maintain(now=now, user_id=user_id, simulated_clock=simulated_clock)

    def rekey(self, *, user_id: str | None = None, max_facts: int | None = None) -> KeyingReport:
        """Write search keys, with the configured model, for active facts that have none
        (written by hand, imported, older, or edited since): one user's, or every user's
        if None, at most ``max_facts`` (``keying_max_facts`` if None), 20 per model call.
        Without a model nothing happens. Maintenance does the same within its budget.
        """
        return self.lifecycle.rekey(user_id, max_facts)

    def observe(self, messages: Sequence[Any], *, user_id: str, thread_id: str,
                agent_id: str | None = None, timezone: str | tzinfo | None = None,
                said_at: datetime | str | None = None) -> Observation:  # fmt: skip
        """Queue a finished turn (or the whole conversation) for extraction; returns at once.

        Windows are debounced per thread and written durably before this returns.
        ``timezone`` (the user's: an IANA name or a ``tzinfo``; default UTC) is stored
        with the messages, so a due date they say ("tomorrow", "下周五") is resolved
        there, counted from the day they were said, however late they are extracted.
        When they were said is now, unless a message says otherwise (its ``said_at``
        metadata: ``additional_kwargs["said_at"]``, or a ``"said_at"`` key in a dict
        message) or ``said_at`` gives the whole transcript's time; either is a
        timezone-aware datetime or an ISO 8601 string with an offset.
        """
        return self.extraction.observe(messages, user_id=user_id, thread_id=thread_id,
            agent_id=agent_id, timezone=timezone, said_at=said_at)  # fmt: skip

    def extract(self, messages: Sequence[Any], *, user_id: str, thread_id: str,
                agent_id: str | None = None, timezone: str | tzinfo | None = None,
                said_at: datetime | str | None = None) -> ExtractionReport:  # fmt: skip
        """Extract now and report what was added, confirmed, superseded and dropped, and why.

        ``timezone`` and ``said_at`` as for :meth:`observe`.
        """
        return self.extraction.extract(messages, user_id=user_id, thread_id=thread_id,
            agent_id=agent_id, timezone=timezone, said_at=said_at)  # fmt: skip

    def flush(
        self, timeout: float | None = None, *, user_id: str | None = None
    ) -> builtins.list[ExtractionReport]:
        """Extract every pending window now (with ``user_id``, that user's only), waiting at
        most ``timeout`` seconds."""
        return self.extraction.flush(timeout, None if user_id is None else require_user(user_id))

    def consolidate(self, *, user_id: str, agent_id: str | None = None,
                    now: datetime | None = None, simulated_clock: bool = False,
                    ) -> ConsolidationReport:  # fmt: skip
        """Merge the user's facts that grew as supplements about one subject into one each.

        The parts are superseded by the merged fact, which keeps all their sources and
        history. With a model, one bounded call proposes the merges and hygiene vets
        them; without one, only near-duplicates are merged. Each scope is consolidated
        apart; with ``agent_id``, only that agent's facts. ``now`` stamps the run, held
        to the clock as for :meth:`maintain`.
        """
        return self._maintaining.consolidate(self.model, user_id, agent_id, now, simulated_clock)

    aconsolidate = async_twin(consolidate)
    amaintain = async_twin(maintain)
    arekey = async_twin(rekey)
    aobserve = async_twin(observe)
    aextract = async_twin(extract)
    aflush = async_twin(flush)
