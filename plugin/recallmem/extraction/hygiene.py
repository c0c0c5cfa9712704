"""Memory hygiene: which proposed facts are stored, and what they do to the stored ones.

Pure: given what the model proposed, the window it read, the stored facts it was shown
and each proposal's nearest stored facts, :func:`make_plan` returns a
:class:`~recallmem.extraction.write_plan.Plan`. The rules, in order, for each new fact:

1. no secrets, whatever the model returns; no permissions granted to the assistant and
   nothing the assistant said about itself (``prompts/scope_rules.yaml``);
2. confidence at or above the threshold (0.7 by default) (rules 1-2 are every model
   proposal's, the ``remember`` tool's too: :mod:`recallmem.extraction.admission`);
3. evidence: the quote must be the user's own whole words from one of their messages,
   so facts drawn only from the assistant's words are dropped (``quotes``);
4. the fact is written in the language the user used, and its quote carries it
   (shares a word of it, or is a clause of its own: ``quotes.unsupported``); its
   particulars (numbers, URLs, e-mail addresses, names, code identifiers) are the
   user's, and it says not much more than the user did (``specifics``);
5. not a repeat of another fact of the same window;
6. if it replaces a stored fact (the model's ``supersede``), the stored one is
   superseded: kept, linked to its replacement, out of recall. Corrections carry the
   wrong approach in ``source_error``;
7. otherwise an exact or near duplicate (``admission.duplicate_of``) confirms the
   stored fact instead of adding one, and a fuller text replaces the stored text.

:func:`add_evictions` then keeps each user-and-agent scope under its cap, sparing
pinned facts and corrections.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, tzinfo
from typing import Any

from recallmem.errors import InvalidInputError
from recallmem.extraction.admission import Neighbours, Policy, Rules, duplicate_of, refusal
from recallmem.extraction.eviction import add_evictions as add_evictions  # re-exported
from recallmem.extraction.parser import CandidateFact, ExtractionResult, SupersedeRequest
from recallmem.extraction.quotes import locate_evidence as locate_evidence  # re-exported
from recallmem.extraction.quotes import unsupported
from recallmem.extraction.search_keys import vet_questions
from recallmem.extraction.specifics import unsaid_specifics
from recallmem.extraction.threads import Utterance
from recallmem.extraction.write_plan import (
    Add,
    Confirm,
    Dropped,
    MarkDone,
    Operation,
    Plan,
    ProfileChange,
    Supersede,
)
from recallmem.facts.expiry import resolve_local, start_local
from recallmem.facts.near_duplicates import Match
from recallmem.secrets.detector import find_secret, redact
from recallmem.text.words import cjk_share, content_units, normalize
from recallmem.types import PROFILE_SECTIONS, Category, Fact, Source

LINK_LIKENESS = 0.6  # a supersede's replacement text may be a paraphrase of the new fact


@dataclass(frozen=True)
class Context:
    """What hygiene knows besides the model's output."""

    user_id: str
    window: Sequence[Utterance]
    shown: Mapping[str, Fact] = field(default_factory=dict)  # "F1" -> fact shown to the model
    agent_id: str | None = None
    thread_id: str | None = None
    extractor: str | None = None
    prompt_version: str | None = None
    timezone: tzinfo = UTC  # the user's: where a local valid_until ends
    said: datetime | None = None  # when the window's last message was said: its "Today"


def _likeness(a: str, b: str) -> float:
    """1.0 for the same text; otherwise the overlap of meaningful words (Jaccard)."""
    if normalize(a) == normalize(b):
        return 1.0
    units_a, units_b = content_units(a), content_units(b)
    return len(units_a & units_b) / len(units_a | units_b) if units_a and units_b else 0.0


def _wrong_language(content: str, evidence: str) -> bool:
    said, written = cjk_share(evidence), cjk_share(content)
    return (said >= 0.5 and written == 0.0) or (said == 0.0 and written >= 0.5)


class _Planner:
    """One plan in the making; each method applies one rule."""

    def __init__(
        self,
        result: ExtractionResult,
        context: Context,
        policy: Policy,
        now: datetime,
        rules: Rules,
        new_id: Callable[[], str],
    ) -> None:
        self.result, self.ctx, self.policy, self.now = result, context, policy, now
        self.rules, self.secrets, self.new_id = rules, rules.secrets, new_id
        self.ops: list[Operation] = []
        self.dropped: list[Dropped] = [
            Dropped(
                content=redact(r.item, rules.secrets), reason=f"model output set aside: {r.reason}"
            )
            for r in result.rejected
        ]
        self.touched: set[str] = set()
        self.links: dict[int, list[tuple[SupersedeRequest, Fact]]] = {}
        for request in result.supersede:
            index = self._link(request)
            if index is not None and request.fact_id in context.shown:
                self.links.setdefault(index, []).append((request, context.shown[request.fact_id]))
        self.stored: set[int] = set()  # proposals that became new facts
        # What the user said: the window's user messages, and the facts shown (said before).
        self.said = [u.content for u in context.window if u.role == "user"]
        self.said += [f.content for f in context.shown.values()]

    def drop(self, candidate: CandidateFact, reason: str) -> None:
        self.dropped.append(
            # The journal and the report are written to disk: never a secret's text.
            Dropped(
                content=redact(candidate.content, self.secrets),
                category=candidate.category.value,
                reason=reason,
            )
        )

    def _refusal(self, candidate: CandidateFact) -> str | None:
        """Why a proposal cannot be stored at all (rules 1-4), else None."""
        if refused := refusal(candidate, self.policy, self.rules):
            return refused.reason
        _, why = locate_evidence(candidate.evidence, self.ctx.window)
        if why:
            return why
        if _wrong_language(candidate.content, candidate.evidence):
            return "not written in the language the user used"
        if weak := unsupported(candidate.content, candidate.evidence):
            return weak
        if unsaid := unsaid_specifics(candidate.content, self.said):
            return unsaid
        try:  # a date past the calendar's end (9999-12-31 for "for good") loses only this fact
            if candidate.valid_until:
                resolve_local(candidate.valid_until, self.ctx.timezone)
        except InvalidInputError as exc:
            return str(exc)
        return None

    def _source(self, candidate: CandidateFact) -> Source:
        where, _ = locate_evidence(candidate.evidence, self.ctx.window)
        said = where.said_at if where is not None else None
        return Source(
            thread_id=self.ctx.thread_id,
            message_ids=(where.id,) if where else (),
            quote=candidate.evidence,
            # When the quoted words were said, if the caller said so (an old transcript).
            at=datetime.fromtimestamp(said, UTC) if said is not None else self.now,
            extractor=self.ctx.extractor,
            prompt_version=self.ctx.prompt_version,
            agent_id=self.ctx.agent_id,
        )

    def _link(self, request: SupersedeRequest) -> int | None:
        """The proposed fact a supersede request names as its replacement, if any."""
        if not request.replacement:
            return None
        scores = [_likeness(request.replacement, c.content) for c in self.result.facts]
        best = max(range(len(scores)), key=scores.__getitem__, default=None)
        return best if best is not None and scores[best] >= LINK_LIKENESS else None

    def _duplicate(
        self, candidate: CandidateFact, neighbours: Neighbours
    ) -> tuple[Fact, Match] | None:
        return duplicate_of(candidate, neighbours, user_id=self.ctx.user_id,
                            threshold=self.policy.dedup_similarity, skip=self.touched)  # fmt: skip

    def candidate(self, index: int, neighbours: Neighbours, seen: set[str]) -> None:
        candidate = self.result.facts[index]
        if reason := self._refusal(candidate):
            return self.drop(candidate, reason)
        key = normalize(candidate.content)
        if key in seen:
            return self.drop(candidate, "repeats another fact of this window")
        seen.add(key)
        source = self._source(candidate)
        keys = self._keys(candidate)
        replaced = [(r, f) for r, f in self.links.get(index, []) if f.id not in self.touched]
        if not replaced and (dup := self._duplicate(candidate, neighbours)):
            fact, match = dup
            self.touched.add(fact.id)
            richer = candidate.content if match is Match.RICHER else None
            why = "says more than a stored fact" if richer else "repeats a stored fact"
            self.ops.append(Confirm(fact_id=fact.id, confidence=candidate.confidence,
                                    source=source, content=richer, reason=why,
                                    keywords=candidate.keywords, **keys))  # fmt: skip
            return None
        self._add(candidate, source, replaced, keys)
        self.stored.add(index)
        return None

    def _keys(self, candidate: CandidateFact) -> dict[str, Any]:
        """The candidate's search keys that may be stored, with who wrote them; the
        others are reported (the fact is kept: keys only help recall)."""
        vetted = vet_questions(candidate.questions, candidate.content, self.secrets,
                               self.rules.scope)  # fmt: skip
        self.dropped += [Dropped(content=f"question {r.key}", category=candidate.category.value,
                                 reason=r.reason) for r in vetted.rejected]  # fmt: skip
        if not vetted.kept:
            return {}
        writer = " ".join(filter(None, [self.ctx.prompt_version, self.ctx.extractor]))
        return {"questions": vetted.kept, "keyed_by": writer or "extraction"}

    def _add(
        self,
        candidate: CandidateFact,
        source: Source,
        replaced: list[tuple[SupersedeRequest, Fact]],
        keys: dict[str, Any],
    ) -> None:
        error = candidate.source_error
        if candidate.category is Category.CORRECTION and not error and replaced:
            error = replaced[0][1].content  # the corrected fact is the wrong approach
        fact = Fact(
            id=self.new_id(),
            content=candidate.content,
            category=candidate.category,
            confidence=candidate.confidence,
            user_id=self.ctx.user_id,
            # About the user: shared with every agent; only an agent's own work stays its own.
            agent_id=self.ctx.agent_id if candidate.scope == "agent" else None,
            thread_id=self.ctx.thread_id,
            sources=(source,),
            source_error=error,
            supersedes=replaced[0][1].id if replaced else None,
            valid_until=(
                resolve_local(candidate.valid_until, self.ctx.timezone)
                if candidate.valid_until
                else None
            ),
            created_at=self.now,
            updated_at=self.now,
            keywords=candidate.keywords,
            **keys,
        )
        reason = "new fact" if not replaced else f"replaces {len(replaced)} stored fact(s)"
        self.ops.append(Add(fact=fact, reason=reason))
        for request, old in replaced:
            self.touched.add(old.id)
            why = request.reason or ("corrected" if error else "replaced by a newer fact")
            self.ops.append(Supersede(fact_id=old.id, by=fact.id, reason=why,
                                      on=self._takes_effect(request)))  # fmt: skip

    def _takes_effect(self, request: SupersedeRequest) -> datetime | None:
        """When a change still ahead of the window begins; None if it has happened (or
        its day is not one the calendar has: then the change counts from now)."""
        if not request.effective_from:
            return None
        try:
            on = start_local(request.effective_from, self.ctx.timezone)
        except InvalidInputError:
            return None
        return on if on > (self.ctx.said or self.now) else None

    def leftovers(self) -> None:
        """Supersede requests without a stored replacement, confirmations, finished todos."""
        for request in self.result.supersede:
            target = self.ctx.shown.get(request.fact_id)
            index = self._link(request)
            if target is None:
                self._drop_ref(request.fact_id, "supersede")
            elif target.id in self.touched:
                continue
            elif request.replacement is None:
                if request.reason:  # a retraction: "I no longer work there"
                    self.touched.add(target.id)
                    self.ops.append(Supersede(fact_id=target.id, reason=request.reason,
                                              on=self._takes_effect(request)))  # fmt: skip
            elif index is None or index not in self.stored:
                why = (
                    "its replacement was not stored"
                    if index is not None
                    else "its replacement is not among the new facts"
                )
                self.dropped.append(Dropped(content=f"supersede {target.content}", reason=why))
        for ref in self.result.confirmed:
            self._simple(ref, "confirm")
        for ref in self.result.todos_done:
            self._simple(ref, "done")

    def _drop_ref(self, ref: str, what: str) -> None:
        self.dropped.append(
            Dropped(
                content=f"{what} {ref}", reason=f"{ref} is not one of the facts shown to the model"
            )
        )

    def _simple(self, ref: str, kind: str) -> None:
        target = self.ctx.shown.get(ref)
        if target is None:
            return self._drop_ref(ref, kind)
        if target.id in self.touched:
            return None
        if kind == "done" and target.category is not Category.TODO:
            self.dropped.append(Dropped(content=f"done {target.content}", reason="not a todo"))
            return None
        self.touched.add(target.id)
        if kind == "done":
            self.ops.append(MarkDone(fact_id=target.id, reason="the user finished it"))
        else:
            source = Source(thread_id=self.ctx.thread_id, at=self.now, extractor=self.ctx.extractor,
                            prompt_version=self.ctx.prompt_version,
                            agent_id=self.ctx.agent_id)  # fmt: skip
            self.ops.append(Confirm(fact_id=target.id, confidence=target.confidence,
                                    source=source, reason="restated by the user"))  # fmt: skip
        return None

    def profile(self) -> list[ProfileChange]:
        changes = []
        for section in PROFILE_SECTIONS:
            update = self.result.profile.get(section)
            if not update or not update.should_update or not update.summary:
                continue
            if find_secret(update.summary, self.secrets, count_redacted=True):
                self.dropped.append(Dropped(content=f"profile {section}", reason="holds a secret"))
            else:
                changes.append(ProfileChange(section=section, summary=update.summary[:600]))
        return changes


def make_plan(
    result: ExtractionResult,
    context: Context,
    neighbours: Sequence[Neighbours],
    *,
    policy: Policy | None = None,
    now: datetime,
    rules: Rules | None = None,
    new_id: Callable[[], str] = lambda: uuid.uuid4().hex,
) -> Plan:
    """The plan for one window. ``neighbours[i]`` are the stored facts nearest to
    ``result.facts[i]`` (active, in the context's scope) with their cosines."""
    if len(neighbours) != len(result.facts):
        raise ValueError("give one list of neighbours per proposed fact")
    planner = _Planner(result, context, policy or Policy(), now, rules or Rules.load(), new_id)
    seen: set[str] = set()
    for index, near in enumerate(neighbours):
        planner.candidate(index, near, seen)
    planner.leftovers()
    profile = planner.profile()  # before `dropped` is read: it may drop a section
    return Plan(
        user_id=context.user_id,
        agent_id=context.agent_id,
        thread_id=context.thread_id,
        at=now,
        operations=tuple(planner.ops),
        dropped=tuple(planner.dropped),
        profile=tuple(profile),
    )
