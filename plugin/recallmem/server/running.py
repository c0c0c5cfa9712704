"""``recallmem serve``: run the service with uvicorn, safely by default.

Without API tokens anyone who can connect is trusted, so the service then binds to
loopback only, whatever host was asked for, and says so at start.

>>> from recallmem.server.settings import ServerSettings
>>> binding(ServerSettings(host="0.0.0.0")).host
'127.0.0.1'
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

from recallmem.config import MemoryConfig
from recallmem.errors import InvalidInputError
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
    workers: int | None = None,
    out: TextIO,
) -> int:
    """Open the memory and serve it until interrupted; returns the exit status.

    With ``workers`` above one (or ``RECALLMEM_WORKERS``), uvicorn runs that many worker
    processes on one port, each with its own Memory (:mod:`recallmem.server.workers`);
    that needs a Chroma server, and is refused before anything opens without one.

    Raises:
        InvalidInputError: bad settings, or several workers on the embedded store.
    """
    overrides: dict[str, Any] = {"host": host, "port": port, "workers": workers}
    settings = load_settings(**{k: v for k, v in overrides.items() if v is not None})
    config: dict[str, Any] = {"chroma_url": chroma_url, "home": home}
    memory_config = MemoryConfig(**{k: v for k, v in config.items() if v is not None})
    if settings.workers > 1:
        check_workers(settings.workers, memory_config)
        return serve_workers(settings, memory_config, out)
    return serve_one(settings, memory_config, out)


def check_workers(workers: int, config: MemoryConfig) -> None:
    """Refuse several workers on the embedded store, saying why and what to use."""
    if workers <= 1 or config.chroma_url:
        return
    raise InvalidInputError(
        f"--workers {workers} needs a Chroma server: the embedded store at "
        f"{config.chroma_path} belongs to one process (its home lock refuses a second, "
        "because two processes writing embedded Chroma lose facts). Start one with "
        f"`chroma run --path {config.chroma_path} --port 8000` and pass --chroma-url "
        "http://127.0.0.1:8000 (or RECALLMEM_CHROMA_URL), or serve with one worker "
        "(docs/deployment.md)."
    )


def _started(settings: ServerSettings, config: MemoryConfig, out: TextIO) -> Binding:
    where = binding(settings)
    store = config.chroma_url or str(config.chroma_path)
    workers = f" ({settings.workers} workers)" if settings.workers > 1 else ""
    out.write(
        f"recallmem: {where.notice}\n"
        f"recallmem: memory in {store}\n"
        f"recallmem: inspector and API at http://{where.host}:{where.port}/ "
        f"(OpenAPI at /openapi.json){workers}\n"
    )
    out.flush()
    return where


def serve_one(settings: ServerSettings, config: MemoryConfig, out: TextIO) -> int:
    """One process: the memory opened here, served until interrupted."""
    import uvicorn

    from recallmem.memory import Memory
    from recallmem.server.app import create_app

    with Memory(config) as memory:
        memory.start_background()  # a service extracts queued windows as they fall due
        where = binding(settings)
        url = f"http://{where.host}:{where.port}"  # the CLI reads it to point at this service
        memory.announce_service(url, open_access=settings.open_access)
        _started(settings, config, out)
        uvicorn.run(create_app(memory, settings), host=where.host, port=where.port)
    return 0


def serve_workers(settings: ServerSettings, config: MemoryConfig, out: TextIO) -> int:
    """Several uvicorn worker processes on one port; each opens its own Memory from the
    environment, which carries this command's options to them."""
    import uvicorn

    where = _started(settings, config, out)
    os.environ.update(worker_environment(settings, config))
    uvicorn.run(
        "recallmem.server.workers:worker_app",
        factory=True,
        host=where.host,
        port=where.port,
        workers=settings.workers,
    )
    return 0


def worker_environment(settings: ServerSettings, config: MemoryConfig) -> dict[str, str]:
    """The variables that give each worker this command's options."""
    assert config.chroma_url is not None  # check_workers refused the embedded store
    return {
        "RECALLMEM_CHROMA_URL": config.chroma_url,
        "RECALLMEM_HOME": str(config.home),
        "RECALLMEM_WORKERS": str(settings.workers),
        "RECALLMEM_HOST": settings.host,
        "RECALLMEM_PORT": str(settings.port),
    }
