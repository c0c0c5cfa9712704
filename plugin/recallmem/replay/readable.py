"""A request rendered as Markdown, for the person or model that answers it by hand.

Exactly the request's canonical JSON, laid out: every message with its role, verbatim
in a fence longer than any run of backticks it holds, then the tool schemas and
``tool_choice`` / ``response_format`` as JSON. Nothing is added that an API would not
receive, except the headings.

>>> print(request_markdown({"messages": [{"role": "user", "content": "hi"}]}, "k1"))
# Request k1
<BLANKLINE>
## Message 1: user
<BLANKLINE>
```text
hi
```
<BLANKLINE>
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from recallmem.replay.wire_request import canonical_request

_TICKS = re.compile(r"`{3,}")


def _fenced(text: str, language: str = "text") -> str:
    longest = max((len(run) for run in _TICKS.findall(text)), default=2)
    fence = "`" * (longest + 1)
    return f"{fence}{language}\n{text}\n{fence}"


def _as_json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, indent=2)


def _content(content: Any) -> str:
    if content is None:
        return "(no text)"
    if isinstance(content, str):
        return _fenced(content)
    return _fenced(_as_json(content), "json")  # parts: text, images ...


def _message(n: int, message: Mapping[str, Any]) -> list[str]:
    role = str(message.get("role", "?"))
    head = f"## Message {n}: {role}"
    if message.get("tool_call_id"):
        head += f" (result of {message['tool_call_id']})"
    lines = [head, "", _content(message.get("content")), ""]
    for call in message.get("tool_calls") or []:
        function = call.get("function", {})
        lines += [f"Tool call `{call.get('id')}`: `{function.get('name')}`", ""]
        try:
            arguments = json.loads(function.get("arguments") or "{}")
        except (TypeError, ValueError):
            arguments = function.get("arguments")
        lines += [_fenced(_as_json(arguments), "json"), ""]
    return lines


def request_markdown(body: Mapping[str, Any], key: str) -> str:
    """The canonical request ``body`` (filed under ``key``) as Markdown."""
    request = canonical_request(body)
    lines = [f"# Request {key}", ""]
    for n, message in enumerate(request.get("messages") or [], 1):
        lines += _message(n, message)
    if request.get("tools"):
        lines += ["## Tools", "", _fenced(_as_json(request["tools"]), "json"), ""]
    for key_name in ("tool_choice", "parallel_tool_calls", "response_format"):
        if key_name in request:
            lines += [f"## {key_name}", "", _fenced(_as_json(request[key_name]), "json"), ""]
    return "\n".join(lines)
