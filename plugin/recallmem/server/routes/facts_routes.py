"""``/v1/users/{user_id}/facts``: list, read, write, edit, pin, move and forget one user's
facts.

Every call goes through the user resolved from the token (:mod:`.auth`); a fact id of
another user is answered exactly like an id that does not exist. A fact id in a path may
be any prefix unique among the user's facts, as on the command line.
"""

from __future__ import annotations

import asyncio
from typing import Annotated, Literal

from fastapi import APIRouter, Depends, Path, Query, Response, status

from recallmem.errors import FactNotFoundError
from recallmem.integrations.lookup import resolve_fact_id
from recallmem.limits import DEFAULT_PAGE, MAX_ID_CHARS, MAX_OFFSET, SCOPE_ID_PATTERN
from recallmem.memory import Memory
from recallmem.server.admission import AdmittedRoute
from recallmem.server.auth import UserId
from recallmem.server.problems import PROBLEM_RESPONSES, problem_response
from recallmem.server.schemas import (
    MAX_PAGE_SIZE,
    Affected,
    Evidence,
    FactCreate,
    FactDetail,
    FactMove,
    FactPage,
    FactPatch,
)
from recallmem.server.state import MemoryDep
from recallmem.types import MANUAL_SOURCE, Category, Fact, Source

router = APIRouter(
    prefix="/v1/users/{user_id}/facts",
    tags=["facts"],
    responses={
        **PROBLEM_RESPONSES,
        404: problem_response("No such fact for this user"),
        409: problem_response("An id prefix several facts share, or a forget meanwhile"),
    },
    route_class=AdmittedRoute,
)


def resolved_fact_id(
    user: UserId,
    memory: MemoryDep,
    fact_id: Annotated[
        str,
        Path(
            min_length=1,
            max_length=MAX_ID_CHARS,
            description="The fact's id, or any prefix of it unique among the user's facts "
            "(the CLI's rule: the 12 characters tables show are enough)",
        ),
    ],
) -> str:
    """The whole id of the user's fact that ``fact_id`` names (400 when it is ambiguous)."""
    return resolve_fact_id(memory, fact_id, user_id=user)


FactId = Annotated[str, Depends(resolved_fact_id)]
ScopeFilter = Annotated[str | None, Query(pattern=SCOPE_ID_PATTERN)]
StatusFilter = Literal["active", "superseded", "done", "deleted", "faded", "expired", "all"]
_MAX_LINEAGE = 50  # a supersede chain longer than this is cut, never followed forever


@router.get("", response_model=FactPage, summary="List facts")
async def list_facts(
    user: UserId,
    memory: MemoryDep,
    category: Category | None = None,
    status_: Annotated[StatusFilter, Query(alias="status")] = "active",
    agent_id: ScopeFilter = None,
    thread_id: ScopeFilter = None,
    text: Annotated[str | None, Query(min_length=1, max_length=MAX_ID_CHARS)] = None,
    limit: Annotated[int, Query(ge=1, le=MAX_PAGE_SIZE)] = DEFAULT_PAGE,
    offset: Annotated[int, Query(ge=0, le=MAX_OFFSET)] = 0,
) -> FactPage:
    """The user's facts, newest first, filtered; ``status=all`` includes every status."""
    items = await memory.alist(
        user_id=user,
        agent_id=agent_id,
        category=category,
        status=None if status_ == "all" else status_,
        thread_id=thread_id,
        text=text,
        limit=limit,
        offset=offset,
    )
    more = len(items) == limit
    return FactPage(
        items=items, limit=limit, offset=offset, next_offset=offset + limit if more else None
    )


OUTCOME_HEADER = "Recallmem-Outcome"
_OUTCOME = {
    "description": "`created` for a new fact, `confirmed` for an existing one it duplicates",
    "schema": {"type": "string", "enum": ["created", "confirmed"]},
}


@router.post(
    "",
    response_model=Fact,
    status_code=status.HTTP_201_CREATED,
    summary="Add a fact by hand",
    responses={
        200: {"description": "A fact the user had already: it was confirmed, and is returned",
              "headers": {OUTCOME_HEADER: _OUTCOME}},
        201: {"description": "A new fact, stored", "headers": {OUTCOME_HEADER: _OUTCOME}},
    },
)  # fmt: skip
async def create_fact(
    user: UserId, memory: MemoryDep, body: FactCreate, response: Response
) -> Fact:
    """Store a new fact (201), or, if it says what one of the user's facts already says,
    confirm that fact and return it (200); ``Recallmem-Outcome`` names which."""
    source = Source(thread_id=body.thread_id, quote=body.quote, extractor=MANUAL_SOURCE)
    fact = await memory.aremember(
        body.content,
        user_id=user,
        category=body.category,
        confidence=body.confidence,
        agent_id=body.agent_id,
        thread_id=body.thread_id,
        source=source,
        pinned=body.pinned,
        valid_until=body.valid_until,
        keywords=body.keywords,
        questions=body.questions,
    )
    confirmed = fact.confirmations > 0  # a new fact has never been confirmed
    response.headers[OUTCOME_HEADER] = "confirmed" if confirmed else "created"
    if confirmed:
        response.status_code = status.HTTP_200_OK
    return fact


def _lineage(memory: Memory, fact: Fact, user: str) -> list[Fact]:
    """The facts linked to ``fact`` by supersedes links, oldest first (erased ones skipped)."""

    def follow(start: Fact, link: Literal["supersedes", "superseded_by"]) -> list[Fact]:
        chain: list[Fact] = []
        seen = {start.id}
        next_id = getattr(start, link)
        while next_id and next_id not in seen and len(chain) < _MAX_LINEAGE:
            try:
                linked = memory.get(next_id, user_id=user)
            except FactNotFoundError:
                break
            chain.append(linked)
            seen.add(linked.id)
            next_id = getattr(linked, link)
        return chain

    return [*reversed(follow(fact, "supersedes")), fact, *follow(fact, "superseded_by")]


@router.get("/{fact_id}", response_model=FactDetail, summary="Read a fact in detail")
async def get_fact(user: UserId, memory: MemoryDep, fact_id: FactId) -> FactDetail:
    """A fact with its evidence quotes, its edit history and its supersede lineage."""
    fact = await memory.aget(fact_id, user_id=user)
    lineage = await asyncio.to_thread(_lineage, memory, fact, user)
    evidence = [
        Evidence(
            kind=s.kind,
            thread_id=s.thread_id,
            message_ids=list(s.message_ids),
            quote=s.quote,
            at=s.at,
            extractor=s.extractor,
            prompt_version=s.prompt_version,
        )
        for s in fact.sources
    ]
    source = evidence[0].kind if evidence else "unknown"
    return FactDetail(fact=fact, source=source, evidence=evidence, history=list(fact.history),
                      lineage=lineage)  # fmt: skip


@router.patch("/{fact_id}", response_model=Fact, summary="Edit a fact")
async def patch_fact(user: UserId, memory: MemoryDep, fact_id: FactId, body: FactPatch) -> Fact:
    """Change a fact; edited content is re-embedded and the old text kept in ``history``.

    A patch that changes nothing returns the fact as it is."""
    if body.changes_nothing():
        return await memory.aget(fact_id, user_id=user)
    return await memory.aupdate(
        fact_id,
        user_id=user,
        content=body.content,
        category=body.category,
        confidence=body.confidence,
        pinned=body.pinned,
        status=body.status,
        reason=body.reason,
        valid_until=body.valid_until,
        keywords=body.keywords,
        questions=body.questions,
    )


@router.delete("/{fact_id}", response_model=Affected, summary="Forget a fact")
async def delete_fact(
    user: UserId, memory: MemoryDep, fact_id: FactId, purge: bool = False
) -> Affected:
    """Soft-delete (out of recall, kept for audit), or erase with ``purge=true`` (the
    retrieval records that name it go too)."""
    affected = await memory.aforget(fact_id, user_id=user, purge=purge)
    return Affected(affected=affected, purged=purge)


@router.post("/{fact_id}/pin", response_model=Fact, summary="Pin a fact")
async def pin_fact(user: UserId, memory: MemoryDep, fact_id: FactId) -> Fact:
    """Pinned facts are spared by eviction."""
    return await memory.aupdate(fact_id, user_id=user, pinned=True)


@router.post("/{fact_id}/unpin", response_model=Fact, summary="Unpin a fact")
async def unpin_fact(user: UserId, memory: MemoryDep, fact_id: FactId) -> Fact:
    """Make a pinned fact evictable again."""
    return await memory.aupdate(fact_id, user_id=user, pinned=False)


@router.post("/{fact_id}/move", response_model=Fact, summary="Move a fact between scopes")
async def move_fact(user: UserId, memory: MemoryDep, fact_id: FactId, body: FactMove) -> Fact:
    """Move a fact to the user's shared memory (``{"agent_id": null}``: every agent sees
    it) or to one agent's own; the move is kept in the fact's history."""
    return await memory.amove(fact_id, user_id=user, agent_id=body.agent_id)
