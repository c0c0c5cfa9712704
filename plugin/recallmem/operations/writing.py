"""Writing a user's memory: new facts (deduplicated), edits, forgetting, profiles."""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from functools import partial
from typing import Any

from recallmem.config import MemoryConfig
from recallmem.errors import FactNotFoundError, RecallmemError
from recallmem.facts.validation import (
    check_fact_id,
    check_flag,
    check_items,
    check_profile,
    edit_fact,
    new_fact,
    optional_key,
    require_user,
)
from recallmem.lifecycle.merge_journal import JournalFiles
from recallmem.operations.extracting import Extracting
from recallmem.persistence.forget_ledger import as_work, outside_work
from recallmem.persistence.pending_erasures import PendingErasures
from recallmem.persistence.repository import FactRepository
from recallmem.types import Category, Fact, Profile, Status, utcnow

log = logging.getLogger("recallmem.store")


class Writing:
    """Checks a write's input and screens it for secrets before the repository stores it."""

    def __init__(
        self, repository: FactRepository, config: MemoryConfig, extracting: Extracting
    ) -> None:
        self.repository = repository
        self.config = config
        self.extracting = extracting
        self._erasing = PendingErasures.of(config.home)  # purges under way or interrupted
        # A pending consolidation plan quotes its parts: a purge rewrites it first.
        repository.erasure.quoting.append(JournalFiles(config.home).forget)
        self._finish_interrupted()

    def _finish_interrupted(self) -> None:
        """Finish the erasures a full disk or a crash interrupted (they stay recorded,
        and the user's writes refused, if they fail again)."""
        erasing = self._erasing
        for user_id, thread_id, agent_id, fact_id in list(erasing.interrupted):
            try:
                self.forget(fact_id, user_id=user_id, thread_id=thread_id, agent_id=agent_id,
                            purge=True)  # fmt: skip
            except FactNotFoundError:  # the fact was erased before the interruption
                erasing.end((user_id, thread_id, agent_id, fact_id), finished=True)
            except RecallmemError as exc:
                log.warning("recallmem: an interrupted erasure of user %r failed again: %s",
                            user_id, exc)  # fmt: skip

    @as_work
    def remember_many(
        self,
        items: Iterable[Mapping[str, Any]],
        *,
        user_id: str,
        agent_id: str | None,
        thread_id: str | None,
    ) -> list[Fact]:
        """Store many facts in one embedding batch; duplicates confirm existing facts."""
        user_id, now = require_user(user_id), utcnow()
        make = partial(new_fact, user_id=user_id, agent_id=agent_id, thread_id=thread_id,
                       now=now, secrets=self.config.secrets)  # fmt: skip
        candidates = [make(i) for i in check_items(items)]
        return self.repository.remember(candidates, threshold=self.config.dedup_similarity, now=now)

    @as_work
    def update(
        self,
        fact_id: str,
        user_id: str | None,
        *,
        content: str | None,
        category: str | Category | None,
        confidence: float | None,
        pinned: bool | None,
        status: str | Status | None,
        reason: str | None,
        valid_until: datetime | str | None,
        keywords: Sequence[str] | None = None,
    ) -> Fact:
        """Edit a fact; new content is re-embedded and the old text kept in history."""
        return self.repository.edit(fact_id, user_id, lambda old: edit_fact(
            old, now=utcnow(), content=content, category=category, confidence=confidence,
            pinned=pinned, status=status, reason=reason, secrets=self.config.secrets,
            valid_until=valid_until, keywords=keywords,
        ))  # fmt: skip

    def forget(
        self,
        fact_id: str | None,
        *,
        user_id: str | None,
        thread_id: str | None,
        agent_id: str | None,
        purge: bool,
    ) -> int:
        """Forget one fact or a scope of a user's, with the queued words of that scope; a
        purge also drops the user's recent extraction reports (all of them: a report may
        quote any of the user's facts or words)."""
        purge = check_flag(purge, "purge")  # purge="no" must not erase anything
        thread_id = optional_key(thread_id, "thread_id")
        agent_id = optional_key(agent_id, "agent_id")
        if fact_id is not None:
            user_id = self.repository.get(check_fact_id(fact_id), user_id=user_id).user_id
        user_id = require_user(user_id)
        if not purge:
            return self._forget(fact_id, user_id, thread_id, agent_id, purge=False)
        # Recorded first: if the disk is full, nothing is erased; if the erasure stops
        # half way, it is finished at the next open (persistence/pending_erasures.py).
        erasure = (user_id, thread_id, agent_id, fact_id)
        self._erasing.begin(erasure)
        finished = False
        try:
            forgotten = self._forget(fact_id, user_id, thread_id, agent_id, purge=True)
            finished = True
        finally:
            self._erasing.end(erasure, finished=finished)
        return forgotten

    def _forget(self, fact_id: str | None, user_id: str, thread_id: str | None,
                agent_id: str | None, *, purge: bool) -> int:  # fmt: skip
        if purge:  # owed before the queue loses words too: a crash then scrubs at open
            self.repository.erasure.owed.owe()
        # Recorded before anything is erased: work in flight cannot write it back
        # (persistence/forget_ledger.py). A soft forget of one fact leaves no words out.
        record = partial(self.repository.forgets.record, user_id, thread_id=thread_id,
                         agent_id=agent_id, ids=None if fact_id is None else [fact_id],
                         purge=purge)  # fmt: skip
        if fact_id is None or purge:
            record()
        if fact_id is None:
            # Queued words of that scope would bring the facts back; a turn queued in
            # the same transaction as the record is deleted, one after it refused.
            self.extracting.drop_queued(user_id, thread_id=thread_id, agent_id=agent_id,
                                        erase=purge, inside=record)  # fmt: skip
        if purge:
            self.extracting.scrub()  # the words the facts came from (Chroma's file follows)
        with outside_work():  # the forget's own writes are not in flight before it
            forgotten = self.repository.forget(user_id, fact_id=fact_id, thread_id=thread_id,
                                               agent_id=agent_id, purge=purge)  # fmt: skip
        if purge:  # this process's recent reports quote the user's words
            self.extracting.forget_reports(user_id)
        return forgotten

    @as_work
    def set_profile(self, profile: Profile) -> Profile:
        """Replace the profile of ``profile.user_id`` (and ``agent_id``), screened."""
        profile = check_profile(profile, self.config.secrets)
        self.repository.save_profile(profile)
        return profile
