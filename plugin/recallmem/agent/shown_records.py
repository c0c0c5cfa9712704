"""The records of what the middleware and the tools put before the model. Pure.

Each builder turns one retrieval (the block at the start of a thread, a recalled note,
a ``recall`` tool answer) into a :class:`~recallmem.retrieval.shown.RetrievalRecord`:
the facts that reached the model, in their role and with their scores, and the facts
considered but left out, with the reason. ``Memory.record_retrieval`` keeps them.

>>> from recallmem.types import Fact, ScoreParts, ScoredFact
>>> hit = ScoredFact(fact=Fact(id="f1", content="Likes tea", category="preference",
...                            user_id="ada"), score=0.8, parts=ScoreParts(dense=0.9))
>>> record = recalled_record(Scope("ada", thread_id="t1"), "m1", "tea", [hit], "cue", ())
>>> [(d.fact_id, d.reason) for d in record.dropped], record.shown
([('f1', 'budget')], ())
"""

from __future__ import annotations

from collections.abc import Collection, Sequence

from recallmem.agent.scope import Scope
from recallmem.retrieval.injection import MemoryBlock
from recallmem.retrieval.shown import DroppedFact, RetrievalRecord, Role, ShownFact, Trigger
from recallmem.types import ScoredFact


def _record(
    scope: Scope,
    turn_id: str | None,
    query: str,
    trigger: Trigger,
    shown: Sequence[ShownFact],
    dropped: Sequence[DroppedFact] = (),
    tokens: int | None = None,
) -> RetrievalRecord:
    return RetrievalRecord(user_id=scope.user_id, agent_id=scope.agent_id,
                           thread_id=scope.thread_id, turn_id=turn_id, trigger=trigger,
                           query=query, shown=tuple(shown), dropped=tuple(dropped),
                           tokens=tokens)  # fmt: skip


def _shown(hit: ScoredFact, role: Role) -> ShownFact:
    return ShownFact(fact_id=hit.fact.id, role=role, score=hit.score, parts=hit.parts)


def block_record(
    scope: Scope,
    turn_id: str | None,
    query: str,
    block: MemoryBlock,
    relevant: Sequence[ScoredFact],
    fresh: Collection[str] = (),
) -> RetrievalRecord:
    """The record of a start-of-thread block: its corrections, core, due todos and
    relevant facts (``fresh``: those just extracted from the user's waiting turns, shown as
    ``recent``), and the ones the budget left out (``relevant``: the ranked hits offered)."""
    scored = {hit.fact.id: hit for hit in relevant}
    shown = [
        *(ShownFact(fact_id=i, role="correction") for i in block.correction_ids),
        *(ShownFact(fact_id=i, role="core") for i in block.core_ids),
        *(ShownFact(fact_id=i, role="due") for i in block.due_ids),
        *(ShownFact(fact_id=i, role="recent") for i in block.fact_ids if i in fresh),
        *(_shown(scored[i], "relevant") for i in block.fact_ids if i in scored and i not in fresh),
    ]
    dropped = [
        DroppedFact(fact_id=i, reason="budget", score=scored[i].score if i in scored else None)
        for i in block.dropped_ids
    ]
    return _record(scope, turn_id, query, "block", shown, dropped, block.tokens)


def recalled_record(
    scope: Scope,
    turn_id: str | None,
    query: str,
    hits: Sequence[ScoredFact],
    trigger: Trigger,
    carried: Collection[str],
    tokens: int | None = None,
) -> RetrievalRecord:
    """The record of a note of recalled facts (a cue's, a hedge's): the hits it
    ``carried``, and the ones its budget left out."""
    shown = [_shown(h, "recalled") for h in hits if h.fact.id in carried]
    dropped = [DroppedFact(fact_id=h.fact.id, reason="budget", score=h.score)
               for h in hits if h.fact.id not in carried]  # fmt: skip
    return _record(scope, turn_id, query, trigger, shown, dropped, tokens)


def turn_record(
    scope: Scope,
    turn_id: str | None,
    query: str,
    hits: Sequence[ScoredFact],
    carried: Collection[str],
    visible: Collection[str],
    limit: int,
    tokens: int | None = None,
) -> RetrievalRecord:
    """The record of a later turn's note: the hits it ``carried``; those the thread showed
    already (``visible``), those past the note's ``limit`` and those its budget left out."""
    fresh = [h for h in hits if h.fact.id not in visible]
    dropped = [
        *(DroppedFact(fact_id=h.fact.id, reason="visible", score=h.score)
          for h in hits if h.fact.id in visible),
        *(DroppedFact(fact_id=h.fact.id, reason="limit" if n >= limit else "budget",
                      score=h.score)
          for n, h in enumerate(fresh) if h.fact.id not in carried),
    ]  # fmt: skip
    shown = [_shown(h, "relevant") for h in fresh if h.fact.id in carried]
    return _record(scope, turn_id, query, "turn", shown, dropped, tokens)


def recent_record(
    scope: Scope, turn_id: str | None, said: int, tokens: int | None = None
) -> RetrievalRecord:
    """The record of the words carried into a new thread: no fact, ``said`` messages."""
    return _record(scope, turn_id, f"{said} message(s) still waiting", "recent", [], [], tokens)


def tool_record(
    scope: Scope, turn_id: str | None, query: str, hits: Sequence[ScoredFact]
) -> RetrievalRecord:
    """The record of a ``recall`` tool answer: every hit reached the model."""
    return _record(scope, turn_id, query, "tool", [_shown(h, "recalled") for h in hits])
