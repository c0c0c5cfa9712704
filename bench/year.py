"""A simulated year of daily use: memory size over time, nothing kept lost, expiry on time.

Each simulated day, each user says a few things in a new thread: facts said once and
never again (this week's project, a tool just learned, a habit), facts re-confirmed
every few weeks, todos with a due date and trips with an end date; pinned facts are
written on day one. The turns go through the real queue (``observe`` then ``flush``),
the extraction chain with :class:`~recallmem.testing.FakeChatModel` replying as a model
would, hygiene and Chroma; once a day the background worker's step
(``Maintainer.run_due``) maintains every user who talked. Time is simulated: the queue
runs on a clock the benchmark moves, and recalls are made at simulated instants through
the user's hot index (the code ``Memory.recall`` runs, with ``now`` given).

Checks: no pinned or re-confirmed fact leaves ``active``; every time-bound fact is
recalled a second before its ``valid_until`` and not a second after, on its day, before
any maintenance run. Measured: facts stored by status each day (plotted), and the
seconds a daily maintenance run took per user maintained (a run that purges scrubs
Chroma's files once, for all its users).

``python -m bench year [--quick]`` writes its section of docs/benchmarks.md,
bench/results/year.json and docs/img/bench_year.png.
"""

from __future__ import annotations

import json
import re
import statistics
import tempfile
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any

from langchain_core.messages import BaseMessage

from bench.report import IMAGES_DIR, machine_note, markdown_table, save_results, write_section

DAY = timedelta(days=1)
START = datetime(2027, 1, 4, tzinfo=UTC)  # a Monday
STEP_HOUR = 12  # users talk and maintenance runs at noon UTC
_SAID = re.compile(r"^\[(m\d+)\] user: (.*)$", re.MULTILINE)
_SHOWN = re.compile(r"^\[(F\d+)\] \(\w+\) (.*)$", re.MULTILINE)  # a keying request's facts
CITIES = ("Tokyo", "Lisbon", "Nairobi", "Oslo", "Lima", "Hanoi", "Quito", "Perth")


class Clock:
    """The simulated time the queue reads."""

    def __init__(self, at: datetime) -> None:
        self.at = at

    def __call__(self) -> float:
        return self.at.timestamp()


@dataclass
class Script:
    """What each user message means: the fact a careful model would extract from it."""

    facts: dict[str, dict[str, Any]] = field(default_factory=dict)

    def say(self, text: str, content: str, category: str, until: date | None = None) -> str:
        spec = {"content": content, "category": category, "confidence": 0.9, "evidence": text}
        if until is not None:
            spec["valid_until"] = until.isoformat()
        self.facts[text] = spec
        return text

    def reply(self, messages: list[BaseMessage]) -> str:
        """The extraction model's answer for a window: one fact per scripted message; or
        the keying model's, for the maintenance runs' keying step: one question a fact."""
        if "<facts>" in messages[-1].text:
            shown = _SHOWN.findall(messages[-1].text)
            return json.dumps({"keys": [{"id": ref, "questions": [f"What about: {text}?"]}
                                        for ref, text in shown]})  # fmt: skip
        facts = [
            {**self.facts[text], "message_ids": [ref]}
            for ref, text in _SAID.findall(messages[-1].text)
            if text in self.facts
        ]
        return json.dumps({"facts": facts, "supersede": [], "confirmed": [], "todos_done": [],
                           "profile": {}})  # fmt: skip


@dataclass
class Dated:
    """A time-bound fact to check on its day."""

    user: str
    content: str
    until: datetime


def _day_of(user: int, day: int, when: datetime, script: Script) -> tuple[list[str], list[Dated]]:
    """The user's messages of one day, and the time-bound facts they state."""
    said: list[str] = []
    dated: list[Dated] = []
    today = when.date()
    if day == 0:
        said.append(script.say(f"I work as a data engineer at Northwind, user {user}.",
                               f"Works as a data engineer at Northwind (user {user})", "identity"))  # fmt: skip
    if day % 21 == 0:  # re-confirmed every three weeks
        said.append(script.say("Please always write my reports in Chinese.",
                               "Prefers reports written in Chinese", "preference"))  # fmt: skip
    if day % 30 == 0:
        said.append(script.say("I review pull requests on Friday mornings.",
                               "Reviews pull requests on Friday mornings", "behavior"))  # fmt: skip
    if day % 2 == 0:  # said once, never again
        said.append(script.say(f"This week I am on the migration of service {day}.",
                               f"Working on the migration of service {day} this week", "context"))  # fmt: skip
    if day % 3 == 0:
        said.append(script.say(f"I just learned the query tool number {day}.",
                               f"Knows the query tool number {day}", "knowledge"))  # fmt: skip
    if day % 7 == 3:
        due = today + timedelta(days=4)
        text = script.say(f"I need to file expense report {day} by {due.isoformat()}.",
                          f"Needs to file expense report {day} by {due.isoformat()}", "todo", due)  # fmt: skip
        said.append(text)
        dated.append(Dated(f"u{user}", script.facts[text]["content"], _end_of(due)))
    if day % 30 == 10:
        city, back = CITIES[(day // 30) % len(CITIES)], today + timedelta(days=5)
        text = script.say(f"I am travelling to {city} until {back.isoformat()}.",
                          f"Is travelling to {city} until {back.isoformat()}", "context", back)  # fmt: skip
        said.append(text)
        dated.append(Dated(f"u{user}", script.facts[text]["content"], _end_of(back)))
    return said, dated


def _end_of(day: date) -> datetime:
    return datetime.combine(day + DAY, datetime.min.time(), UTC)


@dataclass
class Year:
    """A memory, its simulated clock and what the run observed."""

    home: Path
    users: int
    days: int
    sizes: list[dict[str, int]] = field(default_factory=list)
    costs: list[float] = field(default_factory=list)
    purging_costs: list[float] = field(default_factory=list)
    on_time: int = 0
    late: list[str] = field(default_factory=list)
    lost: list[str] = field(default_factory=list)
    kept_ids: set[str] = field(default_factory=set)


def _open(home: Path, clock: Clock, script: Script) -> Any:
    from recallmem import Memory, MemoryConfig
    from recallmem.extraction.pipeline import ExtractionPipeline
    from recallmem.testing import FakeChatModel, HashingEmbeddings

    model = FakeChatModel(responses=[script.reply], cycle=True, model_name="scripted")
    memory = Memory(MemoryConfig(home=home), embeddings=HashingEmbeddings(), model=model)
    # The pipeline Memory would build, on the simulated clock (the bench's only change).
    memory._extracting.__dict__["pipeline"] = ExtractionPipeline(
        memory.repository, model, memory.config, clock=clock, background=False
    )
    return memory


def recalled_at(memory: Any, user: str, text: str, now: datetime, k: int = 3) -> list[str]:
    """What ``Memory.recall(text, user_id=user, k=k)`` returns at the simulated ``now``."""
    from recallmem.facts.decay import Decay
    from recallmem.retrieval.index import Query

    index = memory.repository.index(user)
    decay = Decay.from_config(memory.config)
    query = Query(text=text, vector=memory.repository.embed_query(text), k=k, decay=decay)
    hits = index.search(query, memory.weights, now)
    memory.repository.accessed(index, [h.fact.id for h in hits], now)
    return [h.fact.content for h in hits]


def _check_dated(memory: Any, year: Year, due: Sequence[Dated]) -> None:
    second = timedelta(seconds=1)
    for item in due:
        before = item.content in recalled_at(memory, item.user, item.content, item.until - second)
        after = item.content in recalled_at(memory, item.user, item.content, item.until + second)
        if before and not after:
            year.on_time += 1
        else:
            year.late.append(f"{item.content} (before: {before}, after: {after})")


def _census(memory: Any, users: int, day: int) -> dict[str, int]:
    counts: Counter[str] = Counter()
    for u in range(users):
        counts.update(f.status.value for f in memory.repository.facts(f"u{u}"))
    return {"day": day, "stored": sum(counts.values()), **counts}


def _kept(memory: Any, year: Year, users: int) -> None:
    """Pinned and re-confirmed facts must still be active."""
    for u in range(users):
        for fact in memory.repository.facts(f"u{u}"):
            if fact.pinned or fact.confirmations >= 1:
                year.kept_ids.add(fact.id)
            if fact.id in year.kept_ids and fact.status.value != "active":
                year.lost.append(f"{fact.content}: {fact.status.value}")


def simulate(users: int, days: int, home: Path) -> Year:
    """Run the year; returns what it observed."""
    clock, script = Clock(START + timedelta(hours=STEP_HOUR)), Script()
    memory = _open(home, clock, script)
    year = Year(home=home, users=users, days=days)
    pending: list[Dated] = []
    try:
        for u in range(users):
            memory.remember("Allergic to peanuts", user_id=f"u{u}", category="identity",
                            pinned=True)  # fmt: skip
        for day in range(days):
            clock.at = START + day * DAY + timedelta(hours=STEP_HOUR)
            for u in range(users):
                said, dated = _day_of(u, day, clock.at, script)
                messages = [{"role": "user", "content": text} for text in said]
                memory.observe(messages, user_id=f"u{u}", thread_id=f"day-{day}")
                pending += dated
            memory.flush()
            for u in range(users):  # the day's one recall, which touches what it returns
                recalled_at(memory, f"u{u}", "what am I working on this week", clock.at)
            due = [d for d in pending if d.until <= clock.at + DAY]
            pending = [d for d in pending if d not in due]
            _check_dated(memory, year, due)  # before the maintenance run that marks them
            report = memory.lifecycle.run_due(clock.at)  # the background worker's step
            per_user = report.seconds / max(1, len(report.users))
            (year.purging_costs if report.purged else year.costs).append(per_user)
            year.sizes.append(_census(memory, users, day))
            _kept(memory, year, users)
    finally:
        memory.close()
    return year


def _quantiles(values: Sequence[float]) -> dict[str, float]:
    if not values:
        return {"runs": 0, "p50_ms": 0.0, "p95_ms": 0.0, "max_ms": 0.0}
    ordered = sorted(values)
    p95 = ordered[min(len(ordered) - 1, int(0.95 * len(ordered)))]
    return {"runs": len(values), "p50_ms": 1000 * statistics.median(ordered),
            "p95_ms": 1000 * p95, "max_ms": 1000 * ordered[-1]}  # fmt: skip


def _figure(sizes: Sequence[dict[str, int]], path: Path) -> Path:
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6.5, 3.6))
    days = [s["day"] for s in sizes]
    for status in ("stored", "active", "faded", "expired"):
        ax.plot(days, [s.get(status, 0) for s in sizes], label=status)
    ax.set_xlabel("simulated day")
    ax.set_ylabel("facts (all users)")
    ax.set_title("A year of daily use: facts stored by status")
    ax.legend(fontsize=7)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def year(quick: bool = False, write: bool = True) -> dict[str, Any]:
    """Simulate 365 days for 3 users (``quick``: 40 days, 1 user) and report."""
    users, days = (1, 40) if quick else (3, 365)
    started = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        run = simulate(users, days, Path(tmp) / "home")
    wall = time.perf_counter() - started
    peak = max(run.sizes, key=lambda s: s["stored"])
    results = {
        "users": users, "days": days, "wall_seconds": round(wall, 1),
        "sizes": run.sizes, "peak": peak, "final": run.sizes[-1],
        "maintenance": _quantiles(run.costs), "maintenance_purging": _quantiles(run.purging_costs),
        "time_bound_on_time": run.on_time, "time_bound_late": run.late,
        "kept_facts": len(run.kept_ids), "kept_lost": run.lost,
    }  # fmt: skip
    rows = [
        ["facts stored at the end (all users)", run.sizes[-1]["stored"]],
        ["of which active / faded / expired", "{} / {} / {}".format(
            *(run.sizes[-1].get(s, 0) for s in ("active", "faded", "expired")))],
        ["peak stored (day)", f"{peak['stored']} (day {peak['day']})"],
        ["pinned or re-confirmed facts kept active", f"{len(run.kept_ids) - len(set(run.lost))}"
                                                     f" of {len(run.kept_ids)}"],
        ["time-bound facts out of recall on their day", f"{run.on_time} of "
                                                        f"{run.on_time + len(run.late)}"],
        ["maintenance per user per run, p50 / p95 (no purge)",
         "{p50_ms:.1f} / {p95_ms:.1f} ms ({runs} runs)".format(**results["maintenance"])],
        ["maintenance runs that purged, p50 / max",
         "{p50_ms:.0f} / {max_ms:.0f} ms ({runs} runs)".format(**results["maintenance_purging"])],
        ["wall time of the simulation", f"{wall:.0f} s"],
    ]  # fmt: skip
    table = markdown_table(["measure", "value"], rows)
    print(table)
    if write:
        save_results("year", results)
        image = _figure(run.sizes, IMAGES_DIR / "bench_year.png")
        body = (
            f"## A year of daily use (`python -m bench year`)\n\n"
            f"{users} users, {days} simulated days through the real queue, extraction chain "
            "(scripted model), hygiene, Chroma and the daily maintenance step; defaults "
            "(`decay_half_life_days` 180, `fade_below` 0.3, `faded_retention_days` 90). "
            "Each day a user says a context fact (every other day) and a knowledge fact "
            "(every third) once and never again, re-confirms a preference every 21 days "
            "and a habit every 30, gets a todo due in four days each week and a five-day "
            "trip each month; one fact is pinned on day one. Maintenance cost is a daily "
            "run's time divided by the users it maintained; a run that purges also "
            "scrubs Chroma's files once (a child process), which is most of what it costs.\n\n"
            f"{table}\n\n![Facts stored by status over the year](img/{image.name})\n\n"
            "Context facts said once fade after about seven weeks and are purged 90 days "
            "later, so the faded line levels off; what still grows is expired facts (kept "
            "for audit) and knowledge facts said once (a 360-day half-life: they fade after "
            "about 19 months, past the end of the year).\n\n"
            f"{machine_note()} The machine was shared with other jobs: latencies are noisy.\n"
        )
        write_section("year", body)
    return results
