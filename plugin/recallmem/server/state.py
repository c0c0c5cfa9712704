"""What every route shares: the memory, the settings, the metrics and the chat model.

Stored once on the app by :func:`recallmem.server.app.create_app`; routes receive the
parts they need as FastAPI dependencies.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Annotated, Any

from fastapi import Depends, Request
from langchain_core.language_models import BaseChatModel

from recallmem.endpoints.status import EndpointStatus, chat_model_status
from recallmem.memory import Memory
from recallmem.server.body_limits import BodySlots
from recallmem.server.metrics import RecallMetrics
from recallmem.server.settings import ServerSettings


@dataclass
class ServiceState:
    """The service's shared parts."""

    memory: Memory
    settings: ServerSettings
    model: BaseChatModel | None = None
    recalls: RecallMetrics = field(default_factory=RecallMetrics)
    agent: Any = None  # the chat agent, built on first use (see .chat_agent)
    large_bodies: BodySlots = field(init=False)
    # the chat model's endpoint as last seen (None: no OpenAI-compatible model configured)
    model_status: EndpointStatus | None = field(init=False)

    def __post_init__(self) -> None:
        self.large_bodies = BodySlots(self.settings.max_concurrent_imports)
        self.model_status = chat_model_status(self.model or self.memory.model)


def state_of(request: Request) -> ServiceState:
    """The state stored on the app serving ``request``."""
    state: ServiceState = request.app.state.service
    return state


def memory_of(request: Request) -> Memory:
    """The memory the service serves."""
    return state_of(request).memory


def settings_of(request: Request) -> ServerSettings:
    """The service settings."""
    return state_of(request).settings


State = Annotated[ServiceState, Depends(state_of)]
MemoryDep = Annotated[Memory, Depends(memory_of)]
