"""A chat request as an OpenAI-compatible API receives it: canonical form, key and kind.

The key of a request is a hash of its canonical JSON: the parts a model reads
(``messages``, ``tools``, ``tool_choice``, ``response_format``,
``parallel_tool_calls``), without the model's name, sampling or streaming settings, and
with tool-call ids renumbered in order of appearance (``call_1``, ``call_2`` ...), since
they are random where they are made. The same request sent by
``langchain_openai.ChatOpenAI`` over HTTP or in-process therefore has the same key, and
a prompt change makes a new one.

>>> body = {"model": "gpt-4o-mini", "stream": True, "temperature": 0,
...         "messages": [{"role": "user", "content": "hi"}]}
>>> canonical_request(body)
{'messages': [{'role': 'user', 'content': 'hi'}]}
>>> request_key(body) == request_key({"model": "other", "messages": body["messages"]})
True
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping
from typing import Any

# What a model reads of a request; everything else (model, temperature, stream,
# max_tokens, ...) is how it is asked, not what.
READ_BY_THE_MODEL = ("messages", "tools", "tool_choice", "response_format", "parallel_tool_calls")
KEY_LENGTH = 20  # hex digits of the sha256: 80 bits
_KEY = re.compile(rf"[0-9a-f]{{{KEY_LENGTH}}}")


def _renumbered(messages: list[Any]) -> list[Any]:
    ids: dict[str, str] = {}

    def new(old: Any) -> Any:
        if not isinstance(old, str):
            return old
        return ids.setdefault(old, f"call_{len(ids) + 1}")

    out = []
    for message in messages:
        if not isinstance(message, Mapping):
            out.append(message)
            continue
        message = dict(message)
        if isinstance(message.get("tool_calls"), list):
            message["tool_calls"] = [
                {**call, "id": new(call.get("id"))} if isinstance(call, Mapping) else call
                for call in message["tool_calls"]
            ]
        if "tool_call_id" in message:
            message["tool_call_id"] = new(message["tool_call_id"])
        out.append(message)
    return out


def canonical_request(body: Mapping[str, Any]) -> dict[str, Any]:
    """The parts of a chat-completions request body a model reads, ids renumbered."""
    canonical = {key: body[key] for key in READ_BY_THE_MODEL if key in body}
    if isinstance(canonical.get("messages"), list):
        canonical["messages"] = _renumbered(canonical["messages"])
    return canonical


def canonical_json(body: Mapping[str, Any]) -> str:
    """The canonical request as one stable JSON text (sorted keys, no spaces)."""
    return json.dumps(
        canonical_request(body), sort_keys=True, ensure_ascii=False, separators=(",", ":")
    )


def request_key(body: Mapping[str, Any]) -> str:
    """The key recordings are filed under: a hash of :func:`canonical_json`."""
    return hashlib.sha256(canonical_json(body).encode()).hexdigest()[:KEY_LENGTH]


def is_key(text: str) -> bool:
    """Whether ``text`` has the form of a request key."""
    return bool(_KEY.fullmatch(text))


def tool_names(body: Mapping[str, Any]) -> list[str]:
    """The names of the functions a request offers."""
    names = []
    for tool in body.get("tools") or []:
        function = tool.get("function") if isinstance(tool, Mapping) else None
        if isinstance(function, Mapping) and isinstance(function.get("name"), str):
            names.append(function["name"])
    return names


def request_kind(body: Mapping[str, Any]) -> str:
    """Which of the product's model calls a request is, from the tools it offers:
    ``extraction`` (the extraction tool), ``agent`` (the memory tools) or ``chat``."""
    names = set(tool_names(body))
    if "record_extraction" in names:
        return "extraction"
    if names & {"recall", "remember"}:
        return "agent"
    return "chat"


def forced_tool(body: Mapping[str, Any]) -> str | None:
    """The function a request obliges the model to call (``tool_choice``), if any."""
    choice = body.get("tool_choice")
    if isinstance(choice, Mapping):
        function = choice.get("function")
        if isinstance(function, Mapping) and isinstance(function.get("name"), str):
            return str(function["name"])
    return None
