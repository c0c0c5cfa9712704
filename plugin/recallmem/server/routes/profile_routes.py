"""``/v1/users/{user_id}/profile``: the summary sections injected before the facts."""

from __future__ import annotations

from fastapi import APIRouter

from recallmem.server.admission import AdmittedRoute
from recallmem.server.auth import UserId
from recallmem.server.problems import PROBLEM_RESPONSES
from recallmem.server.routes.facts_routes import ScopeFilter
from recallmem.server.schemas import ProfileIn
from recallmem.server.state import MemoryDep
from recallmem.types import PROFILE_SECTIONS, Profile, ProfileSection, utcnow

router = APIRouter(
    prefix="/v1/users/{user_id}",
    tags=["profile"],
    responses=PROBLEM_RESPONSES,
    route_class=AdmittedRoute,
)


@router.get("/profile", response_model=Profile, summary="Read the profile")
async def get_profile(user: UserId, memory: MemoryDep, agent_id: ScopeFilter = None) -> Profile:
    """The user's profile (per agent when ``agent_id`` is given); empty sections if none."""
    return await memory.aget_profile(user_id=user, agent_id=agent_id)


def replaced(old: Profile, new: ProfileIn) -> Profile:
    """``old`` with every section replaced by ``new``; only changed sections get a new time."""
    now = utcnow()
    sections = {}
    for name in PROFILE_SECTIONS:
        before: ProfileSection = getattr(old, name)
        summary = getattr(new, name).summary.strip()
        changed = summary != before.summary
        sections[name] = ProfileSection(
            summary=summary, updated_at=now if changed else before.updated_at
        )
    return old.model_copy(update=sections)


@router.put("/profile", response_model=Profile, summary="Replace the profile")
async def put_profile(
    user: UserId, memory: MemoryDep, body: ProfileIn, agent_id: ScopeFilter = None
) -> Profile:
    """Replace all sections at once (sections left out become empty)."""
    old = await memory.aget_profile(user_id=user, agent_id=agent_id)
    return await memory.aset_profile(replaced(old, body))
