"""Imports written all or nothing: recorded as an intent first, completed after a crash.

An import's validated rows and their vectors are journaled (:mod:`recallmem.store.intents`)
before the first write; the intent is removed once every row is in the store. One that a
crash or a failure left behind is applied again when the repository next opens: rows are
written by id, so applying twice writes nothing twice.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from typing import Protocol

import numpy as np

from recallmem.errors import DiskFullError, StoreError
from recallmem.store.failures import is_disk_full
from recallmem.store.intents import Intent, IntentLog
from recallmem.types import Fact, Profile

log = logging.getLogger("recallmem.store")


class ImportTarget(Protocol):
    """What an import writes through (``FactRepository`` provides it)."""

    intents: IntentLog

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Unit vectors for ``texts``."""
        ...

    def write_user(self, user_id: str, facts: Sequence[Fact], vectors: np.ndarray) -> None:
        """Write whole records with their vectors under the user's lock."""
        ...

    def save_profile(self, profile: Profile) -> None:
        """Replace a profile."""
        ...


class ImportWriter:
    """Writes imports through ``target``, journaled as intents."""

    def __init__(self, target: ImportTarget) -> None:
        self.target = target
        self.intents = target.intents

    def write(
        self,
        facts: Sequence[Fact],
        profiles: Sequence[Profile],
        *,
        first: Callable[[], None] | None = None,
    ) -> None:
        """Write every row, or raise StoreError naming where the unfinished import is kept.
        ``first`` runs once the rows are journaled, before any is written (a rebuild drops
        the old collection there: from then on the journal holds the only copy)."""
        vectors = (
            self.target.embed([f.content for f in facts]) if facts else np.zeros((0, 1), np.float32)
        )
        try:
            intent = self.intents.record(facts, vectors, profiles)
        except OSError as exc:
            error = DiskFullError if is_disk_full(exc) else StoreError
            raise error(
                f"{'disk full: ' if error is DiskFullError else ''}could not record the "
                f"import in {self.intents.directory}: {exc}. Nothing was written."
            ) from exc
        with self.intents.claimed(intent.path):
            try:
                if first is not None:
                    first()
                self._apply(intent)
            except StoreError as exc:
                error = DiskFullError if isinstance(exc, DiskFullError) else StoreError
                raise error(
                    f"the import stopped after writing part of it: {exc} It is kept at "
                    f"{intent.path} and completed when the memory is next opened (or run "
                    "the same import again: rows are written by id, never twice)."
                ) from exc
            self.intents.done(intent)

    def _apply(self, intent: Intent) -> None:
        rows_of: dict[str, list[int]] = {}
        for row, fact in enumerate(intent.facts):
            rows_of.setdefault(fact.user_id, []).append(row)
        for user_id, rows in rows_of.items():
            self.target.write_user(user_id, [intent.facts[r] for r in rows], intent.vectors[rows])
        for profile in intent.profiles:
            self.target.save_profile(profile)

    def recover(self) -> int:
        """Complete the imports left unfinished; returns the rows written. One that still
        fails stays for the next open (and is logged)."""
        written = 0
        for path in self.intents.pending():
            with self.intents.claimed(path) as mine:
                if not mine:
                    continue  # another process is applying it right now
                try:
                    intent = self.intents.load(path)
                    self._apply(intent)
                except (OSError, ValueError, StoreError) as exc:
                    log.error("recallmem: an unfinished import at %s failed again: %s; it "
                              "is retried at the next open", path, exc)  # fmt: skip
                    continue
                self.intents.done(intent)
            log.warning("recallmem: completed an import a crash interrupted: %d fact(s), "
                        "%d profile(s)", len(intent.facts), len(intent.profiles))  # fmt: skip
            written += len(intent.facts)
        return written
