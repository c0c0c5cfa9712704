"""``ReplayChatModel``: ``ChatOpenAI`` answered from recordings, in process.

It is LangChain's own OpenAI chat model with its HTTP client pointed at an in-process
transport that answers like the replay server: requests are built, tools bound and
structured output asked for exactly as with a real OpenAI-compatible endpoint, so a
recording made from a request rendered over HTTP answers the same request here. A
request without a recording fails loudly (``openai.NotFoundError``) naming the request
file written for a model to answer.

>>> import tempfile
>>> from recallmem.replay.recordings import Recordings, Reply
>>> folder = tempfile.mkdtemp()
>>> body = {"messages": [{"role": "user", "content": "hi"}]}
>>> _ = Recordings(folder).save(body, Reply(content="hello"), model="m", kind="chat")
>>> ReplayChatModel(recordings=folder).invoke("hi").content
'hello'
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
from langchain_openai import ChatOpenAI
from pydantic import Field, SkipValidation, model_validator

from recallmem.replay.answer import Answerer
from recallmem.replay.recordings import Recordings

# The endpoint the client believes it calls; the transport answers, nothing is sent.
REPLAY_URL = "http://replay.invalid/v1"


def _transport(answerer: Answerer) -> httpx.MockTransport:
    def handle(request: httpx.Request) -> httpx.Response:
        if not request.url.path.rstrip("/").endswith("/chat/completions"):
            return httpx.Response(404, json={"error": {"message": f"not here: {request.url}"}})
        answer = answerer.answer(request.read())
        return httpx.Response(
            answer.status, headers={"Content-Type": answer.content_type}, content=answer.body
        )

    return httpx.MockTransport(handle)


class ReplayChatModel(ChatOpenAI):
    """A ``ChatOpenAI`` whose replies are the recordings under ``recordings``.

    Args:
        recordings: the folder of recordings (``tests/data/recorded``).
        requests_dir: where a request without a recording is written, to be answered
            (default: not written; the error still names the request's key).
    """

    recordings: Path
    requests_dir: Path | None = None
    keep_all: bool = Field(default=False, description="Also write requests that were answered.")
    kind: str | None = Field(default=None, description="File requests under this kind.")
    answerer: SkipValidation[Answerer] = Field(
        exclude=True, description="What was answered, and the requests without a recording."
    )

    @model_validator(mode="before")
    @classmethod
    def _replaying(cls, values: Any) -> Any:
        if not isinstance(values, dict):
            return values
        values = dict(values)
        folder = values.get("requests_dir")
        answerer = Answerer(
            Recordings(values["recordings"]),
            Path(folder) if folder is not None else None,
            keep_all=bool(values.get("keep_all", False)),
            kind=values.get("kind"),
        )
        transport = _transport(answerer)
        values.setdefault("model", "replay")
        values.setdefault("api_key", "replay")
        values["base_url"] = REPLAY_URL
        values.setdefault("temperature", 0)
        values.setdefault("max_retries", 0)
        values["http_client"] = httpx.Client(transport=transport)
        values["http_async_client"] = httpx.AsyncClient(transport=transport)
        values["answerer"] = answerer
        return values
