"""Copying facts from one scope to another: a team template seeding a new user or agent.

A copy is a new fact (its own id) in the destination scope, with ``copied_from`` saying
which fact of which user and agent it came from, and the original's evidence. Copies
are written like any new fact: screened for secrets by the configured policy, and
folded into a destination fact they duplicate (the near-duplicate rule), which is then
confirmed instead of gaining a twin. Only active facts are copied.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import TYPE_CHECKING

from recallmem.config import MemoryConfig
from recallmem.errors import FactNotFoundError, InvalidInputError
from recallmem.events import CopyEvent, log_event
from recallmem.persistence.forget_ledger import work_began
from recallmem.secrets.detector import screen_fact
from recallmem.types import Category, Fact, Origin, Status

if TYPE_CHECKING:
    from recallmem.persistence.repository import FactRepository


def check_ids(ids: object) -> list[str] | None:
    """Fact ids to copy: a list of strings, or None for every fact of the scope."""
    if ids is None:
        return None
    if isinstance(ids, str | bytes) or not isinstance(ids, Sequence):
        raise InvalidInputError(
            f"ids must be a list of fact ids, got {type(ids).__name__}; wrap one id in a list"
        )
    if bad := [i for i in ids if not isinstance(i, str) or not i.strip()]:
        raise InvalidInputError(f"ids must be non-empty strings, got {bad[:3]!r}")
    return list(ids)


def _check_in_scope(
    facts: Sequence[Fact], ids: Sequence[str], *, user_id: str, agent_id: str | None
) -> None:
    everywhere = {f.id: f for f in facts}
    for fact_id in ids:
        found = everywhere.get(fact_id)
        if found is None:
            raise FactNotFoundError(fact_id, user_id)
        if found.agent_id != agent_id:
            where = "the shared scope" if found.agent_id is None else f"agent {found.agent_id!r}"
            raise InvalidInputError(
                f"fact {fact_id!r} belongs to {where}, not to the source scope; pass that "
                "scope as from_agent_id"
            )


def _selected(
    facts: Sequence[Fact],
    *,
    user_id: str,
    agent_id: str | None,
    categories: frozenset[Category] | None,
    ids: Sequence[str] | None,
) -> list[Fact]:
    scope = [f for f in facts if f.agent_id == agent_id]
    if ids is not None:
        _check_in_scope(facts, ids, user_id=user_id, agent_id=agent_id)
        by_id = {f.id: f for f in scope}
        if inactive := [i for i in ids if by_id[i].status is not Status.ACTIVE]:
            raise InvalidInputError(
                f"facts {inactive} are not active (superseded, done or forgotten); only "
                "active facts are copied"
            )
        scope = [by_id[i] for i in dict.fromkeys(ids)]
    return [
        f
        for f in scope
        if f.status is Status.ACTIVE and (categories is None or f.category in categories)
    ]


def _copy_of(fact: Fact, *, user_id: str, agent_id: str | None, now: datetime) -> Fact:
    origin = Origin(user_id=fact.user_id, agent_id=fact.agent_id, fact_id=fact.id, at=now)
    return Fact(
        content=fact.content,
        category=fact.category,
        confidence=fact.confidence,
        user_id=user_id,
        agent_id=agent_id,
        sources=fact.sources,
        source_error=fact.source_error,
        pinned=fact.pinned,
        created_at=now,
        updated_at=now,
        copied_from=origin,
    )


def copy_facts(
    store: FactRepository,
    config: MemoryConfig,
    *,
    from_user_id: str,
    to_user_id: str,
    from_agent_id: str | None,
    to_agent_id: str | None,
    categories: frozenset[Category] | None,
    ids: Sequence[str] | None,
    now: datetime,
) -> list[Fact]:
    """Copy the source scope's active facts (narrowed by category or id) to the destination.

    Returns, per copied fact, the destination fact it became (a new copy, or the
    destination's duplicate it confirmed). A secret is refused (nothing is written) or
    redacted as ``config.secrets`` says.
    """
    if (from_user_id, from_agent_id) == (to_user_id, to_agent_id):
        raise InvalidInputError(
            "the source and destination are the same scope; name another to_user_id or to_agent_id"
        )
    # From the read of the source to the write of the copies: a forget of the source
    # meanwhile refuses the copies (persistence/forget_ledger.py).
    with work_began(user_id=from_user_id, agent_id=from_agent_id):
        chosen = _selected(store.facts(from_user_id), user_id=from_user_id,
                           agent_id=from_agent_id, categories=categories, ids=ids)  # fmt: skip
        copies = [screen_fact(_copy_of(f, user_id=to_user_id, agent_id=to_agent_id, now=now),
                              config.secrets) for f in chosen]  # fmt: skip
        stored = (
            store.remember(copies, threshold=config.dedup_similarity, now=now) if copies else []
        )
    fresh = {c.id for c in copies}
    new = sum(f.id in fresh for f in {f.id: f for f in stored}.values())
    log_event(CopyEvent(from_user_id=from_user_id, from_agent_id=from_agent_id,
                        to_user_id=to_user_id, to_agent_id=to_agent_id, copied=new,
                        confirmed=len(stored) - new))  # fmt: skip
    return stored
