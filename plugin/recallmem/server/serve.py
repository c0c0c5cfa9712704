"""``recallmem serve``: run the service with uvicorn, safely by default.

Without API tokens anyone who can connect is trusted, so the service then binds to
loopback only, whatever host was asked for, and says so at start.

>>> from recallmem.server.settings import ServerSettings
>>> binding(ServerSettings(host="0.0.0.0")).host
'127.0.0.1'
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

from recallmem.server.settings import ServerSettings, is_loopback, load_settings


@dataclass(frozen=True)
class Binding:
    """Where the service listens and what to tell the operator about it."""

    host: str
    port: int
    notice: str


def binding(settings: ServerSettings) -> Binding:
    """The address to bind, loopback when no token protects the service."""
    if not settings.open_access:
        grants = len(settings.api_tokens)
        return Binding(settings.host, settings.port, f"bearer auth on: {grants} token(s)")
    notice = (
        "no API tokens configured (RECALLMEM_API_TOKENS): open access, so the service "
        "binds to loopback only"
    )
    if is_loopback(settings.host):
        return Binding(settings.host, settings.port, notice)
    return Binding(
        "127.0.0.1",
        settings.port,
        f"{notice}; refusing to listen on {settings.host}. Configure tokens to serve other hosts",
    )


def serve(
    *,
    host: str | None = None,
    port: int | None = None,
    chroma_url: str | None = None,
    home: str | Path | None = None,
    out: TextIO,
) -> int:
    """Open the memory and serve it until interrupted; returns the exit status."""
    import uvicorn

    from recallmem.config import MemoryConfig
    from recallmem.memory import Memory
    from recallmem.server.app import create_app

    overrides: dict[str, Any] = {"host": host, "port": port}
    settings = load_settings(**{k: v for k, v in overrides.items() if v is not None})
    where = binding(settings)
    config: dict[str, Any] = {"chroma_url": chroma_url, "home": home}
    memory_config = MemoryConfig(**{k: v for k, v in config.items() if v is not None})
    with Memory(memory_config) as memory:
        memory.start_background()  # a service extracts queued windows as they fall due
        if memory.store.lock is not None:  # the CLI reads it to point at this service
            url = f"http://{where.host}:{where.port}"
            memory.store.lock.announce(url, open_access=settings.open_access)
        store = memory_config.chroma_url or str(memory_config.chroma_path)
        out.write(
            f"recallmem: {where.notice}\n"
            f"recallmem: memory in {store}\n"
            f"recallmem: inspector and API at http://{where.host}:{where.port}/ "
            f"(OpenAPI at /openapi.json)\n"
        )
        out.flush()
        uvicorn.run(create_app(memory, settings), host=where.host, port=where.port)
    return 0
