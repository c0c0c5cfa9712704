"""``POST /v1/users/{user_id}/maintain`` and ``POST /v1/maintain``: a maintenance run now.

Expires facts past their ``valid_until``, fades facts whose decayed confidence fell
below the floor and purges facts faded past the retention period
(:meth:`recallmem.Memory.maintain`). A user's token maintains its own user; maintaining
every user at once takes an admin token (or open local access).
"""

from __future__ import annotations

from datetime import datetime

from fastapi import APIRouter
from pydantic import AwareDatetime, BaseModel, ConfigDict, Field, field_validator

from recallmem.errors import InvalidInputError
from recallmem.lifecycle.maintenance import MaintenanceReport
from recallmem.limits import check_maintain_now
from recallmem.server.admission import AdmittedRoute
from recallmem.server.auth import Caller, UserId
from recallmem.server.problems import PROBLEM_RESPONSES, ProblemError
from recallmem.server.state import MemoryDep
from recallmem.types import utcnow

router = APIRouter(tags=["lifecycle"], responses={**PROBLEM_RESPONSES}, route_class=AdmittedRoute)


class MaintainRequest(BaseModel):
    """When the run is as of (default: the server's current time)."""

    model_config = ConfigDict(extra="forbid")

    now: AwareDatetime | None = Field(
        default=None,
        description="As of this time (with its offset), within a day of the server's clock; "
        "default now.",
    )

    @field_validator("now")
    @classmethod
    def _near_the_clock(cls, value: datetime | None) -> datetime | None:
        # The library checks it too (a 400); here a field of the body, a 422 like the rest.
        if value is None:
            return None
        try:
            return check_maintain_now(value, clock=utcnow())
        except InvalidInputError as error:
            raise ValueError(str(error)) from None


def _as_of(body: MaintainRequest | None) -> datetime | None:
    return None if body is None else body.now


@router.post(
    "/v1/users/{user_id}/maintain",
    response_model=MaintenanceReport,
    summary="Maintain one user's memory now",
)
async def maintain_user(
    user: UserId, memory: MemoryDep, body: MaintainRequest | None = None
) -> MaintenanceReport:
    """Expire, fade and purge the user's facts now; the report lists them by id."""
    return await memory.amaintain(now=_as_of(body), user_id=user)


@router.post(
    "/v1/maintain", response_model=MaintenanceReport, summary="Maintain every user's memory now"
)
async def maintain_all(
    principal: Caller, memory: MemoryDep, body: MaintainRequest | None = None
) -> MaintenanceReport:
    """Maintain every user (admin token only)."""
    if not principal.admin:
        raise ProblemError(
            403, "Forbidden", "maintaining every user takes an admin token; a user's token "
            "may call /v1/users/me/maintain",
        )  # fmt: skip
    return await memory.amaintain(now=_as_of(body))
