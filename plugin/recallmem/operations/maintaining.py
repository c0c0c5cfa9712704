"""Tending a memory over time: maintenance runs, consolidation, copies between scopes."""

from __future__ import annotations

import threading
from collections.abc import Iterable, Sequence
from datetime import datetime
from typing import TYPE_CHECKING

from langchain_core.language_models import BaseChatModel

from recallmem.config import MemoryConfig
from recallmem.facts.validation import check_flag, optional_key, parse_categories, require_user
from recallmem.lifecycle.consolidation import ConsolidationReport, consolidate
from recallmem.lifecycle.scope_copy import check_ids, copy_facts
from recallmem.limits import check_maintain_now
from recallmem.persistence.repository import FactRepository
from recallmem.types import Category, Fact, utcnow

if TYPE_CHECKING:
    from recallmem.lifecycle.maintenance import Maintainer


class Maintaining:
    """Runs the lifecycle's stages on the repository with the model a call is given (a
    Memory's model may be replaced after it opened); the maintainer opens on first use."""

    def __init__(self, repository: FactRepository, config: MemoryConfig) -> None:
        self.repository = repository
        self.config = config
        self._maintainer: Maintainer | None = None
        self._opening = threading.Lock()

    def maintainer(self, model: BaseChatModel | None) -> Maintainer:
        """Decay, expiry, purge of old faded facts, consolidation, the daily runs; opened
        with ``model`` at the first call."""
        from recallmem.lifecycle.maintenance import open_maintainer

        with self._opening:
            if self._maintainer is None:
                self._maintainer = open_maintainer(self.repository, self.config, model)
            return self._maintainer

    def consolidate(
        self,
        model: BaseChatModel | None,
        user_id: str,
        agent_id: str | None,
        now: datetime | None,
        simulated_clock: bool,
    ) -> ConsolidationReport:
        """Consolidate one user's scopes as of ``now``, held to the clock as maintenance is
        (``limits.check_maintain_now``): a run stamps the merged facts with it."""
        clock, simulated = utcnow(), check_flag(simulated_clock, "simulated_clock")
        at = clock if now is None else check_maintain_now(now, clock=clock, simulated=simulated)
        return consolidate(self.repository, model, self.config, user_id=require_user(user_id),
                           agent_id=optional_key(agent_id, "agent_id"), now=at)  # fmt: skip

    def copy(
        self,
        from_user_id: str,
        to_user_id: str,
        from_agent_id: str | None,
        to_agent_id: str | None,
        categories: Iterable[str | Category] | None,
        ids: Sequence[str] | None,
    ) -> list[Fact]:
        """Copy a scope's active facts into another (``Memory.copy``); a copy into
        another user is recorded first, for erasing the source (store/copy_links.py)."""
        if from_user_id != to_user_id:
            self.repository.store.copy_links.note(require_user(from_user_id),
                                                  require_user(to_user_id))  # fmt: skip
        return copy_facts(
            self.repository, self.config, from_user_id=require_user(from_user_id),
            to_user_id=require_user(to_user_id),
            from_agent_id=optional_key(from_agent_id, "from_agent_id"),
            to_agent_id=optional_key(to_agent_id, "to_agent_id"),
            categories=parse_categories(categories), ids=check_ids(ids), now=utcnow(),
        )  # fmt: skip

    def close(self, timeout: float) -> None:
        """Stop the daily runs, if the maintainer was opened."""
        if self._maintainer is not None:
            self._maintainer.close(timeout)
