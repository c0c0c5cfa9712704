"""The agent-loop scenario sets: multi-day, multi-thread, multi-agent conversations, each
user turn annotated with the stored facts a good assistant needs at that turn.

Written blind (by writers who never read the middleware), in ``bench/data/agent_loop/``:
per scenario, one user's stored facts (when said, in which agent's run, whether about
the user or about that agent's own work, superseded or not) and their threads, each turn
with ``needs`` (must be in front of the model), ``relevant`` (fine to show) and
``states`` (new facts the turn states, which a good extractor would store).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

DATA = Path(__file__).parent / "data" / "agent_loop"
SETS = ("loop_a", "loop_b")


@dataclass(frozen=True)
class ScenarioFact:
    id: str
    content: str
    category: str
    said_at: datetime
    agent: str | None  # the agent in whose run it was learned
    about: str  # "user" or "agent"
    pinned: bool = False
    superseded_by: str | None = None


@dataclass(frozen=True)
class Turn:
    id: str
    at: datetime
    user: str
    needs: tuple[str, ...]
    relevant: tuple[str, ...]
    states: tuple[ScenarioFact, ...]


@dataclass(frozen=True)
class Session:
    agent: str | None
    thread: str
    turns: tuple[Turn, ...]


@dataclass(frozen=True)
class Scenario:
    id: str
    language: str
    user_id: str
    timezone: str
    facts: tuple[ScenarioFact, ...]
    sessions: tuple[Session, ...]

    def stated(self) -> dict[str, tuple[ScenarioFact, Session, Turn]]:
        """Facts stated in a turn, by id, with where they were said."""
        return {f.id: (f, s, t) for s in self.sessions for t in s.turns for f in t.states}

    def every_fact(self) -> dict[str, ScenarioFact]:
        return {**{f.id: f for f in self.facts}, **{i: x[0] for i, x in self.stated().items()}}


def _fact(raw: dict[str, object], *, agent: str | None, at: datetime) -> ScenarioFact:
    return ScenarioFact(
        id=str(raw["id"]),
        content=str(raw["content"]).strip(),
        category=str(raw["category"]),
        said_at=datetime.fromisoformat(str(raw["said_at"])) if "said_at" in raw else at,
        agent=raw.get("learned_in_agent", agent),  # type: ignore[arg-type]
        about=str(raw.get("about") or "user"),
        pinned=bool(raw.get("pinned")),
        superseded_by=raw.get("superseded_by") or None,  # type: ignore[arg-type]
    )


def _scenario(raw: dict[str, object]) -> Scenario:
    sessions = []
    for s in raw["sessions"]:  # type: ignore[attr-defined]
        turns = tuple(
            Turn(
                id=str(t["id"]),
                at=(at := datetime.fromisoformat(t["at"])),
                user=str(t["user"]),
                needs=tuple(t.get("needs") or ()),
                relevant=tuple(t.get("relevant") or ()),
                states=tuple(_fact(f, agent=s["agent"], at=at) for f in t.get("states") or ()),
            )
            for t in s["turns"]
        )
        sessions.append(Session(agent=s["agent"], thread=str(s["thread"]), turns=turns))
    scenario = Scenario(
        id=str(raw["id"]),
        language=str(raw["language"]),
        user_id=str(raw["user_id"]),
        timezone=str(raw["timezone"]),
        facts=tuple(_fact(f, agent=None, at=datetime.min) for f in raw["facts"]),  # type: ignore[attr-defined]
        sessions=tuple(sessions),
    )
    _check(scenario)
    return scenario


def _check(scenario: Scenario) -> None:
    known = scenario.every_fact()
    last: datetime | None = None
    for session in scenario.sessions:
        for turn in session.turns:
            missing = [i for i in (*turn.needs, *turn.relevant) if i not in known]
            if missing:
                raise ValueError(f"{scenario.id} {turn.id}: unknown fact ids {missing}")
            if last is not None and turn.at < last:
                raise ValueError(f"{scenario.id} {turn.id}: turns out of time order")
            last = turn.at


def load_scenarios(names: tuple[str, ...] = SETS, data: Path = DATA) -> list[Scenario]:
    """Every scenario of the named sets, checked."""
    found: list[Scenario] = []
    for name in names:
        raw = json.loads((data / f"{name}.json").read_text(encoding="utf-8"))
        found += [_scenario(s) for s in raw["scenarios"]]
    return found
