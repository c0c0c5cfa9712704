"""The sets search keys are measured on, with each fact's keys and each question's form.

Blind sets ``set_a``..``set_h`` (``bench/data/bilingual/``) ask each question once, as
written (form ``written``). The newer blind sets (``set_i``, ``set_j``, in
``/work/blind/retrieval``; never in the repository) ask each question twice: as the
user's ``message`` (what the memory block is retrieved with) and as the planner's
``query``; they add the kinds ``two_fact`` (two gold facts) and ``conflict`` (the gold
fact is the newer of two that disagree; ``stale`` names the older). ``conflicts_dev``
(``bench/data/``, written for this work without looking at those sets) has the same
shape: changes whose supersede was missed, and ``supplement`` questions whose answer is
the older of two related facts. LoCoMo at fact level and MADial are read as
``bench.bilingual_data`` reads them. Keys come from the keying
replies (``bench.keys_requests.load_keys``); a fact without a reply has none.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from bench.bilingual_data import (
    LANGUAGES,
    EvalSet,
    Fact,
    Question,
    User,
    load_blind_sets,
    load_locomo_set,
    load_madial_set,
    parse_time,
)
from bench.keys_requests import CONFLICTS_DEV, NEW_BLIND, load_keys

WRITTEN, MESSAGE, QUERY = "written", "message", "query"
TWO_FACT, CONFLICT = "two_fact", "conflict"
SUPPLEMENT = "supplement"  # conflicts_dev only: the gold is the older of two related facts
TWO_FORM_KINDS = ("en_en", "zh_zh", "en_zh", "zh_en", "paraphrase", TWO_FACT, CONFLICT,
                  SUPPLEMENT, "noanswer")  # fmt: skip


@dataclass(frozen=True)
class KeyedFact(Fact):
    """A fact with its search keys (stored as ``questions`` by ``bench.bilingual_public``)."""

    questions: tuple[str, ...] = ()


@dataclass(frozen=True)
class FormQuestion(Question):
    """A question in one of its forms; ``stale``: the older fact a conflict's gold replaces."""

    form: str = WRITTEN
    stale: frozenset[str] = frozenset()
    base_id: str = ""


def load_two_form_set(path: Path) -> EvalSet:
    """A set whose questions have a ``message`` and a ``query`` form, each asked apart
    (ids ``<id>@message``, ``<id>@query``)."""
    raw = json.loads(path.read_text(encoding="utf-8"))
    users = []
    for user in raw["users"]:
        languages = str(user.get("languages", "mixed"))
        if languages not in LANGUAGES:
            raise ValueError(f"{path}: user {user['user_id']}: languages {languages!r}")
        facts = tuple(Fact(str(f["id"]), str(f["text"]), frozenset({str(f["id"])}),
                           str(f.get("category") or "context"), parse_time(f.get("said_at")))
                      for f in user["facts"])  # fmt: skip
        known = {f.id for f in facts}
        questions = []
        for q in user["questions"]:
            kind, gold = str(q["kind"]), frozenset(str(g) for g in q.get("gold") or ())
            stale = frozenset(str(s) for s in q.get("stale") or ())
            if kind not in TWO_FORM_KINDS or (gold | stale) - known:
                raise ValueError(f"{path}: question {q['id']}: kind or ids not in the set")
            for form in (MESSAGE, QUERY):
                questions.append(FormQuestion(f"{q['id']}@{form}", str(q[form]), kind, gold,
                                              parse_time(q.get("asked_at")), form=form,
                                              stale=stale, base_id=str(q["id"])))  # fmt: skip
        users.append(User(str(user["user_id"]), languages, facts, tuple(questions)))
    return EvalSet(str(raw.get("name") or path.stem), "blind-two-form", tuple(users))


def _written(eval_set: EvalSet) -> EvalSet:
    users = tuple(
        replace(
            u,
            questions=tuple(
                FormQuestion(q.id, q.text, q.kind, q.gold, q.asked_at, q.labelled, base_id=q.id)
                for q in u.questions
            ),
        )
        for u in eval_set.users
    )
    return replace(eval_set, users=users)


def keyed(eval_set: EvalSet, keys: dict[str, tuple[str, ...]]) -> EvalSet:
    """The set with every fact carrying its keys (none where ``keys`` has none)."""
    users = tuple(
        replace(
            u,
            facts=tuple(
                KeyedFact(f.id, f.text, f.cites, f.category, f.said_at, keys.get(f.id, ()))
                for f in u.facts
            ),
        )
        for u in eval_set.users
    )
    return replace(eval_set, users=users)


def measured_sets(public: bool = True) -> list[EvalSet]:
    """set_a..h, the development set of changes, then set_i/j when present, then LoCoMo
    (fact level) and MADial."""
    sets = [_written(s) for s in load_blind_sets()]
    sets.append(replace(load_two_form_set(CONFLICTS_DEV), source="dev"))
    if NEW_BLIND.is_dir():
        sets += [load_two_form_set(p) for p in sorted(NEW_BLIND.glob("set_*.json"))]
    if public:
        sets += [_written(load_locomo_set("fact")), _written(load_madial_set())]
    return sets


def keys_of(eval_set: EvalSet) -> dict[str, Any]:
    """The vetted keys of the set's facts, with how many replies were found."""
    name = {"locomo-fact": "locomo"}.get(eval_set.name, eval_set.name)
    loaded = load_keys(name)
    return {"keys": loaded.keys, "requests": loaded.requests, "answered": loaded.answered,
            "set_aside": loaded.set_aside, "unreadable": loaded.unreadable}  # fmt: skip
