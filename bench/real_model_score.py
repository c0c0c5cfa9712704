"""Scoring what a real model did, against the blind labels. Pure: no model, no store.
Shares are percentages.

Extraction: an expected fact is *found* when a stored fact (any status) has, for each of
its ``match`` groups, one of the group's words in its content (case-insensitive). A
stored fact matching no expected fact is *extra* (precision counts it against the
model; *precision judged* counts those a judge found right, ``bench.real_model``); one
holding a trap's forbidden word *breaks* that trap (``must_not_store``). A
fact replaced in the very window it was said in (a correction on the spot) may be left
out: found, and its supersede right, when its replacement is stored and it is not
(:func:`overtaken_in_window`; one extraction call reads both). Every expected fact the
labels do not find is listed (``missed``) for a judge who sees the memory as it ends
(*recall judged*, ``bench.real_model``). A change's *supersede* is
right when the old fact is superseded by the new one; *old retired* also counts the old
fact out of recall by another of the new facts, or done, with the new one active. Every
change or correction the labels count as missed is listed (``supersede_missed``) for a
judge who sees the memory as it ends (*supersede judged*, ``bench.real_model``).

>>> found_by({"match": [["TypeScript", "TS"], ["work"]]}, "Writes TypeScript at work")
True
>>> found_by({"match": [["Vue"]]}, "Prefers React")
False
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

_CJK_SPACE = re.compile(r"\s+(?=[\u3000-\u9fff\uff00-\uffef])|(?<=[\u3000-\u9fff\uff00-\uffef])\s+")


def _typed(text: str) -> str:
    # "1 月 25 日" and "1月25日" are one date: spaces beside CJK characters are typography.
    return _CJK_SPACE.sub("", text.casefold())


def found_by(expected: Mapping[str, Any], content: str) -> bool:
    """Whether ``content`` says the expected fact: a word of each match group in it
    (spaces beside CJK characters aside).

    >>> found_by({"match": [["1月25"]]}, "已订好 2027 年 1 月 25 日的机票")
    True
    """
    text = _typed(content)
    return all(any(_typed(word) in text for word in group) for group in expected["match"])


def _share(hits: int, total: int) -> float | None:
    """A percentage (the tables keep one decimal), None of nothing."""
    return round(100 * hits / total, 1) if total else None


def _language(text: str) -> str:
    from recallmem.text.words import cjk_share

    return "zh" if cjk_share(text) >= 0.3 else "en"


def _keywords_cross(fact: Any) -> bool:
    """Whether the fact has a keyword in the other language than its content."""
    other = "en" if _language(fact.content) == "zh" else "zh"
    return any(_language(word) == other for word in fact.keywords)


def _due_date(fact: Any, zone: str) -> str | None:
    if fact.valid_until is None:
        return None
    # A local date holds to its last second: valid_until is the next day's midnight.
    return (fact.valid_until.astimezone(ZoneInfo(zone)) - timedelta(seconds=1)).date().isoformat()


def _day_of(conversation: Any) -> dict[str, int]:
    return {m.id: n for n, day in enumerate(conversation.days) for m in day.messages}


def overtaken_in_window(conversation: Any) -> set[str]:
    """Expected facts replaced within the window they were said in ("Thursday, no,
    Friday"): one extraction call reads both, so storing only the replacement is right,
    and so is storing both and superseding the first."""
    day = _day_of(conversation)
    said = {e.id: {day[m] for m in e.said_in if m in day} for e in conversation.expected.facts}
    return {
        link.old for link in conversation.expected.supersedes
        if said[link.old] and said[link.old] <= {min(said[link.new], default=-1)}
    }  # fmt: skip


def _ended(fact: Any, at: datetime) -> bool:
    return fact.valid_until is not None and fact.valid_until <= at


def score_conversation(conversation: Any, facts: Sequence[Any]) -> dict[str, Any]:
    """Counts for one conversation from every fact its memory stored."""
    from recallmem.secrets.detector import find_secret

    end = datetime.fromisoformat(conversation.days[-1].messages[-1].at)

    expected = [e.model_dump() for e in conversation.expected.facts]
    matches = {e["id"]: [f for f in facts if found_by(e, f.content)] for e in expected}
    out: dict[str, Any] = {"expected": len(expected), "stored": len(facts)}
    overtaken = overtaken_in_window(conversation)
    replaced = {link.old: link.new for link in conversation.expected.supersedes}
    # Overtaken in its window and never stored, its replacement stored: right as it is. A
    # replacement that names what it replaced ("Pilates, no longer yoga") is no old fact.
    skipped = {
        old for old in overtaken
        if matches[replaced[old]] and not {f.id for f in matches[old]} - {f.id for f in matches[replaced[old]]}
    }  # fmt: skip
    out["found"] = sum(bool(matches[e["id"]]) or e["id"] in skipped for e in expected)
    # Stored in other words than the labels foresaw ("Runs the Lisbon studio" for "Owns
    # a design studio in Lisbon"): a judge who sees the memory says (*recall judged*).
    out["missed"] = [
        e["content"] for e in expected if not matches[e["id"]] and e["id"] not in skipped
    ]
    out["extra"] = [f.content for f in facts if not any(found_by(e, f.content) for e in expected)]
    out["by_kind"] = {}
    for e in expected:
        kind = out["by_kind"].setdefault(e["kind"], {"n": 0, "found": 0})
        kind["n"] += 1
        kind["found"] += bool(matches[e["id"]]) or e["id"] in skipped
    statuses = [(e, matches[e["id"]]) for e in expected if matches[e["id"]]]
    out["status_right"] = sum(
        any(f.status.value == e["final_status"] for f in m) for e, m in statuses
    )
    out["status_checked"] = len(statuses)
    dated = [(e, m) for e, m in statuses if e["due"]]
    out["due_right"] = sum(
        any(_due_date(f, conversation.timezone) == e["due"] for f in m) for e, m in dated
    )
    out["due_checked"] = len(dated)
    out["supersedes"] = {}
    out["supersede_missed"] = []
    content = {e["id"]: e["content"] for e in expected}
    for link in conversation.expected.supersedes:
        olds, news = matches.get(link.old, []), matches.get(link.new, [])
        new_ids = {n.id for n in news}
        right = link.old in skipped or any(
            # Superseded, or superseded from a day still ahead (it holds until then).
            (o.status.value == "superseded" or o.superseded_by is not None)
            and (o.superseded_by in new_ids or any(n.supersedes == o.id for n in news))
            for o in olds
        )  # fmt: skip
        # Out of recall all the same: every fact saying only the old thing is retired (by
        # a supersede to another of the day's facts, done, or past its date when the
        # conversation ends), and the new one is active.
        stale = [o for o in olds if o.id not in new_ids]
        retired = right or (
            bool(stale) and all(o.status.value != "active" or _ended(o, end) for o in stale)
            and any(n.status.value == "active" for n in news)
        )  # fmt: skip
        if not right:  # the labels cannot settle it ("biking since selling the Civic"): a judge
            out["supersede_missed"].append({"kind": link.kind, "old": content[link.old],
                                             "new": content[link.new]})  # fmt: skip
        tally = out["supersedes"].setdefault(link.kind, {"n": 0, "right": 0, "retired": 0})
        tally["n"] += 1
        tally["right"] += right
        tally["retired"] += retired
    out["traps"] = {}
    for trap in conversation.expected.must_not_store:
        words = [w.casefold() for w in trap.forbidden]
        broken = any(
            any(w in (f.content + " " + " ".join(f.keywords)).casefold() for w in words)
            for f in facts
        )
        tally = out["traps"].setdefault(trap.kind, {"n": 0, "broken": 0})
        tally["n"] += 1
        tally["broken"] += broken
    out["keywords_cross"] = sum(_keywords_cross(f) for f in facts)
    out["secrets"] = sum(find_secret(" ".join([f.content, *f.keywords])) is not None for f in facts)
    return out


def _add(totals: dict[str, Any], part: Mapping[str, Any]) -> None:
    for key, value in part.items():
        if isinstance(value, int):
            totals[key] = totals.get(key, 0) + value
        elif isinstance(value, list):
            totals[key] = totals.get(key, 0) + len(value)
        elif isinstance(value, dict):
            sub = totals.setdefault(key, {})
            for name, counts in value.items():
                inner = sub.setdefault(name, Counter())
                inner.update(counts)


def extraction_table(
    scores: Mapping[str, Mapping[str, Any]], languages: Mapping[str, str]
) -> dict[str, Any]:
    """The figures over conversations, overall and per language."""
    groups: dict[str, dict[str, Any]] = defaultdict(dict)
    for cid, score in scores.items():
        _add(groups["all"], score)
        _add(groups[languages[cid]], score)
    table = {}
    for name, t in groups.items():
        matched = t["stored"] - t["extra"]
        changes = t.get("supersedes", {}).get("change", {})
        corrections = t.get("supersedes", {}).get("correction", {})
        judged = t.get("supersede_judged", {})
        unjudged = t.get("supersede_unjudged", 1)
        table[name] = {
            "conversations": sum(1 for c in scores if name in ("all", languages[c])),
            "expected": t["expected"], "stored": t["stored"],
            "recall": _share(t["found"], t["expected"]),
            "recall judged": None if t.get("missed_unjudged", 1)
                             else _share(t["found"] + t["missed_held"], t["expected"]),
            "precision": _share(matched, t["stored"]),
            # Extras a judge found right count for the model; None until all are judged.
            "precision judged": None if t.get("extra_unjudged", 1)
                                else _share(matched + t["extra_right"], t["stored"]),
            "supersede": _share(changes.get("right", 0), changes.get("n", 0)),
            # Misses a judge found right count for the model; None until all are judged.
            "supersede judged": None if unjudged else _share(
                changes.get("right", 0) + judged.get("change", {}).get("right", 0), changes.get("n", 0)),
            "old retired": _share(changes.get("retired", 0), changes.get("n", 0)),
            "correction": _share(corrections.get("right", 0), corrections.get("n", 0)),
            "correction judged": None if unjudged else _share(
                corrections.get("right", 0) + judged.get("correction", {}).get("right", 0),
                corrections.get("n", 0)),
            "due dates": _share(t["due_right"], t["due_checked"]),
            "final status": _share(t["status_right"], t["status_checked"]),
            "keywords cross": _share(t["keywords_cross"], t["stored"]),
            "secrets": t["secrets"],
            "by_kind": {k: {"n": v["n"], "recall": _share(v["found"], v["n"])}
                        for k, v in sorted(t.get("by_kind", {}).items())},
            "traps": {k: {"n": v["n"], "broken": v["broken"]}
                      for k, v in sorted(t.get("traps", {}).items())},
        }  # fmt: skip
    return table


def planner_table(
    runs: Iterable[Any], group: Callable[[Any], str] = lambda run: run.turn.language
) -> dict[str, dict[str, Any]]:
    """Per turn kind and ``group`` (the turn's language unless said): how often the model
    recalled, and what the middleware did."""
    groups: dict[str, list[Any]] = defaultdict(list)
    for run in runs:
        groups[f"{run.turn.kind} / all"].append(run)
        groups[f"{run.turn.kind} / {group(run)}"].append(run)
    table = {}
    for name in sorted(groups):
        done = [r for r in groups[name] if r.complete]
        judged = [r for r in done if r.uses is not None]
        needing = [r for r in done if r.needed_shown is not None]
        table[name] = {
            "turns": len(groups[name]),
            "replayed": len(done),
            "recall called": _share(sum(r.recalled for r in done), len(done)),
            "cue fetch": _share(sum("recall:cue" in r.notes for r in done), len(done)),
            "forced recall": _share(sum(r.forced for r in done), len(done)),
            "memory reached": _share(sum(r.recalled or bool(set(r.notes) & {"recall:cue", "recall:hedge"})
                                         for r in done), len(done)),
            "needed shown": _share(sum(bool(r.needed_shown) for r in needing),
                                   len(needing)),
            "judged": len(judged),
            "uses the fact": _share(sum(bool(r.uses) for r in judged), len(judged)),
        }  # fmt: skip
    return table
