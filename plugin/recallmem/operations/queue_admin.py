"""``memory.queue``: the extraction queue as an administrator sees it.

What waits (:meth:`QueueAdmin.pending`), what failed every retry (:meth:`dead_letters`,
put back with :meth:`retry` or discarded with :meth:`drop`), what was extracted lately
(:meth:`recent`) and what it cost (:meth:`usage`). Reading never creates the queue: with
no file nothing was ever queued, and the reads answer "nothing".

>>> from recallmem import Memory, MemoryConfig
>>> from recallmem.testing import HashingEmbeddings
>>> memory = Memory(MemoryConfig(store="memory"), embeddings=HashingEmbeddings())
>>> memory.queue.pending(), memory.queue.dead_letters(), memory.queue.usage()["calls"]
([], [], 0)
>>> memory.close()
"""

from __future__ import annotations

import sqlite3
from typing import TYPE_CHECKING

from recallmem._async import async_twin
from recallmem.errors import RecallmemError
from recallmem.extraction.backlog import NO_USAGE
from recallmem.operations.extracting import Extracting

if TYPE_CHECKING:
    from recallmem.extraction.backlog import DeadLetter, PendingEntry
    from recallmem.extraction.report import ExtractionReport


class QueueAdmin:
    """The extraction queue's administration (``Memory.queue``)."""

    def __init__(self, extracting: Extracting) -> None:
        self._extracting = extracting

    @property
    def in_use(self) -> bool:
        """Whether the queue was opened here or exists on disk (reads create none)."""
        return self._extracting.in_use

    def pending(self, user_id: str | None = None) -> list[PendingEntry]:
        """Windows waiting for extraction (with their user, thread and messages)."""
        return self._extracting.pipeline.backlog.pending(user_id=user_id) if self.in_use else []

    def dead_letters(self, user_id: str | None = None) -> list[DeadLetter]:
        """Windows that failed every retry, with the reason."""
        if not self.in_use:
            return []
        return self._extracting.pipeline.backlog.dead_letters(user_id=user_id)

    def retry(self, letter_id: int) -> None:
        """Put a dead letter back in the queue, due at once."""
        self._extracting.pipeline.retry_dead_letter(letter_id)

    def drop(self, letter_id: int) -> None:
        """Discard a dead letter for good."""
        self._extracting.pipeline.backlog.drop_dead_letter(letter_id)

    def recent(self, user_id: str | None = None, limit: int = 20) -> list[ExtractionReport]:
        """Reports of the windows this process extracted lately, newest first."""
        if not self.in_use:
            return []
        return self._extracting.pipeline.reports.latest(user_id, limit)

    def usage(self, user_id: str | None = None) -> dict[str, int]:
        """Windows extracted, model calls and tokens, as recorded in the queue."""
        return self._extracting.pipeline.backlog.usage(user_id=user_id) if self.in_use else NO_USAGE

    def problems(self) -> list[str]:
        """What is wrong with the queue (nothing when it was never used)."""
        if not self.in_use:
            return []
        try:
            self._extracting.pipeline.backlog.seconds_until_due()
        except (RecallmemError, sqlite3.Error) as exc:
            return [str(exc)]
        return []

    apending = async_twin(pending)
    adead_letters = async_twin(dead_letters)
    aretry = async_twin(retry)
    adrop = async_twin(drop)
    arecent = async_twin(recent)
    ausage = async_twin(usage)
    aproblems = async_twin(problems)
