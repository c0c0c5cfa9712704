"""Imports written all or nothing: recorded as an intent first, completed after a crash.

An import's validated rows and their vectors are journaled
(:mod:`recallmem.durability.intents`) before the first write; the intent is removed once
every row is in the store. One that a crash or a failure left behind is applied again when
the repository next opens: rows are written by id, so applying twice writes nothing twice.

The vectors are the export's own where it carried them for this store's embedder (the facts
are not embedded again), the embedder's otherwise. Rows are written in batches of many users
at once (one directory write and one claim of revision numbers per batch,
:meth:`~recallmem.store.fact_store.FactWrites.record_writes`), since an import's cost is
mostly the store's per-call cost, which per user would be paid a thousand times for a
thousand users.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING

import numpy as np

from recallmem.durability.intents import Intent
from recallmem.durability.whole_files import is_disk_full
from recallmem.embedders.vectors import normalize_rows
from recallmem.errors import DiskFullError, ForgottenMeanwhileError, StoreError
from recallmem.facts.fact_vectors import fact_vectors
from recallmem.persistence.forget_ledger import Forget
from recallmem.types import Fact, Profile

if TYPE_CHECKING:  # the repository calls this module
    from recallmem.persistence.repository import FactRepository

log = logging.getLogger("recallmem.store")
Carried = Mapping[str, bytes]  # fact id -> the vector an export carried (float32, little-endian)
_BATCH = 2000  # facts written per batch, of as many users as they hold


class ImportWriter:
    """Writes imports through ``target``, journaled as intents."""

    def __init__(self, target: FactRepository) -> None:
        self.target = target
        self.intents = target.intents

    def write(
        self,
        facts: Sequence[Fact],
        profiles: Sequence[Profile],
        carried: Carried | None = None,
        *,
        first: Callable[[], None] | None = None,
    ) -> None:
        """Write every row, or raise StoreError naming where the unfinished import is kept;
        ``carried`` vectors are written as they are, the other facts embedded. ``first``
        runs once the rows are journaled, before any is written (a rebuild drops the old
        collection there: from then on the journal holds the only copy)."""
        vectors = self._vectors(facts, carried or {})
        try:
            intent = self.intents.record(facts, vectors, profiles)
        except OSError as exc:
            error = DiskFullError if is_disk_full(exc) else StoreError
            raise error(
                f"{'disk full: ' if error is DiskFullError else ''}could not record the "
                f"import in {self.intents.directory}: {exc}. Nothing was written."
            ) from exc
        try:
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
        except ForgottenMeanwhileError as exc:
            # What was forgotten leaves the journal, or completing it would write it back;
            # the other rows are completed at the next open.
            if isinstance(forget := exc.forget, Forget):
                self.intents.drop_rows(forget.user_id, lambda f: not forget.covers_fact(f),
                                       profiles=forget.whole)  # fmt: skip
            raise

    def _vectors(self, facts: Sequence[Fact], carried: Carried) -> np.ndarray:
        """The facts' vectors: those carried, as unit rows, and the others embedded."""
        if not facts:
            return np.zeros((0, 1), np.float32)
        missing = [row for row, f in enumerate(facts) if f.id not in carried]
        embedded = fact_vectors(self.target.embed, [facts[r] for r in missing]) if missing else None
        if len(missing) == len(facts):
            return embedded  # type: ignore[return-value]
        kept = [row for row, f in enumerate(facts) if f.id in carried]
        joined = b"".join(carried[facts[r].id] for r in kept)
        given = _unit(np.frombuffer(joined, dtype="<f4").reshape(len(kept), -1))
        self.target.store.check_dimension(given.shape[1])  # before anything is recorded
        if embedded is not None and embedded.shape[1] != given.shape[1]:
            raise ValueError(
                f"the export's vectors have {given.shape[1]} dimensions, the embedder's "
                f"{embedded.shape[1]}; remove 'embeddings' from the file to embed every fact"
            )
        vectors = np.empty((len(facts), given.shape[1]), np.float32)
        vectors[kept] = given
        if embedded is not None:
            vectors[missing] = embedded
        return vectors

    def _apply(self, intent: Intent) -> None:
        # Users in turn, batches of many of them, so each batch is a few Chroma calls.
        order = sorted(range(len(intent.facts)), key=lambda row: intent.facts[row].user_id)
        for start in range(0, len(order), _BATCH):
            rows = order[start : start + _BATCH]
            self.target.write_users([intent.facts[r] for r in rows], intent.vectors[rows])
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


def _unit(rows: np.ndarray) -> np.ndarray:
    """The rows as unit vectors: exported ones are already, and are kept bit for bit."""
    off = np.abs(np.linalg.norm(rows, axis=1) - 1.0) > 1e-5
    unit = rows.astype(np.float32)  # a copy: the buffer read from the export is read-only
    if off.any():
        unit[off] = normalize_rows(unit[off])
    return unit
