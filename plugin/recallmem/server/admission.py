"""What a request must satisfy before its body is read.

Two layers, so that no body byte is read for a request the service would refuse:

- :class:`Admission`, ASGI middleware over every request: the ``Host`` must be a name
  the service answers to (400), a write's ``Origin`` must be the service's own (403),
  no query parameter may be given twice (400), and the body is counted against its
  route's bound while it is read (413) and must keep arriving (408). Every response
  carries ``Cache-Control: no-store`` and ``X-Content-Type-Options: nosniff``.
- :class:`AdmittedRoute`, the route class of the API routers: once the route is known,
  the bearer token is checked (401), a write must declare JSON (415), a declared length
  over the route's bound is refused at once (413), and a large body takes one of a few
  slots (503 when all are taken).

Every POST, PUT and PATCH declares ``Content-Type: application/json``, with or without a
body (``POST .../pin`` too): a page of another site can make a browser send a form or a
"simple" request of another type, but never this one without a CORS preflight, which
the service does not grant.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Coroutine, MutableMapping
from functools import cached_property
from typing import Any
from urllib.parse import parse_qsl

from fastapi import Request, Response
from fastapi.dependencies.models import Dependant
from fastapi.routing import APIRoute
from starlette.datastructures import Headers

from recallmem.server.auth import authenticate, caller
from recallmem.server.body_limits import (
    BUDGET_KEY,
    BodyBudget,
    counted,
    declared_length,
    takes_large_body,
    too_large,
)
from recallmem.server.origins import HostPolicy
from recallmem.server.problems import Problem, ProblemError, respond
from recallmem.server.settings import ServerSettings
from recallmem.server.state import state_of

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

UNSAFE_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})
JSON_METHODS = frozenset({"POST", "PUT", "PATCH"})
JSON = "application/json"
_SHOWN = 100  # characters of a refused header quoted back


class Admission:
    """ASGI middleware: refuse foreign hosts and origins, count every body."""

    def __init__(self, app: ASGIApp, settings: ServerSettings) -> None:
        self.app = app
        self.settings = settings
        self.hosts = HostPolicy.of(settings)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        send = with_private_headers(send)
        problem = self.refusal(scope["method"], Headers(scope=scope))
        problem = problem or repeated_parameter(scope.get("query_string", b""))
        if problem is not None:
            await respond(problem)(scope, receive, send)
            return
        budget = BodyBudget(limit=self.settings.max_body_bytes)
        scope[BUDGET_KEY] = budget
        timeout = self.settings.body_read_timeout_seconds
        await self.app(scope, counted(receive, budget, timeout), send)

    def refusal(self, method: str, headers: Headers) -> Problem | None:
        """Why a request with these headers is refused before routing, if it is."""
        host = headers.get("host")
        if not self.hosts.accepts(host):
            names = ", ".join(["localhost", "127.0.0.1", "[::1]", *self.hosts.allowed])
            return Problem(
                status=400,
                title="Host not allowed",
                detail=f"this service answers requests for {names} only, not for "
                f"{(host or 'no Host header')[:_SHOWN]!r} (a web page may have pointed its "
                "own name at this machine); use one of those names, or add this one to "
                "RECALLMEM_ALLOWED_HOSTS on the server",
            )
        origin = headers.get("origin")
        writes = method in UNSAFE_METHODS
        if writes and origin is not None and not self.hosts.origin_accepted(origin, host=host):
            return Problem(
                status=403,
                title="Cross-origin write refused",
                detail=f"a page of {origin[:_SHOWN]!r} may not change this service's "
                "memory; writes come from the service's own pages, from an allowed host "
                "(RECALLMEM_ALLOWED_HOSTS), or from clients that send no Origin header",
            )
        return None


# Memory is personal data: no cache keeps an answer, and no browser guesses a type
# other than the one declared (a fact rendered as HTML).
_PRIVATE = ((b"cache-control", b"no-store"), (b"x-content-type-options", b"nosniff"))


def with_private_headers(send: Send) -> Send:
    """``send``, adding ``Cache-Control: no-store`` and ``X-Content-Type-Options:
    nosniff`` to every response that does not set them itself."""

    async def send_private(message: Message) -> None:
        if message["type"] == "http.response.start":
            headers = list(message.get("headers", []))
            present = {name.lower() for name, _ in headers}
            headers += [(name, value) for name, value in _PRIVATE if name not in present]
            message = {**message, "headers": headers}
        await send(message)

    return send_private


def repeated_parameter(query: bytes) -> Problem | None:
    """A query naming one parameter twice is refused (400): no parameter of the API is a
    list, and ``purge=false&purge=true`` must not purge because the last one wins."""
    seen: set[str] = set()
    for name, _ in parse_qsl(query.decode("latin-1"), keep_blank_values=True):
        if name in seen:
            return Problem(
                status=400,
                title="Repeated query parameter",
                detail=f"the query names {name[:_SHOWN]!r} more than once; give each "
                "parameter once",
            )
        seen.add(name)
    return None


_EMPTY_BODY = {
    "required": True,
    "description": "No fields: send `{}` (or no body) with `Content-Type: application/json`.",
    "content": {JSON: {"schema": {"type": "object", "maxProperties": 0}}},
}


def declare_json_writes(schema: dict[str, Any]) -> None:
    """Give every bodyless write in an OpenAPI ``schema`` an empty JSON body, and mark
    optional bodies required, so that clients built from the schema send the
    ``Content-Type`` the service requires (an empty body with it still means "none")."""
    for operations in schema.get("paths", {}).values():
        for method, operation in operations.items():
            if method.upper() not in JSON_METHODS:
                continue
            if "requestBody" not in operation:
                operation["requestBody"] = _EMPTY_BODY
            else:
                operation["requestBody"]["required"] = True


def depends_on(dependant: Dependant, call: Callable[..., Any]) -> bool:
    """Whether ``call`` is among a route's dependencies, at any depth."""
    return any(sub.call is call or depends_on(sub, call) for sub in dependant.dependencies)


def require_json(request: Request) -> None:
    """Refuse a write that does not declare a JSON body (415)."""
    declared = request.headers.get("content-type", "")
    if declared.split(";", 1)[0].strip().lower() != JSON:
        shown = repr(declared[:_SHOWN]) if declared else "none"
        raise ProblemError(
            415,
            "Unsupported media type",
            f"{request.method} requests must send 'Content-Type: {JSON}' (this one sent "
            f"{shown}), also when they have no body: the API takes JSON only, and the header "
            "is what keeps other web pages from sending writes through a browser",
        )


class AdmittedRoute(APIRoute):
    """An API route that checks its caller and its body's type before reading the body."""

    @cached_property
    def needs_token(self) -> bool:
        """Whether the route resolves the caller from a bearer token."""
        return depends_on(self.dependant, caller)

    def get_route_handler(self) -> Callable[[Request], Coroutine[Any, Any, Response]]:
        handle = super().get_route_handler()
        large = takes_large_body(self.endpoint)

        async def admitted(request: Request) -> Response:
            state = state_of(request)
            if self.needs_token:
                await authenticate(request)
            if request.method in JSON_METHODS:
                require_json(request)
            settings = state.settings
            limit = settings.max_import_bytes if large else settings.max_body_bytes
            budget = request.scope.get(BUDGET_KEY)
            if isinstance(budget, BodyBudget):
                budget.limit = limit
            declared = declared_length(request.headers)
            if declared is not None and declared > limit:
                raise too_large(limit)
            if large and (declared is None or declared > settings.max_body_bytes):
                async with state.large_bodies.slot():
                    return await handle(request)
            return await handle(request)

        return admitted
