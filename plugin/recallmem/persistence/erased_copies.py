"""The copies other users hold of an erased user's facts, rewritten so that no file
names the erased user: their origin and sources lose the user, agent and thread ids
(:func:`recallmem.types.without_origin`); the copies themselves stay, being the other
users' facts. Which users hold copies is recorded when they are made
(:class:`~recallmem.store.fact_store.CopyLinkRecords`)."""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import AbstractContextManager
from typing import Protocol

import numpy as np

from recallmem.retrieval.index import UserIndex
from recallmem.store.fact_store import FactStore
from recallmem.types import Fact, without_origin


class CopyHolders(Protocol):
    """What the rewrite goes through (``FactRepository`` provides it)."""

    store: FactStore

    def writing(self, user_id: str) -> AbstractContextManager[UserIndex]:
        """The user's index, under the user's lock."""
        ...

    def write(self, index: UserIndex, embedded: Sequence[Fact], vectors: np.ndarray | None,
              records: Sequence[Fact] = (), *, claim: bool = True) -> None:  # fmt: skip
        """Write facts of the index's user (with their vectors)."""
        ...


def unlink_copies(target: CopyHolders, user_id: str) -> None:
    """Rewrite every copy of ``user_id``'s facts that another user holds; then forget
    where they were. Call after the user is erased, holding no user's lock."""
    links = target.store.copy_links
    for holder in links.holders(user_id):
        with target.writing(holder) as index:
            copies = [
                f for f in index.facts() if f.copied_from and f.copied_from.user_id == user_id
            ]
            if copies:  # written whole: Chroma's older log rows of them are then scrubbed
                vectors = index.vectors([f.id for f in copies])
                target.write(index, [without_origin(f) for f in copies], vectors)
    links.forget(user_id)
