"""``GET /v1/users``: the users whose memory the caller may open, for the inspector.

An admin token (or open loopback access) sees every user with facts stored; a user's
token sees its own user only. Sorted, searchable by a piece of the id, paged.
"""

from __future__ import annotations

import asyncio
from typing import Annotated

from fastapi import APIRouter, Query
from pydantic import BaseModel

from recallmem.limits import DEFAULT_PAGE, MAX_ID_CHARS, MAX_OFFSET
from recallmem.server.admission import AdmittedRoute
from recallmem.server.auth import Caller
from recallmem.server.problems import PROBLEM_RESPONSES
from recallmem.server.schemas import MAX_PAGE_SIZE
from recallmem.server.state import MemoryDep

router = APIRouter(tags=["users"], responses=PROBLEM_RESPONSES, route_class=AdmittedRoute)


class UserPage(BaseModel):
    """One page of user ids, sorted; ``next_offset`` is null on the last page."""

    items: list[str]
    total: int
    limit: int
    offset: int
    next_offset: int | None


@router.get("/v1/users", response_model=UserPage, summary="List the users")
async def list_users(
    principal: Caller,
    memory: MemoryDep,
    text: Annotated[str | None, Query(min_length=1, max_length=MAX_ID_CHARS)] = None,
    limit: Annotated[int, Query(ge=1, le=MAX_PAGE_SIZE)] = DEFAULT_PAGE,
    offset: Annotated[int, Query(ge=0, le=MAX_OFFSET)] = 0,
) -> UserPage:
    """Users with facts stored whose id contains ``text`` (case-insensitive): all of
    them for an admin token, the token's own user for a user's token."""
    if principal.user_id is not None and not principal.admin:
        own = principal.user_id
        found = [own] if text is None or text.casefold() in own.casefold() else []
    else:
        found = await asyncio.to_thread(memory.users, text=text)
    page = found[offset : offset + limit]
    more = offset + limit < len(found)
    return UserPage(items=page, total=len(found), limit=limit, offset=offset,
                    next_offset=offset + limit if more else None)  # fmt: skip
