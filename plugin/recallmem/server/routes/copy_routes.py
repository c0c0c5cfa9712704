"""``POST /v1/users/{user_id}/copy``: copy facts into this user's memory from a scope.

The path names the destination. Copying from another user (a team template into a
new user) needs an admin token; a user's own token may copy between its own agents.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter
from pydantic import BaseModel, ConfigDict, Field

from recallmem.limits import MAX_ID_CHARS, MAX_IMPORT_ROWS, USER_ID_PATTERN
from recallmem.server.admission import AdmittedRoute
from recallmem.server.auth import Caller, UserId
from recallmem.server.problems import PROBLEM_RESPONSES, ProblemError, problem_response
from recallmem.server.schemas import ScopeId
from recallmem.server.state import MemoryDep
from recallmem.types import Category, Fact

router = APIRouter(
    prefix="/v1/users/{user_id}",
    tags=["facts"],
    responses={
        **PROBLEM_RESPONSES,
        403: problem_response("Copying from another user needs an admin token"),
        404: problem_response("An id in `ids` is no fact of the source user"),
    },
    route_class=AdmittedRoute,
)


FactId = Annotated[str, Field(min_length=1, max_length=MAX_ID_CHARS)]


class CopyRequest(BaseModel):
    """Where to copy from, and which facts; the destination user is the path's."""

    model_config = ConfigDict(extra="forbid")

    from_user_id: str | None = Field(
        default=None, pattern=USER_ID_PATTERN, description="The source user; the path's if unset."
    )
    from_agent_id: str | None = ScopeId
    to_agent_id: str | None = ScopeId
    categories: list[Category] | None = Field(default=None, max_length=len(Category))
    ids: list[FactId] | None = Field(default=None, max_length=MAX_IMPORT_ROWS)


class CopyResult(BaseModel):
    """The destination facts: new copies, and existing facts a copy confirmed."""

    model_config = ConfigDict(frozen=True)

    facts: list[Fact]
    copied: int = Field(description="New facts, with copied_from set.")
    confirmed: int = Field(description="Destination facts a copy duplicated, confirmed.")


@router.post("/copy", response_model=CopyResult, summary="Copy facts from a scope")
async def copy_facts(
    user: UserId, caller: Caller, memory: MemoryDep, body: CopyRequest
) -> CopyResult:
    """Copy a scope's active facts into this user's memory (``to_agent_id``'s scope)."""
    source = body.from_user_id or user
    if source != user and not caller.admin:
        raise ProblemError(
            403,
            "Forbidden",
            "copying from another user's memory needs an admin token; a user token may "
            "copy between its own agents (leave from_user_id out)",
        )
    facts = await memory.acopy(
        from_user_id=source,
        to_user_id=user,
        from_agent_id=body.from_agent_id,
        to_agent_id=body.to_agent_id,
        categories=body.categories,
        ids=body.ids,
    )
    copied = sum(f.copied_from is not None and f.confirmations == 0 for f in facts)
    return CopyResult(facts=facts, copied=copied, confirmed=len(facts) - copied)
