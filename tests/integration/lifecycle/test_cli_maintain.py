"""``recallmem maintain`` and ``remember --valid-until`` on a real embedded home."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from recallmem.cli import main


def run(home: Path, *argv: str) -> tuple[int, str]:
    out = io.StringIO()
    return main(["--home", str(home), *argv], out=out), out.getvalue()


def test_remember_with_valid_until_then_maintain(home: Path) -> None:
    code, out = run(home, "remember", "Trip to Lisbon", "--user", "ada", "--category",
                    "context", "--valid-until", "2020-01-01T00:00:00+00:00")  # fmt: skip
    assert code == 0
    fact_id = out.split()[0]
    code, out = run(home, "maintain", "--user", "ada")
    assert code == 0
    assert out.splitlines() == [
        "maintained user 'ada': 1 expired, 0 faded, 0 purged, 0 consolidated, 0 keyed",
        f"  expired  {fact_id}",
    ]
    code, out = run(home, "maintain")
    assert (
        code == 0
        and out == "maintained 1 user(s): 0 expired, 0 faded, 0 purged, 0 consolidated, 0 keyed\n"
    )


def test_bad_times_exit_2_with_what_to_do(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _ = run(home, "remember", "Trip", "--user", "ada", "--category", "context",
                  "--valid-until", "2020-01-01T00:00")  # fmt: skip
    assert code == 2 and "has no time zone" in capsys.readouterr().err
    code, _ = run(home, "maintain", "--now", "yesterday")
    assert code == 2 and "not an ISO 8601 time" in capsys.readouterr().err
