"""Bounds on request bodies: their size, and how many large ones are read at once.

A body is never buffered ahead of its route: it is counted as the route reads it, and
refused (413) as soon as it passes the bound of its route. A route's bound is the
service-wide ``max_body_bytes`` unless its endpoint is marked with :func:`large_body`
(imports), whose bound, ``max_import_bytes``, applies only once the caller is known
(:mod:`.admission`). Large bodies take one of a few :class:`BodySlots`, so a burst of
uploads cannot hold more than a few of them in memory.

>>> budget = BodyBudget(limit=4)
>>> budget.count(b"abc")
>>> try:
...     budget.count(b"de")
... except HTTPException as refused:
...     print(refused.status_code, budget.read)
413 5
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable, MutableMapping
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any, TypeVar

import anyio
from starlette.datastructures import Headers
from starlette.exceptions import HTTPException

from recallmem.server.problems import ProblemError

Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Endpoint = TypeVar("Endpoint", bound=Callable[..., Any])

_LARGE_BODY = "_recallmem_large_body"
BUDGET_KEY = "recallmem.body_budget"
RETRY_AFTER_SECONDS = 5


def large_body(endpoint: Endpoint) -> Endpoint:
    """Mark a route's endpoint as taking bodies up to ``max_import_bytes``."""
    setattr(endpoint, _LARGE_BODY, True)
    return endpoint


def takes_large_body(endpoint: Callable[..., Any]) -> bool:
    """Whether ``endpoint`` was marked with :func:`large_body`."""
    return bool(getattr(endpoint, _LARGE_BODY, False))


def too_large(limit: int) -> HTTPException:
    """The 413 of a body over ``limit`` bytes; the connection is closed after it, since
    the rest of the body is never read."""
    return HTTPException(
        413,
        detail=f"the request body is larger than {limit} bytes; send less per request "
        "(split an import into several files, or raise RECALLMEM_MAX_BODY_BYTES / "
        "RECALLMEM_MAX_IMPORT_BYTES on the server)",
        headers={"Connection": "close"},
    )


@dataclass
class BodyBudget:
    """The bytes a request's body may still bring; its route may raise ``limit``."""

    limit: int
    read: int = 0

    def count(self, chunk: bytes) -> None:
        """Count a chunk as it is read; refuse the body once it passes the limit."""
        self.read += len(chunk)
        if self.read > self.limit:
            raise too_large(self.limit)


def too_slow(timeout: float) -> HTTPException:
    """The 408 of a body whose next part did not come within ``timeout`` seconds (a
    Content-Length larger than what is sent); the connection is closed after it."""
    return HTTPException(
        408,
        detail=f"the request body stopped arriving for {timeout:g} seconds before its "
        "Content-Length was reached; send the whole body, with a Content-Length that "
        "matches it",
        headers={"Connection": "close"},
    )


def counted(receive: Receive, budget: BodyBudget, timeout: float) -> Receive:
    """``receive``, counting body chunks against ``budget`` as they are read, and waiting
    at most ``timeout`` seconds for each until the body is complete (after it, a receive
    waits for the client to disconnect, as a streamed answer does, for as long as it
    takes)."""
    complete = False

    async def receive_counted() -> Message:
        nonlocal complete
        if complete:
            return await receive()
        try:
            with anyio.fail_after(timeout):
                message = await receive()
        except TimeoutError:
            raise too_slow(timeout) from None
        if message["type"] == "http.request":
            budget.count(message.get("body", b""))
        complete = message["type"] != "http.request" or not message.get("more_body", False)
        return message

    return receive_counted


def declared_length(headers: Headers) -> int | None:
    """The ``Content-Length`` a request declares, if it declares a valid one."""
    value = headers.get("content-length")
    return int(value) if value is not None and value.isdigit() else None


class BodySlots:
    """How many large bodies may be read and processed at once (one event loop)."""

    def __init__(self, size: int) -> None:
        self.size = size
        self.free = size

    @asynccontextmanager
    async def slot(self) -> AsyncIterator[None]:
        """Hold one slot for the duration of the block; 503 when none is free."""
        if self.free <= 0:
            error = ProblemError(
                503,
                "Too many uploads at once",
                f"{self.size} large request bodies are being read already; retry in "
                f"{RETRY_AFTER_SECONDS} seconds (the bound is RECALLMEM_MAX_CONCURRENT_IMPORTS)",
            )
            error.headers["Retry-After"] = str(RETRY_AFTER_SECONDS)
            raise error
        self.free -= 1
        try:
            yield
        finally:
            self.free += 1
