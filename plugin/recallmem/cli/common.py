"""What every command group shares: opening the memory, plain-text tables."""

from __future__ import annotations

import argparse
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, TextIO

if TYPE_CHECKING:
    from recallmem.config import MemoryConfig
    from recallmem.memory import Memory

Handler = Callable[[argparse.Namespace, TextIO], int]
Subparsers = Any  # argparse's _SubParsersAction is private


def config_from(
    args: argparse.Namespace, names: Sequence[str] = ("home",), **settings: Any
) -> MemoryConfig:
    """The configuration, with each option of ``names`` the command line gave (``--home``
    by default) over the environment's."""
    from recallmem.config import MemoryConfig

    for name in names:
        if value := getattr(args, name, None):
            settings[name] = value
    return MemoryConfig(**settings)


def open_memory(args: argparse.Namespace, **settings: Any) -> Memory:
    """The Memory under ``--home`` (or the configured home)."""
    from recallmem.memory import Memory

    return Memory(config_from(args, **settings))


def scope_args(parser: argparse.ArgumentParser, *, user_required: bool = True) -> None:
    """``--user`` and ``--agent``."""
    parser.add_argument("--user", required=user_required, help="user id")
    parser.add_argument("--agent", default=None, help="agent id (default: shared)")


def table(rows: Sequence[Sequence[object]], header: Sequence[str]) -> str:
    """Rows as aligned, plain-text columns (the last column is not padded).

    >>> print(table([["1", "ada"]], ["n", "user"]), end="")
    n  user
    1  ada
    """
    widths = [max(len(str(r[i])) for r in [header, *rows]) for i in range(len(header))]
    lines = [
        "  ".join(str(cell).ljust(w) for cell, w in zip(row[:-1], widths, strict=False))
        + ("  " if len(row) > 1 else "")
        + str(row[-1])
        for row in [header, *rows]
    ]
    return "\n".join(line.rstrip() for line in lines) + "\n"
