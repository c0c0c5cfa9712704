"""Consolidation plans journaled before they are applied: one file per user in the home.

A plan is written whole (store/durable.py) before its first record is
stored, and removed once every record is; a plan left by a crash is applied at the
user's next consolidation without calling the model again. One user is consolidated
by one run at a time (:meth:`JournalFiles.running`). Applying a plan twice
changes nothing (:func:`recallmem.extraction.plan.apply_plan`), so a crash after the
write and before the removal is harmless too.
"""

from __future__ import annotations

import fcntl
import hashlib
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from pydantic import BaseModel, ConfigDict

from recallmem.extraction.plan import Plan
from recallmem.lifecycle.merge_prompt import Unreadable
from recallmem.lifecycle.merge_rules import Refusal
from recallmem.store.durable import write_durably
from recallmem.types import TokenUsage


class MergeJournal(BaseModel):
    """One user's consolidation as decided, before it is applied."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    plan: Plan
    shown: int = 0
    proposed: int = 0
    refused: tuple[Refusal, ...] = ()
    unreadable: tuple[Unreadable, ...] = ()
    usage: TokenUsage = TokenUsage()
    model: str | None = None
    prompt: str | None = None


class JournalFiles:
    """The journal directory, ``<home>/lifecycle/consolidation``."""

    def __init__(self, home: Path) -> None:
        self.directory = Path(home) / "lifecycle" / "consolidation"

    def _path(self, user_id: str) -> Path:
        # User ids may hold characters a file name must not; a digest never does.
        digest = hashlib.sha256(user_id.encode("utf-8")).hexdigest()[:32]
        return self.directory / f"{digest}.json"

    @contextmanager
    def running(self, user_id: str) -> Iterator[None]:
        """Hold the user's run lock: one consolidation of a user at a time, across the
        threads and processes sharing this home (an OS lock, released with its process)."""
        self.directory.mkdir(parents=True, exist_ok=True)
        with self._path(user_id).with_suffix(".lock").open("a") as handle:
            fcntl.flock(handle.fileno(), fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(handle.fileno(), fcntl.LOCK_UN)

    def pending(self, user_id: str) -> MergeJournal | None:
        """The user's journaled plan that was not fully applied, if any."""
        path = self._path(user_id)
        if not path.is_file():
            return None
        journal = MergeJournal.model_validate_json(path.read_text("utf-8"))
        return journal if journal.plan.user_id == user_id else None

    def record(self, journal: MergeJournal) -> None:
        """Write the journal durably before any of its records is stored."""
        self.directory.mkdir(parents=True, exist_ok=True)
        write_durably(self._path(journal.plan.user_id), journal.model_dump_json().encode())

    def done(self, user_id: str) -> None:
        """Forget the user's journal once all of it is stored."""
        self._path(user_id).unlink(missing_ok=True)
