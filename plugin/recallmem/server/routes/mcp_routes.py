"""``/v1/users/{user_id}/mcp``: the memory tools over MCP's streamable HTTP, beside the API.

The user is the path's, checked against the bearer token exactly as for every other
route (:mod:`recallmem.server.auth`: a user's token acts for its own user, ``me`` included;
an admin token, or open loopback access, names the user). ``?agent_id=`` narrows it to an
agent's scope and ``?timezone=`` is the user's IANA zone. They are resolved before the
SDK sees the request and handed to each tool call with it, so no tool argument can name
another user. The server is stateless (no MCP session outlives its request): any worker
of ``recallmem serve --workers N`` answers any request.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any
from urllib.parse import parse_qsl

from mcp.server import ServerRequestContext
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp.server.transport_security import TransportSecuritySettings
from starlette.requests import Request
from starlette.routing import Route

from recallmem.agent.scope import Scope
from recallmem.errors import InvalidInputError, MissingScopeError, RecallmemError
from recallmem.facts.validation import optional_key, require_user
from recallmem.integrations.mcp.server import memory_server
from recallmem.integrations.mcp.tools import MemoryTools
from recallmem.memory import Memory
from recallmem.retrieval.when import user_zone
from recallmem.server.admission import Receive, Send
from recallmem.server.admission import Scope as AsgiScope
from recallmem.server.auth import authenticate, resolve_user
from recallmem.server.problems import Problem, ProblemError, respond

PATH = "/v1/users/{user_id}/mcp"
_SCOPE_KEY = "recallmem.mcp.scope"
_QUERY = ("agent_id", "timezone")


class McpEndpoint:
    """The ASGI endpoint: resolve the caller's scope, then let the SDK answer."""

    def __init__(self, memory: Memory) -> None:
        self.memory = memory
        self.manager = self._manager()

    def _manager(self) -> StreamableHTTPSessionManager:
        return StreamableHTTPSessionManager(
            app=memory_server(MemoryTools(self.memory), scope_of_call),
            json_response=True,
            stateless=True,
            # The service's own admission (Host and Origin) already guards this path.
            security_settings=TransportSecuritySettings(enable_dns_rebinding_protection=False),
        )

    @asynccontextmanager
    async def running(self) -> AsyncIterator[None]:
        """The SDK's task group, for the app's lifespan. A manager runs once (mcp 1.x and
        2.x: "can only be called once per instance"), so each lifespan of the app (a test
        client opened again) gets a new one."""
        self.manager = self._manager()
        async with self.manager.run():
            yield

    async def __call__(self, scope: AsgiScope, receive: Receive, send: Send) -> None:
        request = Request(scope, receive)
        try:
            resolved = await _scope_of(request)
        except ProblemError as refused:
            await respond(refused.problem, refused.headers)(scope, receive, send)
            return
        except RecallmemError as exc:
            problem = Problem(status=400, title="Invalid input", detail=str(exc))
            await respond(problem)(scope, receive, send)
            return
        scope.setdefault("state", {})[_SCOPE_KEY] = resolved
        await self.manager.handle_request(scope, receive, send)


async def _scope_of(request: Request) -> Scope:
    principal = await authenticate(request)
    user = resolve_user(principal, require_user(request.path_params["user_id"]))
    query = dict(parse_qsl(request.url.query, keep_blank_values=True))
    if unknown := sorted(set(query) - set(_QUERY)):
        raise InvalidInputError(
            f"unknown query parameter(s) {', '.join(unknown)}; this endpoint takes "
            f"{' and '.join(_QUERY)}"
        )
    agent_id = optional_key(query.get("agent_id"), "agent_id")
    timezone = query.get("timezone") or None
    if timezone is not None:
        user_zone(timezone)  # an unknown zone is refused here, not at every call
    return Scope(user_id=user, agent_id=agent_id, timezone=timezone)


def scope_of_call(context: ServerRequestContext[Any]) -> Scope:
    """The scope the endpoint resolved for the HTTP request carrying this call."""
    request = context.request
    found = getattr(request, "scope", {}).get("state", {}).get(_SCOPE_KEY)
    if not isinstance(found, Scope):  # never served without one; refuse rather than guess
        raise MissingScopeError("this MCP call arrived without the user its token names")
    return found


def mcp_route(endpoint: McpEndpoint) -> Route:
    """The route serving ``endpoint`` (GET, POST and DELETE, as streamable HTTP uses)."""
    return Route(PATH, endpoint=endpoint, methods=["GET", "POST", "DELETE"])
