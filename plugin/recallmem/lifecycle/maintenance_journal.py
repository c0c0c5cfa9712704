"""The maintenance journal: a user's plan, kept durably from before it is applied until after.

It lives in the extraction queue's SQLite file and uses its transactions (the same
``synchronous=FULL`` WAL file that journals extraction plans), in a table of its own:
one row per user with the plan being applied, if any, and when the user was last
maintained. A plan left there by a crash is applied at the user's next maintenance,
before a new plan is made; applying is idempotent (``lifecycle/plan.py``), so nothing
is applied twice.

A row names its user, so erasing the user deletes it (``Backlog.purge``, in the
transaction that records the purge in the forget ledger); a run that began before such
a purge writes no row after it (:meth:`MaintenanceJournal._erased`).
"""

from __future__ import annotations

from recallmem.extraction.window_queue import QueueStore
from recallmem.lifecycle.maintenance_plan import MaintenancePlan

_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS maintenance (user_id TEXT PRIMARY KEY, plan TEXT, last_run REAL, "
    "consolidated_revision TEXT)"
)


class MaintenanceJournal:
    """Plans in flight and the last run per user, in the queue's file."""

    def __init__(self, queue: QueueStore) -> None:
        self.queue = queue
        with queue.tx() as db:
            db.execute(_SCHEMA)

    def _erased(self, user_id: str) -> bool:
        """Whether the user was purged since this run began (ask inside a transaction)."""
        forgets = self.queue.forgets
        return forgets is not None and forgets.forgotten(user_id, purged=True) is not None

    def record(self, plan: MaintenancePlan) -> None:
        """Keep the plan durably; call before applying any of it."""
        with self.queue.tx() as db:
            if self._erased(plan.user_id):
                return
            db.execute(
                "INSERT INTO maintenance (user_id, plan) VALUES (?, ?) "
                "ON CONFLICT (user_id) DO UPDATE SET plan = excluded.plan",
                (plan.user_id, plan.model_dump_json()),
            )

    def pending(self, user_id: str) -> MaintenancePlan | None:
        """The plan a run of this user recorded and did not finish, if any."""
        rows = self.queue.read("SELECT plan FROM maintenance WHERE user_id = ?", (user_id,))
        if not rows or rows[0]["plan"] is None:
            return None
        return MaintenancePlan.model_validate_json(rows[0]["plan"])

    def done(self, user_id: str, at: float) -> None:
        """The user's plan is applied (or there was none): clear it, note the run."""
        with self.queue.tx() as db:
            if self._erased(user_id):
                return
            db.execute(
                "INSERT INTO maintenance (user_id, plan, last_run) VALUES (?, NULL, ?) "
                "ON CONFLICT (user_id) DO UPDATE SET plan = NULL, last_run = excluded.last_run",
                (user_id, at),
            )

    def consolidated_at(self, user_id: str) -> str | None:
        """The user's revision when their memory was last consolidated, if ever."""
        rows = self.queue.read(
            "SELECT consolidated_revision FROM maintenance WHERE user_id = ?", (user_id,)
        )
        return str(rows[0][0]) if rows and rows[0][0] is not None else None

    def note_consolidated(self, user_id: str, revision: str | None) -> None:
        """The user's memory is consolidated as of ``revision``."""
        with self.queue.tx() as db:
            if self._erased(user_id):
                return
            db.execute(
                "INSERT INTO maintenance (user_id, consolidated_revision) VALUES (?, ?) "
                "ON CONFLICT (user_id) DO UPDATE SET "
                "consolidated_revision = excluded.consolidated_revision",
                (user_id, revision),
            )

    def due_users(self, now: float, interval_seconds: float) -> list[str]:
        """Users to maintain now: a plan left unfinished, or a conversation observed since
        their last run and that run at least ``interval_seconds`` ago (or none yet)."""
        rows = self.queue.read(
            "SELECT user_id FROM maintenance WHERE plan IS NOT NULL "
            "UNION SELECT t.user_id FROM threads t LEFT JOIN maintenance m "
            "ON m.user_id = t.user_id GROUP BY t.user_id "
            "HAVING MAX(m.last_run) IS NULL OR (MAX(t.last_observed_at) > MAX(m.last_run) "
            "AND MAX(m.last_run) <= ?)",
            (now - interval_seconds,),
        )
        return sorted(str(r[0]) for r in rows)

    def seconds_until_due(self, now: float, interval_seconds: float) -> float | None:
        """How long until a user observed since their last run falls due, or None."""
        rows = self.queue.read(
            "SELECT MIN(m.last_run) FROM maintenance m JOIN threads t ON t.user_id = m.user_id "
            "WHERE t.last_observed_at > m.last_run"
        )
        last = rows[0][0] if rows else None
        return None if last is None else max(0.0, last + interval_seconds - now)
