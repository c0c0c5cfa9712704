"""The real_model section shows the held-out set beside the blind sets, when it exists."""

from __future__ import annotations

from typing import Any

from bench.real_model_report import EXTRACTION_COLUMNS, numbers, render


def _payload(heldout: dict[str, Any] | None) -> dict[str, Any]:
    empty = {"complete": 0, "conversations": 0, "table": {}, "waiting": 0, "errors": [],
             "unsaid": {"refused": 0, "true": 0}}  # fmt: skip
    payload = {"extraction": empty, "planner": {"modes": {}}, "injection": {"modes": {}},
               "requests": 3, "models": {"claude": 3}, "waiting": 0}  # fmt: skip
    return payload | {"heldout": {"heldout2": heldout} if heldout else {}}


def test_the_held_out_set_has_its_own_table_and_saved_figures() -> None:
    row = dict.fromkeys(EXTRACTION_COLUMNS, 1.0) | {"supersede": 94.0,
                                                     "traps": {"secret": {"n": 2, "broken": 1}}}  # fmt: skip
    held = {"complete": 2, "conversations": 3, "table": {"all": row}, "waiting": 1}
    body = render(_payload(held))
    assert "**Extraction, held-out set `heldout2`**" in body
    assert "2 of 3 conversations replayed" in body
    assert "| all |" in body.split("held-out set")[1] and "94.0" in body
    assert "| secret | 2 | 1 |" in body.split("Traps broken, held-out set `heldout2`")[1]
    assert numbers(_payload(held))["heldout"]["heldout2"]["table"] == {"all": row}


def test_without_a_held_out_set_nothing_is_said_of_one() -> None:
    assert "held-out" not in render(_payload(None))
    assert numbers(_payload(None))["heldout"] == {}
