"""Async twins without second bodies: each runs the sync method in a worker thread.

The core is synchronous because its I/O is (Chroma's embedded client, the numpy
encoder); a twin keeps the event loop free while it runs.
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Callable, Coroutine
from typing import Any, Concatenate, ParamSpec, TypeVar

P = ParamSpec("P")
R = TypeVar("R")
S = TypeVar("S")


def async_twin(
    method: Callable[Concatenate[S, P], R],
) -> Callable[Concatenate[S, P], Coroutine[Any, Any, R]]:
    """The async version of a sync method, sharing its body and its signature."""

    @functools.wraps(method)
    async def twin(self: S, /, *args: P.args, **kwargs: P.kwargs) -> R:
        return await asyncio.to_thread(method, self, *args, **kwargs)

    twin.__doc__ = f"Async twin of ``{method.__name__}``; same arguments, same result."
    return twin
