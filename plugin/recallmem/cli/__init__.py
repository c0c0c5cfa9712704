"""``recallmem``: the command line over the same Memory the library uses.

    recallmem remember "Prefers reports in Chinese" --user ada --category preference
    recallmem recall "report language" --user ada
    recallmem list --user ada
    recallmem forget FACT_ID [--purge]  |  recallmem forget --user ada [--thread T]
    (FACT_ID: the whole id or any unique prefix, like the 12 characters tables show)
    recallmem export --user ada > ada.json  |  recallmem import ada.json
    recallmem copy --from-user team-template --to-user ada [--to-agent A] [--category C]
    recallmem pending | dead-letters | retry LETTER_ID
    recallmem eval-extract [--model NAME] [--prompt-dir DIR] [--replay]
    recallmem serve --host 127.0.0.1 --port 8765
    recallmem mcp --user ada [--agent A]   (an MCP server on stdio, for one user)
    recallmem migrate [--chroma-url URL]   (a store of the older layout, once)
    recallmem reembed [--embedder NAME]    (after changing RECALLMEM_EMBEDDER; resumable)

While ``recallmem serve`` owns the home, commands are not run on it (embedded Chroma
belongs to one process): the CLI prints the ``curl`` that asks the service instead.

Errors print one line on stderr that says what to do, and exit with status 2 (bad
input) or 1 (anything else). Control characters in what is printed are written as
escapes (:mod:`recallmem.cli.terminal`).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import TextIO

from recallmem.cli.busy import busy_message
from recallmem.cli.commands import (
    copy_commands,
    facts_commands,
    maintain_commands,
    mcp_command,
    migrate_command,
    queue_commands,
    reembed_command,
    serve_command,
)
from recallmem.cli.common import Handler
from recallmem.cli.hints import cli_message
from recallmem.cli.terminal import safe_output, terminal_safe
from recallmem.errors import FactNotFoundError, InvalidInputError, RecallmemError, StoreLockedError


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of every subcommand."""
    parser = argparse.ArgumentParser(prog="recallmem", description="Long-term memory for agents.")
    parser.add_argument("--home", help="data directory (default: $RECALLMEM_HOME)")
    sub = parser.add_subparsers(dest="command", required=True)
    groups = (facts_commands, copy_commands, queue_commands, maintain_commands, serve_command,
              mcp_command)  # fmt: skip
    for group in (*groups, migrate_command, reembed_command):
        group.register(sub)
    return parser


def main(argv: Sequence[str] | None = None, out: TextIO | None = None) -> int:
    """Run the CLI; returns the exit status."""
    args = build_parser().parse_args(argv)
    try:
        handler: Handler = args.handler
        return handler(args, safe_output(out or sys.stdout))
    except (InvalidInputError, FactNotFoundError) as exc:
        _error(f"error: {cli_message(exc)}")
        return 2
    except StoreLockedError as exc:
        _error(busy_message(args, exc.holder) or f"error: {exc}")
        return 1
    except (RecallmemError, OSError) as exc:
        _error(f"error: {cli_message(exc)}")
        return 1


def _error(message: str) -> None:
    print(f"recallmem: {terminal_safe(message)}", file=sys.stderr)
