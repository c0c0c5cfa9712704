"""``/v1/users/{user_id}/retrievals``: what reached the user's models, turn by turn.

Read from the durable record every agent run writes (``Memory.retrievals``: the
middleware's block and notes, the ``recall`` tool's answers), whichever process or route
ran the agent; the chat route writes nothing of its own. The records name facts by id;
the answer carries those facts as they are now (a purged fact is absent, a forgotten
one says so by its status).
"""

from __future__ import annotations

import asyncio
from typing import Annotated

from fastapi import APIRouter, Query
from pydantic import BaseModel, Field

from recallmem.errors import FactNotFoundError
from recallmem.limits import DEFAULT_PAGE, SCOPE_ID_PATTERN
from recallmem.memory import Memory
from recallmem.retrieval.shown import RetrievalRecord
from recallmem.server.admission import AdmittedRoute
from recallmem.server.auth import UserId
from recallmem.server.problems import PROBLEM_RESPONSES
from recallmem.server.schemas import MAX_PAGE_SIZE
from recallmem.server.state import MemoryDep
from recallmem.types import Category, Status

router = APIRouter(
    prefix="/v1/users/{user_id}",
    tags=["search"],
    responses=PROBLEM_RESPONSES,
    route_class=AdmittedRoute,
)


class NamedFact(BaseModel):
    """A fact a record names, as it is now."""

    content: str
    category: Category
    status: Status
    agent_id: str | None


class Retrievals(BaseModel):
    """Records of what reached a model, newest first, and the facts they name."""

    records: list[RetrievalRecord]
    facts: dict[str, NamedFact] = Field(
        description="The facts the records name, by id, as they are now; a purged one is absent."
    )


def _named(memory: Memory, user: str, records: list[RetrievalRecord]) -> dict[str, NamedFact]:
    ids = sorted({i for record in records for i in record.names()})
    facts: dict[str, NamedFact] = {}
    for fact_id in ids:
        try:
            fact = memory.get(fact_id, user_id=user)
        except FactNotFoundError:
            continue
        facts[fact_id] = NamedFact(content=fact.content, category=fact.category,
                                   status=fact.status, agent_id=fact.agent_id)  # fmt: skip
    return facts


@router.get("/retrievals", response_model=Retrievals, summary="What reached the user's models")
async def retrievals(
    user: UserId,
    memory: MemoryDep,
    thread_id: Annotated[str | None, Query(pattern=SCOPE_ID_PATTERN)] = None,
    limit: Annotated[int, Query(ge=1, le=MAX_PAGE_SIZE)] = DEFAULT_PAGE,
) -> Retrievals:
    """The user's latest retrievals that reached a model (of one thread, if given),
    newest first: each injection of the memory block, each note a turn got (a cue's,
    a hedge's) and each ``recall`` tool answer, with the facts shown (role, score, score
    parts) and the facts considered but dropped (and why)."""
    records = await memory.aretrievals(user, thread_id=thread_id, limit=limit)
    facts = await asyncio.to_thread(_named, memory, user, records)
    return Retrievals(records=records, facts=facts)
