"""One worker of ``recallmem serve --workers N``: uvicorn calls :func:`worker_app` in
each worker process it starts.

Each worker opens its own Memory on the Chroma server from ``RECALLMEM_*`` (which
``serve`` filled from its options), extracts queued windows in the background (the
queue's leases keep two workers off one window), and closes the memory when uvicorn
shuts the worker down. Workers agree on every user's memory through the per-user write
sequence (:mod:`recallmem.store.chroma.revisions`).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from fastapi import FastAPI

from recallmem.config import MemoryConfig
from recallmem.memory import Memory
from recallmem.server.app import create_app
from recallmem.server.running import check_workers
from recallmem.server.settings import load_settings


def worker_app() -> FastAPI:
    """The service of one worker process, over a Memory of its own."""
    settings = load_settings()
    config = MemoryConfig()
    check_workers(settings.workers, config)  # also when uvicorn is run on this directly
    memory = Memory(config)
    memory.start_background()
    app = create_app(memory, settings)
    opened = app.router.lifespan_context

    @asynccontextmanager
    async def lifespan(running: FastAPI) -> AsyncIterator[None]:
        async with opened(running):
            yield
        await asyncio.to_thread(memory.close)

    app.router.lifespan_context = lifespan
    return app
