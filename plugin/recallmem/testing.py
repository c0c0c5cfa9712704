"""Fakes for tests and notebooks: nothing here reaches a network or a real model.

``HashingEmbeddings`` is a deterministic embedder whose similarity means something
(shared words and CJK characters make vectors close), for tests that must not load
the real encoder.

``FakeChatModel`` replays scripted replies (texts, messages with tool calls, or errors),
records what it was sent and reports token usage (counted with ``recallmem.text.tokens``), so
prompts and costs can be tested without a model.

``ReplayChatModel`` and ``ReplayServer`` (from :mod:`recallmem.replay`) answer with replies
real models gave to the product's exact requests, recorded under ``tests/data/recorded``:
``ChatOpenAI`` answered in process, and an OpenAI-compatible server on 127.0.0.1.

>>> emb = HashingEmbeddings()
>>> a, b, c = (emb.embed_query(t) for t in ("likes green tea", "likes tea", "owns a car"))
>>> sum(x * y for x, y in zip(a, b)) > sum(x * y for x, y in zip(a, c))
True
"""

from __future__ import annotations

import hashlib
import json
import re
import threading
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.embeddings import Embeddings
from langchain_core.language_models import BaseChatModel, LanguageModelInput
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.messages.ai import UsageMetadata
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.runnables import Runnable
from langchain_core.utils.function_calling import convert_to_openai_tool
from pydantic import Field, PrivateAttr

from recallmem.text.tokens import count_tokens
from recallmem.text.words import CJK_RANGES

_TOKEN = re.compile(rf"[a-z0-9]+|[{CJK_RANGES}]", re.IGNORECASE)


class HashingEmbeddings(Embeddings):
    """Bag-of-tokens vectors by feature hashing: fast, deterministic, meaningful overlap."""

    def __init__(self, dimension: int = 256, model_name: str = "hashing-v1") -> None:
        self.dimension = dimension
        self.model_name = model_name

    def _vector(self, text: str) -> list[float]:
        vector = np.zeros(self.dimension, dtype=np.float64)
        for token in _TOKEN.findall(text.lower()):
            digest = hashlib.blake2b(token.encode(), digest_size=8).digest()
            bucket = int.from_bytes(digest[:4], "little") % self.dimension
            vector[bucket] += 1.0 if digest[4] & 1 else -1.0
        norm = np.linalg.norm(vector)
        values: list[float] = (vector / norm if norm else vector).tolist()
        return values

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        """Embed each text."""
        return [self._vector(t) for t in texts]

    def embed_query(self, text: str) -> list[float]:
        """Embed one text."""
        return self._vector(text)


# -- chat model fake -------------------------------------------------------------------

_PER_MESSAGE_TOKENS = 4  # role and separators, as OpenAI's chat format counts them

Response = str | BaseMessage | BaseException | Callable[[list[BaseMessage]], Any]


class FakeChatModel(BaseChatModel):
    """A chat model that replays scripted replies and records every request.

    Each call takes the next response: a text, an ``AIMessage`` (tool calls included), an
    exception to raise (a provider failure), or a callable that receives the messages and
    returns one of those. ``requests`` holds the messages of every call; ``usage`` sums
    the token counts reported in each reply's ``usage_metadata``. It supports
    ``bind_tools`` and therefore ``with_structured_output``.

    >>> model = FakeChatModel(responses=['{"facts": []}'])
    >>> model.invoke("hello").content
    '{"facts": []}'
    >>> len(model.requests), model.usage["calls"], model.usage["input_tokens"] > 0
    (1, 1, True)
    """

    responses: list[Response] = Field(default_factory=list)
    cycle: bool = Field(default=False, description="Start over when the responses run out.")
    model_name: str = "fake-chat-model"
    count_tokens: Callable[[str], int] = Field(default=count_tokens, exclude=True)
    requests: list[list[BaseMessage]] = Field(default_factory=list, exclude=True)
    request_kwargs: list[dict[str, Any]] = Field(default_factory=list, exclude=True)
    usage: dict[str, int] = Field(
        default_factory=lambda: {"calls": 0, "input_tokens": 0, "output_tokens": 0},
        exclude=True,
    )
    _lock: threading.Lock = PrivateAttr(default_factory=threading.Lock)
    _position: int = PrivateAttr(default=0)

    @property
    def _llm_type(self) -> str:
        return "recallmem-fake"

    @property
    def calls(self) -> int:
        """How many times the model was called."""
        return len(self.requests)

    def _next(self, messages: list[BaseMessage], kwargs: dict[str, Any]) -> Response:
        with self._lock:
            self.requests.append(list(messages))
            self.request_kwargs.append(dict(kwargs))
            if self._position >= len(self.responses):
                if not (self.cycle and self.responses):
                    raise RuntimeError(
                        f"FakeChatModel ran out of responses after {len(self.responses)} "
                        "call(s); give it more responses or pass cycle=True"
                    )
                self._position = 0
            response = self.responses[self._position]
            self._position += 1
        return response

    def _reply(self, response: Response, messages: list[BaseMessage]) -> AIMessage:
        if callable(response) and not isinstance(response, BaseMessage | BaseException):
            response = response(messages)
        if isinstance(response, BaseException):
            raise response
        if isinstance(response, AIMessage):
            return response.model_copy(deep=True)
        if isinstance(response, BaseMessage):
            return AIMessage(content=response.content)
        return AIMessage(content=str(response))

    def _usage(self, messages: list[BaseMessage], reply: AIMessage) -> UsageMetadata:
        sent = sum(self.count_tokens(m.text) + _PER_MESSAGE_TOKENS for m in messages)
        tools = json.dumps([c["args"] for c in reply.tool_calls], ensure_ascii=False)
        received = self.count_tokens(reply.text) + (
            self.count_tokens(tools) if reply.tool_calls else 0
        )
        with self._lock:
            self.usage["calls"] += 1
            self.usage["input_tokens"] += sent
            self.usage["output_tokens"] += received
        return UsageMetadata(
            input_tokens=sent, output_tokens=received, total_tokens=sent + received
        )

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        reply = self._reply(self._next(messages, kwargs), messages)
        reply.usage_metadata = self._usage(messages, reply)
        reply.response_metadata = {**reply.response_metadata, "model_name": self.model_name}
        return ChatResult(generations=[ChatGeneration(message=reply)])

    def bind_tools(
        self,
        tools: Sequence[dict[str, Any] | type | Callable[..., Any] | Any],
        *,
        tool_choice: str | None = None,
        **kwargs: Any,
    ) -> Runnable[LanguageModelInput, AIMessage]:
        """Record the tools with each request; replies are replayed as given."""
        formatted = [convert_to_openai_tool(tool) for tool in tools]
        return self.bind(tools=formatted, tool_choice=tool_choice, **kwargs)


def __getattr__(name: str) -> Any:
    # Loaded on first use: they bring in langchain_openai, which the fakes do not need.
    if name == "ReplayChatModel":
        from recallmem.replay.chat_model import ReplayChatModel

        return ReplayChatModel
    if name == "ReplayServer":
        from recallmem.replay.server import ReplayServer

        return ReplayServer
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
