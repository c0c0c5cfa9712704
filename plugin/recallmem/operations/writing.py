"""Writing a user's memory: new facts (deduplicated), facts a model proposed (vetted as
extraction vets them), edits, forgetting, profiles."""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from functools import cached_property, partial
from typing import Any

from recallmem.config import MemoryConfig
from recallmem.errors import FactNotFoundError, RecallmemError
from recallmem.extraction.admission import Policy, Rules, refusal
from recallmem.extraction.parser import CandidateFact
from recallmem.extraction.proposal import ProposalOutcome, outcome_of, plan_proposal
from recallmem.extraction.search_keys import vet_questions
from recallmem.extraction.write_plan import apply_plan
from recallmem.facts.validation import (
    check_confidence,
    check_content,
    check_fact_id,
    check_flag,
    check_items,
    check_profile,
    edit_fact,
    new_fact,
    optional_key,
    parse_category,
    require_user,
)
from recallmem.lifecycle.merge_journal import JournalFiles
from recallmem.limits import check_keywords
from recallmem.operations.extracting import Extracting
from recallmem.persistence.forget_ledger import as_work, outside_work
from recallmem.persistence.pending_erasures import PendingErasures
from recallmem.persistence.repository import FactRepository
from recallmem.persistence.retrieval_records import RetrievalRecords
from recallmem.types import (
    PLANNER_SOURCE,
    Category,
    Fact,
    Profile,
    Revision,
    Source,
    Status,
    utcnow,
)

NEIGHBOURS = 5  # stored facts a proposal is compared with, as a window's fact is

log = logging.getLogger("recallmem.store")


class Writing:
    """Checks a write's input and screens it for secrets before the repository stores it."""

    def __init__(
        self, repository: FactRepository, config: MemoryConfig, extracting: Extracting
    ) -> None:
        self.repository = repository
        self.config = config
        self.extracting = extracting
        # What reached a model: a purge of facts (or of the user) erases their entries.
        self.records = RetrievalRecords(config, repository.erasure)
        self.policy = Policy.from_config(config)  # what a model's proposed fact meets
        self._erasing = PendingErasures.of(config.home)  # purges under way or interrupted
        # A pending consolidation plan quotes its parts: a purge rewrites it first.
        repository.erasure.quoting.append(JournalFiles(config.home).forget)
        self._finish_interrupted()

    @cached_property
    def rules(self) -> Rules:
        """The secret and scope rules proposals meet, loaded on first use."""
        return Rules.load(self.config.prompt_dir)

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
    def remember_proposed(
        self,
        content: str,
        *,
        user_id: str,
        category: str | Category,
        confidence: float,
        agent_id: str | None,
        thread_id: str | None,
        message_id: str | None,
        keywords: Sequence[str],
        learned_in: str | None = None,
        questions: Sequence[str] = (),
    ) -> ProposalOutcome:
        """Add, confirm or refuse one fact a model proposed (the ``remember`` tool) under
        extraction's rules (:mod:`recallmem.extraction.admission`), checked before it is
        embedded: a refused text never reaches the embedder. Planned and written under
        the user's lock (:mod:`recallmem.extraction.proposal`), so two proposals of one
        fact at once (parallel tool calls) confirm one fact instead of adding two.
        ``questions``, the model's search keys, are vetted as the extractor's are; one
        that fails is left out and the fact kept (keys only help recall)."""
        user_id = require_user(user_id)
        agent_id = optional_key(agent_id, "agent_id")
        thread_id = optional_key(thread_id, "thread_id")
        message_id = optional_key(message_id, "message_id")
        candidate = CandidateFact(
            content=check_content(content), category=parse_category(category),
            confidence=check_confidence(confidence), keywords=check_keywords(keywords),
        )  # fmt: skip
        if questions:
            keys = vet_questions(questions, candidate.content, self.rules.secrets, self.rules.scope)
            candidate = candidate.model_copy(update={"questions": keys.kept})
        if refused := refusal(candidate, self.policy, self.rules):
            return ProposalOutcome(outcome="refused", reason=refused.reason, refusal=refused.kind)
        now = utcnow()
        source = Source(thread_id=thread_id, message_ids=(message_id,) if message_id else (),
                        at=now, extractor=PLANNER_SOURCE,
                        agent_id=optional_key(learned_in, "agent_id"))  # fmt: skip
        repository = self.repository
        with repository.writing(user_id) as index:
            vectors = repository.embed([candidate.content])
            [near] = index.nearest(vectors, agent_id=agent_id, k=NEIGHBOURS, now=now)
            active = [f for f in index.facts()
                      if f.agent_id == agent_id and f.status is Status.ACTIVE]  # fmt: skip
            plan = plan_proposal(
                candidate, user_id=user_id, agent_id=agent_id, thread_id=thread_id,
                source=source, neighbours=near, active=active, policy=self.policy, now=now,
            )  # fmt: skip
            current = {i: f for i in plan.targets() if (f := index.get(i)) is not None}
            records = apply_plan(plan, current)
            # The proposal's text is embedded once: a new fact, or a fuller text it gave.
            said = [r for r in records if r.content == candidate.content
                    and (r.id not in current or current[r.id].content != r.content)]  # fmt: skip
            rest = [r for r in records if r.id not in {f.id for f in said}]
            repository.write(index, said, vectors if said else None, rest)
        return outcome_of(plan, {**current, **{r.id: r for r in records}})

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
        questions: Sequence[str] | None = None,
    ) -> Fact:
        """Edit a fact; new content is re-embedded and the old text kept in history."""
        return self.repository.edit(fact_id, user_id, lambda old: edit_fact(
            old, now=utcnow(), content=content, category=category, confidence=confidence,
            pinned=pinned, status=status, reason=reason, secrets=self.config.secrets,
            valid_until=valid_until, keywords=keywords, questions=questions,
        ))  # fmt: skip

    def move(self, fact_id: str, user_id: str | None, agent_id: str | None) -> Fact:
        """Move a fact to the user's shared scope (``agent_id`` None) or to one agent's."""
        agent_id = optional_key(agent_id, "agent_id")

        def moved(old: Fact) -> Fact:
            if old.agent_id == agent_id:
                return old
            where = f"agent {agent_id}" if agent_id else "the user's shared memory"
            kept = Revision(content=old.content, category=old.category, at=utcnow(),
                            reason=f"moved to {where}")  # fmt: skip
            return old.model_copy(update={"agent_id": agent_id, "updated_at": kept.at,
                                          "history": (*old.history, kept)})  # fmt: skip

        return self.repository.edit(check_fact_id(fact_id), user_id, moved)

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
        quote any of the user's facts or words) and the retrieval records of the scope
        (the purged facts' entries in the others: ``RetrievalRecords.forget``)."""
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
        if purge and fact_id is None:  # a scope's records quote its words
            self.records.forget_scope(user_id, agent_id=agent_id, thread_id=thread_id)
        return forgotten

    @as_work
    def set_profile(self, profile: Profile) -> Profile:
        """Replace the profile of ``profile.user_id`` (and ``agent_id``), screened."""
        profile = check_profile(profile, self.config.secrets)
        self.repository.save_profile(profile)
        return profile
