"""JSON from outside (an import file, a request body): parsed, or refused with a reason a
person can act on, never a traceback.

>>> parse_json(b'\\xef\\xbb\\xbf{"facts": []}')  # a byte-order mark is allowed
{'facts': []}
>>> for bad in (b"[" * 100_000, b"\\xff{}", b"[" + b"9" * 5000 + b"]"):
...     try:
...         parse_json(bad)
...     except InvalidInputError as exc:
...         print(exc)
it is nested too deeply (arrays or objects some thousand levels inside each other)
it is not UTF-8 text (invalid start byte at byte 0)
it holds an integer of more than 4300 digits, which nothing here takes
"""

from __future__ import annotations

import json
import math
import sys
from collections.abc import Iterable, Mapping
from typing import Any

from recallmem.errors import InvalidInputError

UNREADABLE = (ValueError, RecursionError)  # what json.loads raises for unreadable text


def why_unreadable(exc: BaseException) -> str:
    """Why text could not be parsed as JSON, from the error parsing it raised."""
    if isinstance(exc, RecursionError):
        return "it is nested too deeply (arrays or objects some thousand levels inside each other)"
    if isinstance(exc, UnicodeDecodeError):
        return f"it is not UTF-8 text ({exc.reason} at byte {exc.start})"
    if "integer string conversion" in str(exc):
        digits = sys.get_int_max_str_digits()
        return f"it holds an integer of more than {digits} digits, which nothing here takes"
    return f"it is not JSON ({exc})"


def parse_json(data: bytes | str) -> Any:
    """``data`` parsed as JSON (UTF-8, with or without a byte-order mark).

    Raises:
        InvalidInputError: saying why the text cannot be read.
    """
    try:
        text = data.decode("utf-8-sig") if isinstance(data, bytes) else data
        return json.loads(text)
    except UNREADABLE as exc:
        raise InvalidInputError(why_unreadable(exc)) from exc


# Nesting a value may have: far more than any record needs, and well inside what Python's
# json (about a thousand levels, less the fact record around the value) can read back.
MAX_VALUE_DEPTH = 64


def value_problem(value: Any, name: str = "value") -> str | None:
    """Why a value's contents cannot be stored as JSON (too deep, a NaN or Infinity),
    checked without recursion; None when they can.

    >>> value_problem({"limits": [1, float("inf")]})
    "value['limits'][1] is inf, and JSON has no NaN or Infinity: store a finite number"
    """
    stack: list[tuple[Any, str, int]] = [(value, name, 0)]
    while stack:
        node, path, depth = stack.pop()
        if isinstance(node, float) and not math.isfinite(node):
            return f"{path} is {node}, and JSON has no NaN or Infinity: store a finite number"
        children: Iterable[tuple[Any, Any]] = ()
        if isinstance(node, Mapping):
            children = node.items()
        elif isinstance(node, list | tuple):
            children = enumerate(node)
        for name, child in children:
            if depth + 1 > MAX_VALUE_DEPTH:
                return f"it nests lists or dicts more than {MAX_VALUE_DEPTH} levels deep"
            stack.append((child, f"{path}[{name!r}]", depth + 1))
    return None
