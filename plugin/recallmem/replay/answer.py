"""Answering a chat-completions request from a recording, as an OpenAI-compatible API.

:class:`Answerer` takes the request body an API receives and returns the HTTP status,
headers and body it would send back: a ``chat.completion``, or with ``"stream": true``
the same reply as server-sent ``chat.completion.chunk`` events (text in pieces, tool
calls, usage when ``stream_options.include_usage``). A request without a recording is
answered 404, naming the request file written for someone to answer. The replay
server and :class:`~recallmem.replay.chat_model.ReplayChatModel` both answer through it.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from recallmem.replay.recordings import Recording, Recordings, Reply, write_request
from recallmem.replay.wire_request import request_key, request_kind
from recallmem.text.tokens import count_tokens

STREAM_PIECE = 24  # characters of text per streamed chunk
README = "tests/data/recorded/README.md"


@dataclass(frozen=True)
class HttpAnswer:
    """What the API sends back: status, content type and body."""

    status: int
    content_type: str
    body: bytes


def _error(status: int, message: str, kind: str) -> HttpAnswer:
    body = {"error": {"message": message, "type": kind, "code": kind}}
    return HttpAnswer(status, "application/json", json.dumps(body).encode())


def _usage(body: Mapping[str, Any], recording: Recording) -> dict[str, int]:
    sent = count_tokens(json.dumps(body.get("messages", []), ensure_ascii=False))
    reply = recording.reply
    said = count_tokens(reply.content or "") + sum(
        count_tokens(json.dumps(c.arguments, ensure_ascii=False)) for c in reply.tool_calls
    )
    return {"prompt_tokens": sent, "completion_tokens": said, "total_tokens": sent + said}


def _tool_calls(recording: Recording) -> list[dict[str, Any]]:
    return [
        {
            "id": f"call_{recording.request[:8]}_{n}",
            "type": "function",
            "function": {
                "name": call.name,
                "arguments": json.dumps(call.arguments, ensure_ascii=False),
            },
        }
        for n, call in enumerate(recording.reply.tool_calls, 1)
    ]


def completion(body: Mapping[str, Any], recording: Recording) -> dict[str, Any]:
    """The ``chat.completion`` an API returns with the recorded reply."""
    calls = _tool_calls(recording)
    message: dict[str, Any] = {"role": "assistant", "content": recording.reply.content}
    if calls:
        message["tool_calls"] = calls
    return {
        "id": f"chatcmpl-{recording.request}",
        "object": "chat.completion",
        "created": int(recording.answered_at.timestamp()),
        "model": recording.model,
        "choices": [
            {
                "index": 0,
                "message": message,
                "logprobs": None,
                "finish_reason": "tool_calls" if calls else "stop",
            }
        ],
        "usage": _usage(body, recording),
    }


def chunks(body: Mapping[str, Any], recording: Recording) -> list[dict[str, Any]]:
    """The same reply as the ``chat.completion.chunk`` events of a stream."""
    head = {
        "id": f"chatcmpl-{recording.request}",
        "object": "chat.completion.chunk",
        "created": int(recording.answered_at.timestamp()),
        "model": recording.model,
    }

    def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        return {**head, "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}

    text = recording.reply.content or ""
    out = [chunk({"role": "assistant", "content": ""})]
    out += [
        chunk({"content": text[i : i + STREAM_PIECE]}) for i in range(0, len(text), STREAM_PIECE)
    ]
    calls = _tool_calls(recording)
    out += [chunk({"tool_calls": [{"index": n, **call}]}) for n, call in enumerate(calls)]
    out.append(chunk({}, "tool_calls" if calls else "stop"))
    options = body.get("stream_options")
    if isinstance(options, Mapping) and options.get("include_usage"):
        out.append({**head, "choices": [], "usage": _usage(body, recording)})
    return out


@dataclass
class Answerer:
    """Answers requests from ``recordings``; writes each request it cannot answer (and,
    with ``keep_all``, each it can) to ``requests_dir`` for someone to answer."""

    recordings: Recordings
    requests_dir: Path | None = None
    keep_all: bool = False
    kind: str | None = None  # the kind requests are filed under (default: from their tools)
    # Record mode, for replies that are fixtures and not a model's (machinery tests): a
    # request without a recording is answered with fill(request) and filed, with a note.
    fill: Callable[[Mapping[str, Any]], Reply] | None = None
    fill_note: str = "a fixture written for a machinery test, not a model's reply"
    missed: list[str] = field(default_factory=list)  # keys of requests without a recording
    answered: list[str] = field(default_factory=list)  # keys of requests answered
    written: dict[str, Path] = field(default_factory=dict)  # request files, by key
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def _write(self, key: str, body: Mapping[str, Any]) -> Path | None:
        if self.requests_dir is None:
            return None
        path = write_request(self.requests_dir, body, self.kind or request_kind(body))
        with self._lock:
            self.written[key] = path
        return path

    def answer(self, raw: bytes) -> HttpAnswer:
        """The HTTP answer to a chat-completions request body."""
        try:
            body = json.loads(raw)
        except ValueError as exc:
            return _error(400, f"the request body is not JSON: {exc}", "invalid_request_error")
        if not isinstance(body, dict) or not isinstance(body.get("messages"), list):
            return _error(400, "a chat completion needs a 'messages' list", "invalid_request_error")
        key = request_key(body)
        recording = self.recordings.find(key)
        if recording is None and self.fill is not None:
            kind = self.kind or request_kind(body)
            self.recordings.save(body, self.fill(body), model="machinery-fixture", kind=kind,
                                 note=self.fill_note)  # fmt: skip
            recording = self.recordings.find(key)
        written = self._write(key, body) if recording is None or self.keep_all else None
        if recording is None:
            where = f"it is written to {written}" if written else "pass requests_dir to keep it"
            with self._lock:
                self.missed.append(key)
            return _error(
                404,
                f"no recording for request {key} ({request_kind(body)}): {where}; have a "
                f"model answer it and file the reply ({README})",
                "no_recording",
            )
        with self._lock:
            self.answered.append(key)
        if body.get("stream"):
            events = "".join(
                f"data: {json.dumps(c, ensure_ascii=False)}\n\n" for c in chunks(body, recording)
            )
            return HttpAnswer(200, "text/event-stream", (events + "data: [DONE]\n\n").encode())
        text = json.dumps(completion(body, recording), ensure_ascii=False)
        return HttpAnswer(200, "application/json", text.encode())
