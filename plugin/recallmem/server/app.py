"""The memory service as a FastAPI app: the API under ``/v1``, the inspector at ``/``.

>>> import tempfile
>>> from fastapi.testclient import TestClient
>>> from recallmem import Memory, MemoryConfig
>>> from recallmem.testing import HashingEmbeddings
>>> memory = Memory(MemoryConfig(home=tempfile.mkdtemp()), embeddings=HashingEmbeddings())
>>> client = TestClient(create_app(memory))
>>> client.post("/v1/users/ada/facts",
...             json={"content": "Writes TypeScript", "category": "knowledge"}).status_code
201
>>> [f["content"] for f in client.get("/v1/users/ada/facts").json()["items"]]
['Writes TypeScript']
"""

from __future__ import annotations

from pathlib import Path

from fastapi import FastAPI
from fastapi.responses import FileResponse
from fastapi.staticfiles import StaticFiles
from langchain_core.language_models import BaseChatModel

from recallmem.memory import Memory
from recallmem.server import chat, facts, health, portability, profile, queue, search
from recallmem.server.limits import BodyLimit
from recallmem.server.problems import install
from recallmem.server.settings import ServerSettings
from recallmem.server.state import ServiceState

STATIC = Path(__file__).with_name("static")

DESCRIPTION = """\
Long-term memory of LangChain agents, per user: facts, recall, profiles, export and
import, the extraction queue, and memory-enabled chat over server-sent events.

Authenticate with `Authorization: Bearer <token>`. A user's token acts for its own
user only (write `me` or its user id in paths); an admin token names any user.
Errors are `application/problem+json` bodies that say what was wrong.
"""


def create_app(
    memory: Memory,
    settings: ServerSettings | None = None,
    *,
    model: BaseChatModel | None = None,
) -> FastAPI:
    """The service over ``memory``.

    Args:
        memory: the memory to serve.
        settings: tokens, bounds; by default from ``RECALLMEM_*`` environment variables.
        model: the chat model of ``/v1/chat/stream``; by default the OpenAI-compatible
            model configured in ``memory.config`` (none: chat answers a clear error).
    """
    settings = settings or ServerSettings()
    app = FastAPI(
        title="recallmem",
        version=health.service_version(),
        description=DESCRIPTION,
        docs_url="/docs",
        redoc_url=None,
    )
    app.state.service = ServiceState(memory=memory, settings=settings, model=model)
    install(app)
    for module in (facts, search, profile, portability, queue, health, chat):
        app.include_router(module.router)

    @app.get("/", include_in_schema=False)
    async def inspector() -> FileResponse:
        return FileResponse(STATIC / "index.html", media_type="text/html")

    app.mount("/static", StaticFiles(directory=STATIC), name="static")

    def limit_for(path: str) -> int:
        return settings.max_import_bytes if path.endswith("/import") else settings.max_body_bytes

    app.add_middleware(BodyLimit, limit_for=limit_for)
    return app
