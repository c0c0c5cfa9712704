"""Tables for the terminal and for docs/benchmarks.md, and the saved results.

Each benchmark owns one section of docs/benchmarks.md, between ``<!-- bench:NAME -->``
and ``<!-- /bench:NAME -->``, and rewrites only that section, so several benchmarks
(and people) share the file. Raw results go to bench/results/NAME.json, which the
notebook reads.
"""

from __future__ import annotations

import json
import platform
import subprocess
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from bench.data import REPO_ROOT

DOCS_FILE = REPO_ROOT / "docs" / "benchmarks.md"
RESULTS_DIR = REPO_ROOT / "bench" / "results"
IMAGES_DIR = REPO_ROOT / "docs" / "img"

_HEADER = (
    "# Benchmarks\n\n"
    "Every section below is written by `python -m bench <name>` (see bench/README.md);\n"
    "numbers are medians and ratios measured side by side in one run on this machine.\n"
)


def markdown_table(headers: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    """A GitHub-flavoured markdown table; floats keep one decimal.

    >>> print(markdown_table(["a", "b"], [["x", 1.25]]))
    | a | b |
    |---|---:|
    | x | 1.2 |
    """
    align = (
        ["---" if not _is_number(rows[0][i]) else "---:" for i in range(len(headers))]
        if rows
        else ["---"] * len(headers)
    )
    lines = ["| " + " | ".join(headers) + " |", "|" + "|".join(align) + "|"]
    lines += ["| " + " | ".join(_cell(v) for v in row) + " |" for row in rows]
    return "\n".join(lines)


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _cell(value: Any) -> str:
    if value is None:
        return "–"
    if isinstance(value, float):
        return f"{value:.1f}"
    return str(value)


def replace_section(document: str, name: str, body: str) -> str:
    """``document`` with the section ``name`` replaced by ``body`` (appended if absent).

    >>> doc = "x\\n<!-- bench:a -->\\nold\\n<!-- /bench:a -->\\ny"
    >>> replace_section(doc, "a", "new")
    'x\\n<!-- bench:a -->\\nnew\\n<!-- /bench:a -->\\ny'
    """
    start, end = f"<!-- bench:{name} -->", f"<!-- /bench:{name} -->"
    block = f"{start}\n{body.strip()}\n{end}"
    if start in document and end in document:
        head, rest = document.split(start, 1)
        _, tail = rest.split(end, 1)
        return head + block + tail
    return document.rstrip("\n") + "\n\n" + block + "\n"


def write_section(name: str, body: str, docs_file: Path = DOCS_FILE) -> Path:
    """Rewrite one section of docs/benchmarks.md, creating the file if needed."""
    document = docs_file.read_text(encoding="utf-8") if docs_file.exists() else _HEADER
    docs_file.parent.mkdir(parents=True, exist_ok=True)
    docs_file.write_text(replace_section(document, name, body), encoding="utf-8")
    return docs_file


def machine_note() -> str:
    """One line saying where and when the numbers were measured."""
    import os

    when = datetime.now(UTC).strftime("%Y-%m-%d")
    python = platform.python_version()
    # The cores are shared: the load says how much the latencies above were crowded.
    load = os.getloadavg()[0]
    return (
        f"Measured {when} on {platform.machine()}, {os.cpu_count()} cores, Python {python}; "
        f"load average {load:.1f} at the end of the run."
    )


def save_results(name: str, payload: dict[str, Any], results_dir: Path = RESULTS_DIR) -> Path:
    """Write bench/results/NAME.json (numbers only: never benchmark text)."""
    results_dir.mkdir(parents=True, exist_ok=True)
    path = results_dir / f"{name}.json"
    path.write_text(json.dumps(payload, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    return path


def load_results(name: str, results_dir: Path = RESULTS_DIR) -> dict[str, Any]:
    """The saved results of benchmark ``name``."""
    data: dict[str, Any] = json.loads((results_dir / f"{name}.json").read_text(encoding="utf-8"))
    return data


def git_output(*args: str) -> str | None:
    """What ``git ARGS`` prints in the repository, or None where git cannot say."""
    try:
        done = subprocess.run(
            ["git", *args], capture_output=True, text=True, check=True, cwd=REPO_ROOT
        )
    except (OSError, subprocess.CalledProcessError):
        return None
    return done.stdout.strip()
