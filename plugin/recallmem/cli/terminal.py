"""What the CLI writes reaches a terminal: stored text must not drive it.

A fact, a user id or an error message may hold control characters (ESC sequences that
move the cursor or clear a line, a carriage return, a backspace) or bidirectional
overrides, and printed as they are they would rewrite what the operator sees
(``Likes tea\\x1b[2K\\rEVIL: all good``). Every line the CLI writes goes through
:func:`terminal_safe`, which writes each such character as its Python escape instead.

>>> terminal_safe("Likes tea\\x1b[2K\\r ok\\n")
'Likes tea\\\\x1b[2K\\\\r ok\\n'
"""

from __future__ import annotations

import io
import re
from typing import TextIO, cast

# C0 controls but tab and newline, DEL, C1 controls, and the bidirectional embeddings,
# overrides and isolates (they reorder what follows on the line).
_UNSAFE = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def terminal_safe(text: str) -> str:
    """``text`` with each character that would drive a terminal written as its escape."""
    return _UNSAFE.sub(lambda m: m.group().encode("unicode_escape").decode("ascii"), text)


class _SafeWriter(io.TextIOBase):
    def __init__(self, out: TextIO) -> None:
        self._out = out

    def write(self, text: str) -> int:
        self._out.write(terminal_safe(text))
        return len(text)

    def flush(self) -> None:
        self._out.flush()


def safe_output(out: TextIO) -> TextIO:
    """``out``, writing everything through :func:`terminal_safe`."""
    return cast(TextIO, _SafeWriter(out))
