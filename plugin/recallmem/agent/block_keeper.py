"""The thread-start memory block: built once, kept byte for byte, mended only when it must.

The block goes before the thread's first user message and holds the profile, the
corrections, the core (facts shown whatever the conversation is about), todos due soon
and the facts relevant to that first message (:mod:`recallmem.retrieval.injection`). It
stays byte-identical for the whole thread, so the provider's prompt cache keeps working;
later turns get what is new in notes of their own (:mod:`recallmem.agent.injector`).

It is rebuilt only when keeping it would mislead: the date changed, a fact it shows is
no longer active (forgotten, superseded, expired) or a todo in it falls due. A write that
only adds facts changes nothing here.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import date, datetime

from langchain_core.messages import BaseMessage, RemoveMessage
from langgraph.graph.message import REMOVE_ALL_MESSAGES

from recallmem.agent.fresh import CatchUp, FreshThreads
from recallmem.agent.messages import (
    block_message,
    current_turn,
    first_user_message,
    hidden_message,
    marker,
)
from recallmem.agent.scope import Scope
from recallmem.agent.shown_records import block_record, recent_record
from recallmem.agent.thread_view import SHOWN
from recallmem.facts.expiry import due_label, due_soon, is_expired, next_change
from recallmem.limits import MAX_PAGE, MAX_QUERY_CHARS
from recallmem.memory import Memory
from recallmem.retrieval.block_spec import MemoryBlockSpec
from recallmem.retrieval.core import core_facts
from recallmem.retrieval.injection import MemoryBlock, build_block
from recallmem.retrieval.notes import render_recent
from recallmem.retrieval.shown import RetrievalRecord
from recallmem.retrieval.when import user_zone
from recallmem.text.tokens import TokenCounter
from recallmem.types import Category, Fact, Profile, ScoredFact, ScoreParts, utcnow

_SCAN = MAX_PAGE  # facts read per page when choosing the core and the sections
CHECKED = "revision"  # the user's revision when the thread's memory was last checked
Recall = Callable[[str], list[ScoredFact]]


def _still_timely(until: object) -> bool:
    """Whether a block marked valid ``until`` (ISO, or absent) may stay as it is."""
    if until is None:
        return True
    try:
        return utcnow() < datetime.fromisoformat(str(until))
    except (TypeError, ValueError):
        return False  # a marker we cannot read: rebuild rather than keep stale facts


class ActiveFacts:
    """The user's active, unexpired facts by id, read once when first asked for."""

    def __init__(self, memory: Memory, user_id: str) -> None:
        self._memory, self._user_id = memory, user_id
        self._facts: dict[str, Fact] | None = None

    def __call__(self) -> dict[str, Fact]:
        if self._facts is None:
            now, offset = utcnow(), 0
            found: dict[str, Fact] = {}
            while page := self._memory.list(user_id=self._user_id, status="active",
                                            limit=_SCAN, offset=offset):  # fmt: skip
                found |= {f.id: f for f in page if not is_expired(f, now)}
                offset += len(page)
                if len(page) < _SCAN:
                    break
            self._facts = found
        return self._facts

    def all_of(self, ids: Sequence[str]) -> bool:
        """Whether every fact ``ids`` names is still active."""
        active = self()
        return all(i in active for i in ids)


@dataclass(frozen=True)
class Built:
    """What a turn does to the block: the messages to add, the records of what they show,
    whether the block answers the current message (a new thread's block is built for that
    message), and whether the user's memory changed since the thread last looked."""

    messages: list[BaseMessage]
    records: list[RetrievalRecord]
    for_current: bool = False
    checked: bool = False  # the user's memory changed since the last turn: notes checked too


@dataclass(frozen=True)
class BlockKeeper:
    """Builds and keeps the block of a thread, for one memory."""

    memory: Memory
    spec: MemoryBlockSpec
    counter: TokenCounter
    max_tokens: int
    correction_share: float
    core_limit: int
    core_share: float
    recent_tokens: int
    fresh: FreshThreads

    # -- what goes in ----------------------------------------------------------------

    def _profiles(self, scope: Scope) -> tuple[Profile, Profile | None]:
        user = self.memory.get_profile(user_id=scope.user_id)
        if scope.agent_id is None:
            return user, None
        return user, self.memory.get_profile(user_id=scope.user_id, agent_id=scope.agent_id)

    def build(
        self, query: str, relevant: list[ScoredFact], scope: Scope, today: date,
        active: ActiveFacts, turn_id: str | None, fresh: Sequence[Fact] = (),
    ) -> tuple[MemoryBlock, RetrievalRecord, datetime | None]:  # fmt: skip
        """The block for ``query``, its record, and when time alone changes it."""
        now, zone = utcnow(), user_zone(scope.timezone)
        # The facts this agent may see, not said in this thread (the thread shows those).
        facts = [f for f in active().values() if f.agent_id in (None, scope.agent_id)
                 and f.thread_id != scope.thread_id]  # fmt: skip
        corrections = [f for f in facts if f.category is Category.CORRECTION]
        todos = [f for f in facts if f.category is Category.TODO]
        due = [(f, due_label(f.valid_until, zone)) for f in todos
               if f.valid_until is not None and due_soon(f, now)]  # fmt: skip
        # What the user said moments ago elsewhere comes first among the relevant facts.
        first = [ScoredFact(fact=f, score=1.0, parts=ScoreParts()) for f in fresh]
        profile, agent_profile = self._profiles(scope)
        block = build_block(
            profile, corrections, [*first, *relevant], today=today, max_tokens=self.max_tokens,
            correction_share=self.correction_share, counter=self.counter, spec=self.spec,
            due=due, core=core_facts(facts, limit=self.core_limit), core_share=self.core_share,
            agent_profile=agent_profile,
        )  # fmt: skip
        shown = set(block.shown_ids)
        changes_at = next_change([f for f in facts if f.id in shown], todos, now)
        record = block_record(scope, turn_id, query, block, [*first, *relevant],
                              fresh={f.id for f in fresh})  # fmt: skip
        return block, record, changes_at

    # -- kept, mended, or new --------------------------------------------------------

    def _stale(self, existing: BaseMessage, today: date, active: ActiveFacts) -> bool:
        meta = marker(existing)
        if meta.get("date") != today.isoformat() or not _still_timely(meta.get("until")):
            return True
        ids = meta.get(SHOWN)
        return not isinstance(ids, list) or not active.all_of(ids)  # no ids: from before

    def _message(
        self, block: MemoryBlock, query: str, revision: str | None, today: date,
        changes_at: datetime | None, id: str | None = None,
    ) -> BaseMessage:  # fmt: skip
        meta = {"date": today.isoformat(), CHECKED: revision, "query": query,
                "tokens": block.tokens, SHOWN: list(block.shown_ids)}  # fmt: skip
        if changes_at is not None:
            meta["until"] = changes_at.isoformat()
        return hidden_message(block.text, "block", id=id, meta=meta)

    def update(
        self, messages: Sequence[BaseMessage], scope: Scope, today: date, relevant_for: Recall,
        active: ActiveFacts,
    ) -> Built:  # fmt: skip
        """The messages that insert, mend, re-mark or remove the block, if any."""
        revision = self.memory.revision(scope.user_id)
        existing = block_message(messages)
        user, _ = current_turn(messages)
        turn_id = user.id if user is not None else None
        if existing is None:
            return self._new(messages, scope, today, relevant_for, active, revision)
        meta = marker(existing)
        if (
            meta.get(CHECKED) == revision
            and meta.get("date") == today.isoformat()
            and (_still_timely(meta.get("until")))
        ):
            return Built([], [])  # nothing written or due since it was checked
        if not self._stale(existing, today, active):
            # Same text, same bytes for the provider; only the marker learns the check.
            kept = hidden_message(existing.text, "block", id=existing.id,
                                  meta={**meta, CHECKED: revision})  # fmt: skip
            return Built([kept], [], checked=True)
        query = str(meta.get("query") or "")
        block, record, changes_at = self.build(
            query, relevant_for(query), scope, today, active, turn_id
        )
        if block.empty:  # everything it showed was forgotten: it must not linger
            return Built([RemoveMessage(id=existing.id or "")], [record], checked=True)
        mended = self._message(block, query, revision, today, changes_at, id=existing.id)
        return Built([mended], [] if block.text == existing.content else [record], checked=True)

    def _new(
        self, messages: Sequence[BaseMessage], scope: Scope, today: date, relevant_for: Recall,
        active: ActiveFacts, revision: str | None,
    ) -> Built:  # fmt: skip
        first = first_user_message(messages)
        if first is None:
            return Built([], [])
        # The thread's first turn; later, a thread whose first block was empty gets one
        # as soon as memory has something (at its start, before the first message).
        user, _ = current_turn(messages)
        opening = user is first
        turn_id = user.id if user is not None else None
        query = first.text[:MAX_QUERY_CHARS]
        caught = self.fresh.catch_up(scope, user_zone(scope.timezone)) if opening else CatchUp()
        if caught.facts:  # written just now: read again
            active = ActiveFacts(self.memory, scope.user_id)
            revision = self.memory.revision(scope.user_id)
        block, record, changes_at = self.build(
            query, relevant_for(query), scope, today, active, turn_id, caught.facts
        )
        added = [] if block.empty else [self._message(block, query, revision, today, changes_at)]
        records = [record] if opening or added else []
        recent = self._recent(caught)
        if recent is not None:
            added.append(recent)
            tokens = self.counter.count(recent.text)
            records.append(recent_record(scope, turn_id, len(caught.said), tokens))
        if not added:
            return Built([], records, for_current=opening)
        return Built([RemoveMessage(id=REMOVE_ALL_MESSAGES), *added, *messages], records,
                     for_current=opening)  # fmt: skip

    def _recent(self, caught: CatchUp) -> BaseMessage | None:
        note = render_recent(caught.said, max_tokens=self.recent_tokens, counter=self.counter,
                             spec=self.spec)  # fmt: skip
        if not note.text:
            return None
        return hidden_message(note.text, "recent", meta={"waited": round(caught.waited, 3)})


__all__ = ["ActiveFacts", "BlockKeeper", "Built"]
