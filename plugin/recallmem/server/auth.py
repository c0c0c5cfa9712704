"""Who is calling, and which user's memory they may touch.

A user token acts for its own user only; an admin token names the user in the path.
``me`` in a path means the token's own user. Without configured tokens the service is
open, which is safe only because it then binds to loopback (see :mod:`.serve`).
A user token that names another user gets 403 and nothing of that user: every route
reads and writes through the user this module resolves, never through ids in the body.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated

from fastapi import Depends, Path, Request
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer

from recallmem.limits import USER_ID_PATTERN
from recallmem.server.problems import ProblemError
from recallmem.server.state import settings_of

_bearer = HTTPBearer(auto_error=False, description="A token from RECALLMEM_API_TOKENS.")

ME = "me"


@dataclass(frozen=True)
class Principal:
    """The caller: a user's token (``user_id`` set), an admin token, or open local access."""

    user_id: str | None
    admin: bool

    def may_act_for(self, user_id: str) -> bool:
        """Whether this caller may read and write ``user_id``'s memory."""
        return self.admin or self.user_id == user_id


def _unauthorized(detail: str) -> ProblemError:
    error = ProblemError(401, "Unauthorized", detail)
    error.headers["WWW-Authenticate"] = "Bearer"
    return error


def caller(
    request: Request,
    credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)],
) -> Principal:
    """The principal behind the request's bearer token."""
    settings = settings_of(request)
    if settings.open_access:
        return Principal(user_id=None, admin=True)
    if len(request.headers.getlist("authorization")) > 1:  # which one would be meant?
        raise _unauthorized("send one Authorization header, not several")
    if credentials is None or credentials.scheme.lower() != "bearer":
        raise _unauthorized("send 'Authorization: Bearer <token>' with a configured token")
    grant = settings.grant_for(credentials.credentials)
    if grant is None:
        raise _unauthorized("this bearer token is not configured on the server")
    return Principal(user_id=grant.user_id, admin=grant.admin)


async def authenticate(request: Request) -> Principal:
    """The caller of ``request``, as :func:`caller` resolves it, without reading the body:
    the route class checks it before a body is read (see :mod:`.admission`)."""
    return caller(request, await _bearer(request))


def resolve_user(principal: Principal, requested: str | None) -> str:
    """The user a request acts for: ``requested`` (or ``me``) checked against the caller."""
    if requested in (None, ME):
        if principal.user_id is None:
            raise ProblemError(
                400,
                "User required",
                "this token is not bound to a user; name the user in the path "
                "(/v1/users/<user_id>/...) instead of 'me'",
            )
        return principal.user_id
    if not principal.may_act_for(requested):
        raise ProblemError(
            403,
            "Forbidden",
            f"this token is bound to user {principal.user_id!r} and may only act for it; "
            "use /v1/users/me/... or an admin token",
        )
    return requested


def path_user(
    principal: Annotated[Principal, Depends(caller)],
    user_id: Annotated[
        str,
        Path(
            pattern=USER_ID_PATTERN,
            description="The user whose memory this is; 'me' for the token's own user.",
        ),
    ],
) -> str:
    """The user named in the path, if the caller may act for them."""
    return resolve_user(principal, user_id)


UserId = Annotated[str, Depends(path_user)]
Caller = Annotated[Principal, Depends(caller)]
