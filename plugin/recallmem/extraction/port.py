"""What the extraction pipeline needs from storage, and nothing more.

:class:`~recallmem.persistence.repository.FactRepository` provides it; the pipeline never sees
``Memory``, Chroma or the indexes, so extraction can be tested against any store.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Protocol

from recallmem.types import Fact, Profile


class FactsPort(Protocol):
    """Reading the facts a window relates to, and writing a plan's records."""

    def nearest(
        self,
        texts: Sequence[str],
        *,
        user_id: str,
        agent_id: str | None,
        k: int,
        now: datetime | None = None,
    ) -> Sequence[Sequence[tuple[Fact, float]]]:
        """For each text, the ``k`` active facts in scope most similar by meaning, among
        those not expired at ``now`` (default: the current time)."""
        ...

    def current(self, ids: Sequence[str], *, user_id: str) -> dict[str, Fact]:
        """The user's facts among ``ids`` as they are now, by id."""
        ...

    def active(self, *, user_id: str, agent_id: str | None) -> list[Fact]:
        """The active facts of exactly this user and agent."""
        ...

    def put(self, facts: Sequence[Fact]) -> None:
        """Write whole fact records as they are."""
        ...

    def profile(self, *, user_id: str, agent_id: str | None) -> Profile:
        """The user's profile (empty sections if none was written)."""
        ...

    def save_profile(self, profile: Profile) -> None:
        """Replace a profile."""
        ...
