"""The JSON object in a model's reply, however it is wrapped.

Models wrap JSON in chatter, code fences and ``<think>`` blocks, leave trailing commas
and write ``True`` for ``true``; :func:`find_json` reads past all of that. A reply with
no readable object (none at all, or only one nested some thousand levels deep or holding
an integer too long to convert) is an :class:`~recallmem.errors.ExtractionError` saying
why, in the words of :func:`recallmem.text.jsontext.why_unreadable`, never a raw Python error.

>>> find_json('Sure! ```json\\n{"facts": [], "confirmed": ["F1",],}\\n```')
{'facts': [], 'confirmed': ['F1']}
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from typing import Any

from recallmem.errors import ExtractionError
from recallmem.text.jsontext import UNREADABLE, why_unreadable

_THINK = re.compile(r"<think(?:ing)?>[\s\S]*?</think(?:ing)?>", re.IGNORECASE)
_FENCE = re.compile(r"```[a-zA-Z0-9_-]*\s*\n?([\s\S]*?)```")


def _object_spans(text: str) -> Iterator[tuple[int, int]]:
    """Where every top-level ``{...}`` starts and ends, braces inside strings ignored."""
    depth, start, in_string, escaped = 0, -1, False, False
    for i, char in enumerate(text):
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
            continue
        if char == '"' and depth:
            in_string = True
        elif char == "{":
            start = i if depth == 0 else start
            depth += 1
        elif char == "}" and depth:
            depth -= 1
            if depth == 0:
                yield start, i + 1


def _past_thinking(text: str) -> str:
    """The reply without its thinking, cut only at tags outside every JSON object.

    A fact may itself mention ``</think>``; a cut there would fall inside the answer.
    """

    def outside_json(tags: Iterator[re.Match[str]], text: str) -> list[re.Match[str]]:
        spans = list(_object_spans(text))
        return [m for m in tags if not any(a <= m.start() < b for a, b in spans)]

    for m in reversed(outside_json(_THINK.finditer(text), text)):
        text = text[: m.start()] + text[m.end() :]
    # Some templates open the thinking block in the prompt: only its closer is in the reply.
    closers = outside_json(re.finditer("</think>", text), text)
    return text[closers[-1].end() :] if closers else text


def _outside_strings(
    text: str, pattern: re.Pattern[str], repl: str | Callable[[re.Match[str]], str]
) -> str:
    # Split into string literals and the code between them; only rewrite the code.
    parts = re.split(r'("(?:[^"\\]|\\.)*")', text)
    return "".join(p if i % 2 else pattern.sub(repl, p) for i, p in enumerate(parts))


_TRAILING_COMMA = re.compile(r",\s*([}\]])")
_PY_LITERALS = {"True": "true", "False": "false", "None": "null"}
_PY_LITERAL = re.compile(r"\b(True|False|None)\b")


def _loads(candidate: str) -> Any:
    try:
        return json.loads(candidate)
    except json.JSONDecodeError:
        repaired = _outside_strings(candidate, _TRAILING_COMMA, r"\1")
        repaired = _outside_strings(repaired, _PY_LITERAL, lambda m: _PY_LITERALS[m.group(1)])
        return json.loads(repaired)


def _why(exc: BaseException) -> str:
    if isinstance(exc, json.JSONDecodeError):
        return str(exc)  # where the text stops being JSON: the model's slip, shown as is
    return why_unreadable(exc)  # too deep, or an integer too long: never a raw Python error


def find_json(
    text: str,
    *,
    source: str = "the model's reply",
    then: str = "The conversation stays queued and will be retried.",
) -> dict[str, Any]:
    """The JSON object in a model reply, past thinking, fences and chatter.

    Raises:
        ExtractionError: no readable object; the message names ``source``, why, how the
            reply starts, and ``then`` (what happens next).
    """
    text = _past_thinking(text)
    candidates = [*_FENCE.findall(text), text]
    errors: list[str] = []
    for block in candidates:
        if block.strip().startswith("["):  # a bare list of facts
            try:
                value = _loads(block.strip())
            except UNREADABLE as exc:
                errors.append(_why(exc))
            else:
                if isinstance(value, list):
                    return {"facts": value}
        spans = (block[start:end] for start, end in _object_spans(block))
        for span in sorted(spans, key=len, reverse=True):
            try:
                value = _loads(span)
            except UNREADABLE as exc:
                errors.append(_why(exc))
                continue
            if isinstance(value, dict):
                return value
    detail = f" ({errors[0]})" if errors else ""
    raise ExtractionError(
        f"{source} holds no readable JSON object{detail}; it starts with "
        f"{text.strip()[:120]!r}. {then}"
    )
