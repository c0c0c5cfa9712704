"""The maintenance run: expire, fade and purge, one user at a time, journaled.

For each user: repair the user's storage (``FactRepository.repair``: facts a crash left
unreadable are written back from their records, nothing lost), finish a plan a crashed
run left in the journal, then plan from the user's facts and ``now`` (pure,
``lifecycle/maintenance_plan.py``), journal the plan, apply it under
the user's lock (records written, old faded facts purged and scrubbed from disk), clear
the journal and emit a ``memory_maintenance`` event. A plan with nothing to do is not
journaled. Running twice at the same ``now`` changes nothing the second time.

Then each user whose memory changed since their last consolidation is consolidated
(``lifecycle/consolidation.py``: with a model, one bounded call and the merge rules;
without one, near-duplicates only); the consolidation journals its own plan. The
user's revision after it is noted, so a second run at the same ``now`` calls no model
and merges nothing. Last, with a model, the user's facts without search keys are keyed
(``lifecycle/keying.py``), at most ``keying_max_facts`` in the whole run.
"""

from __future__ import annotations

import logging
import sqlite3
import time
from collections.abc import Callable, Sequence
from datetime import datetime
from typing import TYPE_CHECKING

from langchain_core.language_models import BaseChatModel
from pydantic import BaseModel, ConfigDict

from recallmem.config import MemoryConfig
from recallmem.errors import (
    ForgottenMeanwhileError,
    QueueUnavailableError,
    StoreError,
)
from recallmem.events import MaintenanceEvent, log_event
from recallmem.extraction.window_queue import QueueStore, Timing
from recallmem.extraction.worker import Worker
from recallmem.facts.decay import Decay
from recallmem.facts.validation import check_flag, check_integer, require_user
from recallmem.lifecycle.consolidation import consolidate
from recallmem.lifecycle.keying import Keyer, KeyingReport, keying_usage
from recallmem.lifecycle.maintenance_journal import MaintenanceJournal
from recallmem.lifecycle.maintenance_plan import (
    MaintenancePlan,
    Purge,
    apply_maintenance,
    plan_maintenance,
)
from recallmem.limits import MAX_CONTENT_CHARS, check_maintain_now
from recallmem.persistence.forget_ledger import ForgetLedger, work_began
from recallmem.types import Fact, Status, UtcDatetime, utcnow

if TYPE_CHECKING:
    from recallmem.persistence.repository import FactRepository

log = logging.getLogger("recallmem.lifecycle")


Consolidate = Callable[[str, datetime], Sequence[str]]  # a user's merged fact ids


class Unconsolidated(BaseModel):
    """A user whose consolidation failed in a run, and the error, as it read."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    user_id: str
    error: str


class MaintenanceReport(BaseModel):
    """What one maintenance run changed, by fact id.

    ``consolidated`` lists the facts the run's consolidation made, each the merge of
    facts it superseded (``Fact.merged_from``). ``unconsolidated`` names each user whose
    consolidation failed (a model that timed out or answered nonsense) and why: their
    expiry, fading and purges were applied, the other users were maintained, and their
    consolidation is tried again at the next run.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    at: UtcDatetime
    users: tuple[str, ...] = ()
    expired: tuple[str, ...] = ()
    faded: tuple[str, ...] = ()
    purged: tuple[str, ...] = ()
    consolidated: tuple[str, ...] = ()
    keyed: tuple[str, ...] = ()  # facts the keying step gave search keys (lifecycle/keying.py)
    repaired: tuple[str, ...] = ()  # users whose facts were written back by a repair
    unconsolidated: tuple[Unconsolidated, ...] = ()
    replayed: int = 0
    seconds: float = 0.0

    def counts(self) -> dict[str, int]:
        """How many facts each step changed."""
        return {
            "expired": len(self.expired),
            "faded": len(self.faded),
            "purged": len(self.purged),
            "consolidated": len(self.consolidated),
            "keyed": len(self.keyed),
        }

    def merge(self, other: MaintenanceReport) -> MaintenanceReport:
        """This report and another of the same run, as one."""
        return self.model_copy(
            update={
                "users": self.users + other.users,
                "expired": self.expired + other.expired,
                "faded": self.faded + other.faded,
                "purged": self.purged + other.purged,
                "consolidated": self.consolidated + other.consolidated,
                "keyed": self.keyed + other.keyed,
                "repaired": self.repaired + other.repaired,
                "unconsolidated": self.unconsolidated + other.unconsolidated,
                "replayed": self.replayed + other.replayed,
                "seconds": self.seconds + other.seconds,
            }
        )


class Maintainer:
    """Runs maintenance over a store, journaling each user's plan."""

    def __init__(
        self,
        facts: FactRepository,
        journal: MaintenanceJournal,
        config: MemoryConfig,
        consolidate: Consolidate | None = None,
        keyer: Keyer | None = None,
    ) -> None:
        self.facts, self.journal, self._consolidate = facts, journal, consolidate
        self.keyer, self.keying_budget = keyer, config.keying_max_facts
        self.decay = Decay.from_config(config)
        self.retention_days = config.faded_retention_days
        self.interval_seconds = config.maintenance_interval_hours * 3600.0
        self._worker = Worker(lambda: bool(self.run_due().users), self.seconds_until_due)

    def maintain(
        self,
        *,
        now: datetime | None = None,
        user_id: str | None = None,
        simulated_clock: bool = False,
    ) -> MaintenanceReport:
        """Maintain one user (every user who has facts stored, if None) as of ``now``:
        within a day of the real clock unless ``simulated_clock`` (``limits.MAINTAIN_SKEW``;
        the entry point of the library, the CLI and the HTTP API, so none can fade and
        purge a memory with a far-future ``now``)."""
        clock = utcnow()
        simulated = check_flag(simulated_clock, "simulated_clock")
        at = clock if now is None else check_maintain_now(now, clock=clock, simulated=simulated)
        users = None if user_id is None else [require_user(user_id)]
        return self._run(at, users)

    def _run(self, now: datetime, users: Sequence[str] | None) -> MaintenanceReport:
        # Purged bytes (and the old files of repaired facts) are scrubbed once for the
        # whole run (scrubbing rewrites Chroma's files); also after a failure, and after
        # replaying a plan that purged, since a crash may have come between its purge
        # and its scrub.
        report, dirty = MaintenanceReport(at=now), False
        budget = self.keying_budget  # facts the run may key, all its users together
        try:
            for user_id in self.facts.users() if users is None else users:
                try:
                    with work_began(user_id=user_id):
                        step, replayed_purge = self._user(user_id, now)
                        if self.keyer is not None and budget > 0:
                            keyed = self.keyer.run([user_id], budget)
                            budget -= len(keyed.keyed) + len(keyed.declined)
                            step = step.model_copy(update={"keyed": keyed.keyed})
                except ForgottenMeanwhileError as exc:  # its writes were refused: nothing left
                    log.info("recallmem: maintenance of user %r stopped: %s", user_id, exc)
                    continue
                report = report.merge(step)
                dirty = dirty or replayed_purge or bool(step.purged or step.repaired)
        except BaseException:
            dirty = True
            raise
        finally:
            if dirty:
                started = time.perf_counter()
                self.facts.scrub()
                report = report.model_copy(
                    update={"seconds": report.seconds + time.perf_counter() - started}
                )
        return report

    def rekey(self, user_id: str | None, budget: int | None) -> KeyingReport:
        """Key the facts without search keys of one user (every user if None), at most
        ``budget`` (``keying_max_facts`` if None); nothing without a model."""
        users = None if user_id is None else [require_user(user_id)]
        budget = self.keying_budget if budget is None else check_integer(budget, "max_facts", 0)
        if self.keyer is None or not budget:
            return KeyingReport()
        return self.keyer.run(self.facts.users() if users is None else users, budget)

    def run_due(self, now: datetime | None = None) -> MaintenanceReport:
        """Maintain the users that are due (see ``MaintenanceJournal.due_users``)."""
        now = now or utcnow()
        due = self.journal.due_users(now.timestamp(), self.interval_seconds)
        return self._run(now, due)

    def seconds_until_due(self) -> float | None:
        """How long the background worker may sleep before a user falls due."""
        return self.journal.seconds_until_due(time.time(), self.interval_seconds)

    def start_background(self) -> None:
        """Maintain each active user about once per ``maintenance_interval_hours``."""
        self._worker.poke()

    def close(self, timeout: float) -> bool:
        """Stop the background run after its current user and close the journal's file;
        True if the run stopped in time (the file is then closed)."""
        stopped = self._worker.stop(timeout)
        if stopped:
            self.journal.queue.close()
        return stopped

    def _user(self, user_id: str, now: datetime) -> tuple[MaintenanceReport, bool]:
        started = time.perf_counter()
        report = MaintenanceReport(at=now, users=(user_id,))
        if self.facts.repair(user_id):
            report = report.model_copy(update={"repaired": (user_id,)})
        left = self.journal.pending(user_id)
        if left is not None:  # a run crashed between journal and done: finish it first
            report = report.merge(self._apply(left, replayed=True))
        plan = plan_maintenance(
            self.facts.facts(user_id), now, self.decay, retention_days=self.retention_days
        )
        if plan.operations:
            self.journal.record(plan)
            report = report.merge(self._apply(plan, replayed=False))
        self.journal.done(user_id, now.timestamp())
        report = report.merge(self._consolidated(user_id, now))
        report = report.model_copy(
            update={"users": (user_id,), "seconds": time.perf_counter() - started}
        )
        return report, left is not None and bool(left.ids(Purge))

    def _consolidated(self, user_id: str, now: datetime) -> MaintenanceReport:
        revision = self.facts.revision(user_id)
        if self._consolidate is None or revision == self.journal.consolidated_at(user_id):
            return MaintenanceReport(at=now)
        try:
            merged = tuple(self._consolidate(user_id, now))
        except Exception as exc:  # one user's model trouble must not stop the run
            error = f"{type(exc).__name__}: {exc}"[:MAX_CONTENT_CHARS]
            log.warning("recallmem: consolidating user %r failed, tried again at the next "
                        "run: %s", user_id, error)  # fmt: skip
            failed = Unconsolidated(user_id=user_id, error=error)
            return MaintenanceReport(at=now, unconsolidated=(failed,))
        self.journal.note_consolidated(user_id, self.facts.revision(user_id))
        return MaintenanceReport(at=now, consolidated=merged)

    def _apply(self, plan: MaintenancePlan, *, replayed: bool) -> MaintenanceReport:
        def change(facts: list[Fact]) -> tuple[list[Fact], list[str]]:
            return apply_maintenance(plan, {f.id: f for f in facts})

        records, purged = self.facts.revise(plan.user_id, change, scrub=False)
        expired = tuple(r.id for r in records if r.status is Status.EXPIRED)
        faded = tuple(r.id for r in records if r.status is Status.FADED)
        if records or purged:
            log_event(MaintenanceEvent(user_id=plan.user_id, expired=expired, faded=faded,
                                       purged=tuple(purged), replayed=replayed))  # fmt: skip
        return MaintenanceReport(
            at=plan.at, expired=expired, faded=faded, purged=tuple(purged), replayed=int(replayed)
        )


def open_maintainer(
    facts: FactRepository, config: MemoryConfig, model: BaseChatModel | None
) -> Maintainer:
    """A maintainer journaling in the extraction queue's file, on a connection of its own
    (maintenance needs none of the extraction pipeline's prompts or signals), that
    consolidates with ``model`` (near-duplicates only if None); a queue file that cannot
    be read raises QueueUnavailableError, saying what to do."""

    def consolidate_user(user_id: str, now: datetime) -> list[str]:
        run = consolidate(facts, model, config, user_id=user_id, agent_id=None, now=now)
        return [merge.fact.id for merge in run.merges]

    try:
        queue = QueueStore(config.queue_path, Timing.from_config(config),
                           forgets=ForgetLedger.of(config.home))  # fmt: skip
        keyer = (
            None if model is None else Keyer(facts, model, config, keying_usage(queue.log_usage))
        )
        return Maintainer(facts, MaintenanceJournal(queue), config, consolidate_user, keyer)
    except (StoreError, sqlite3.DatabaseError) as exc:
        raise QueueUnavailableError(config.queue_path, exc) from exc
