"""A bound on request body sizes, enforced before any route reads the body.

A declared ``Content-Length`` over the bound is refused at once; a chunked body is
read up to the bound and refused as soon as it passes it. Imports have their own,
larger bound. The refusal is a 413 problem body.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

from recallmem.server.problems import Problem, respond

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]


class BodyLimit:
    """ASGI middleware: refuse bodies larger than ``limit_for(path)`` bytes."""

    def __init__(self, app: ASGIApp, limit_for: Callable[[str], int]) -> None:
        self.app = app
        self.limit_for = limit_for

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        limit = self.limit_for(scope["path"])
        declared = _content_length(scope)
        if declared is not None and declared > limit:
            await _refuse(scope, receive, send, limit)
            return
        chunks: list[bytes] = []
        size = 0
        more = True
        while more:
            message = await receive()
            if message["type"] != "http.request":
                await self.app(scope, _replay([], message, receive), send)
                return
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > limit:
                await _refuse(scope, receive, send, limit)
                return
            chunks.append(chunk)
            more = message.get("more_body", False)
        body = {"type": "http.request", "body": b"".join(chunks), "more_body": False}
        await self.app(scope, _replay([body], None, receive), send)


def _content_length(scope: Scope) -> int | None:
    for name, value in scope.get("headers", []):
        if name == b"content-length":
            try:
                return int(value)
            except ValueError:
                return None
    return None


def _replay(buffered: list[Message], last: Message | None, receive: Receive) -> Receive:
    """A receive that hands out the buffered body, then listens to the client again."""
    queue = [*buffered, *([last] if last is not None else [])]

    async def replay() -> Message:
        if queue:
            return queue.pop(0)
        return await receive()

    return replay


async def _refuse(scope: Scope, receive: Receive, send: Send, limit: int) -> None:
    problem = Problem(
        status=413,
        title="Payload too large",
        detail=f"the request body is larger than {limit} bytes; send less per request "
        "(split an import into several files, or raise RECALLMEM_MAX_BODY_BYTES / "
        "RECALLMEM_MAX_IMPORT_BYTES on the server)",
    )
    await respond(problem, {"Connection": "close"})(scope, receive, send)
