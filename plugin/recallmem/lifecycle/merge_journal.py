"""Consolidation plans journaled before they are applied: one file per user in the home.

A plan is written whole (durability/whole_files.py) before its first record is
stored, and removed once every record is; a plan left by a crash is applied at the
user's next consolidation without calling the model again. One user is consolidated
by one run at a time (:meth:`JournalFiles.running`). Applying a plan twice
changes nothing (:func:`recallmem.extraction.write_plan.apply_plan`), so a crash after the
write and before the removal is harmless too.

A plan holds the text of the merged fact and of every part (its history), so a purge
rewrites it first (:meth:`JournalFiles.forget`): erasing a user removes the file, and
purging facts drops the merges and refusals that name them.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
from collections.abc import Collection, Iterator
from contextlib import contextmanager
from pathlib import Path

from pydantic import BaseModel, ConfigDict

from recallmem.durability.whole_files import sync_directory, write_durably
from recallmem.extraction.write_plan import Add, Operation, Plan, Supersede
from recallmem.lifecycle.merge_prompt import Unreadable
from recallmem.lifecycle.merge_rules import Refusal
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
        with contextlib.suppress(OSError):
            sync_directory(self.directory)

    def forget(self, user_id: str, ids: Collection[str] | None) -> None:
        """Before a purge: drop what the user's pending plan holds of the facts ``ids``
        (None: the whole user, whose plan is removed). A merge naming a purged fact
        goes whole, with its superseding of the parts; the unreadable proposals (the
        model's words) go too, as they may quote any fact. Takes no run lock: a
        consolidation holds it while writing through the purge's own user lock."""
        try:  # the run lock file holds no text and may be held: it stays
            journal = None if ids is None else self.pending(user_id)
        except ValueError:  # unreadable: it could never be replayed either
            journal = None
        if journal is None or ids is None:
            self.done(user_id)
            return
        gone = set(ids)
        merges = {op.fact.id for op in journal.plan.operations if isinstance(op, Add)
                  and (op.fact.id in gone or gone.intersection(op.fact.merged_from))}  # fmt: skip
        operations = tuple(op for op in journal.plan.operations
                           if not _touches(op, gone, merges))  # fmt: skip
        refused = tuple(r for r in journal.refused if not gone.intersection(r.ids))
        changed = (operations, refused) != (journal.plan.operations, journal.refused)
        if not operations:
            self.done(user_id)
        elif changed or journal.unreadable:
            plan = journal.plan.model_copy(update={"operations": operations})
            self.record(journal.model_copy(update={"plan": plan, "refused": refused,
                                                   "unreadable": ()}))  # fmt: skip


def _touches(op: Operation, purged: set[str], merges: set[str]) -> bool:
    """Whether a plan's step adds one of the dropped ``merges``, supersedes a part in
    favour of one, or names a ``purged`` fact."""
    if isinstance(op, Add):
        return op.fact.id in merges
    return op.fact_id in purged or (isinstance(op, Supersede) and op.by in merges)
