"""The blind scenario sets a real model is recorded on, read and checked.

Written by people who have not read the prompts (issue 23), kept in the repository under
``bench/data/blind/`` (``RECALLMEM_BLIND`` overrides the folder): the first sets lived
outside it and were lost with the machine that held them, and with them every way to
replay their recordings:

- ``extract/conversations.json``: conversations, each of days of timed messages, with
  what should be stored (``expected``: facts with ``match`` keyword groups, supersedes,
  and ``must_not_store`` traps with their forbidden words);
- ``planner/turns.json``: users with stored facts and second turns (``history`` is the
  first exchange) of kind ``cue``, ``implicit``, ``none`` or ``hedge``;
- ``planner/injections.json``: a stored fact carrying an instruction among ordinary
  facts, and a turn.

A file that breaks its format is refused with the fault named.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

BLIND_SETS = Path(__file__).resolve().parent / "data" / "blind"
# Each written after the product's last change it measures, and scored once: the figures
# that say whether a change holds on conversations nobody tuned on. Same layout
# (``extract/conversations.json``, ``judge/``); render one with RECALLMEM_BLIND set to it.
HELDOUT_SETS = {
    "heldout": BLIND_SETS.parent / "heldout",  # after extract@10
    "heldout2": BLIND_SETS.parent / "heldout2",  # after the specifics rule's false refusals
    "heldout3": BLIND_SETS.parent / "heldout3",  # scores extract@11 (names as the user wrote them)
}


def blind_dir() -> Path:
    """Where the blind sets are (``RECALLMEM_BLIND``, default ``bench/data/blind``)."""
    return Path(os.environ.get("RECALLMEM_BLIND", BLIND_SETS))


class _Strict(BaseModel):
    model_config = ConfigDict(frozen=True, extra="ignore")


# -- extraction ------------------------------------------------------------------------


class SaidMessage(_Strict):
    id: str
    role: Literal["user", "assistant"]
    content: str
    at: str  # ISO 8601 with the user's offset


class Day(_Strict):
    date: str
    messages: tuple[SaidMessage, ...]


class ExpectedFact(_Strict):
    id: str
    content: str
    category: str
    match: tuple[tuple[str, ...], ...]  # every group must have one word in the stored fact
    said_in: tuple[str, ...] = ()
    due: str | None = None
    final_status: Literal["active", "superseded", "done"] = "active"
    kind: str = "plain"


class ExpectedSupersede(_Strict):
    old: str
    new: str
    kind: Literal["change", "correction"]


class Trap(_Strict):
    kind: str
    message: str
    what: str = ""
    forbidden: tuple[str, ...] = ()


class Expected(_Strict):
    facts: tuple[ExpectedFact, ...]
    supersedes: tuple[ExpectedSupersede, ...] = ()
    must_not_store: tuple[Trap, ...] = ()


class Conversation(_Strict):
    id: str
    user_id: str
    language: str
    timezone: str
    days: tuple[Day, ...] = Field(min_length=1)
    expected: Expected


# -- planner and injections ------------------------------------------------------------


class StoredFact(_Strict):
    id: str
    content: str
    category: str
    said_at: str


class Said(_Strict):
    role: Literal["user", "assistant"]
    content: str


class PlannerItem(_Strict):
    id: str
    kind: Literal["cue", "implicit", "none", "hedge"]
    at: str
    history: tuple[Said, ...] = ()
    turn: str
    needs: tuple[str, ...] = ()
    good_answer_uses: str = ""


class PlannerUser(_Strict):
    user_id: str
    language: str
    timezone: str
    facts: tuple[StoredFact, ...]
    items: tuple[PlannerItem, ...]


class PlannerSet(_Strict):
    name: str
    users: tuple[PlannerUser, ...]


class Injection(_Strict):
    id: str
    language: str
    fact: str
    category: str
    ordinary_facts: tuple[str, ...]
    turn: str
    obeyed_if: str


class InjectionSet(_Strict):
    name: str
    items: tuple[Injection, ...]


def _load(path: Path, model: type[Any], what: str) -> Any:
    if not path.is_file():
        raise FileNotFoundError(f"no {what} at {path} (set RECALLMEM_BLIND to its folder)")
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        if model is _Conversations and isinstance(data, list):
            data = {"conversations": data}
        return model.model_validate(data)
    except (ValueError, ValidationError) as exc:
        raise ValueError(f"{path} is not a valid {what}: {exc}") from exc


class _Conversations(_Strict):
    conversations: tuple[Conversation, ...]


def load_conversations(path: Path | None = None) -> tuple[Conversation, ...]:
    """The blind extraction set (a list of conversations, or ``{"conversations": [...]}``)."""
    found = _load(path or blind_dir() / "extract" / "conversations.json", _Conversations,
                  "extraction set")  # fmt: skip
    return found.conversations  # type: ignore[no-any-return]


def load_planner(path: Path | None = None) -> PlannerSet:
    """The blind planner set."""
    return _load(path or blind_dir() / "planner" / "turns.json", PlannerSet, "planner set")  # type: ignore[no-any-return]


def load_injections(path: Path | None = None) -> InjectionSet:
    """The blind set of stored facts that carry instructions."""
    return _load(path or blind_dir() / "planner" / "injections.json", InjectionSet, "injection set")  # type: ignore[no-any-return]
