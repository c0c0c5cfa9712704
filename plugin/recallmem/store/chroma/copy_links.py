"""Which users hold copies of a user's facts, so that "forget me" can reach them.

A copy into another user (``Memory.copy``) is that user's fact, but its ``copied_from``
names the user it came from, and its sources name their threads: after the source user
is erased, no file may still hold their id. So each copy between two users adds a
record to the scopes collection, ``copies:<hash of the source>:<hash of the
destination>``, whose metadata holds the destination (``user_id``, so erasing the
destination deletes it with the user's profiles) and the source's hash only. Erasing
the source asks for its records (:meth:`CopyLinks.holders`), rewrites the copies
(persistence/erased_copies.py) and deletes them (:meth:`CopyLinks.forget`).

>>> copy_link_id("ada", "bob") == copy_link_id("ada", "bob") != copy_link_id("bob", "ada")
True
"""

from __future__ import annotations

from typing import Any

from recallmem.store.chroma.failures import store_errors
from recallmem.store.chroma.layout import hashed_id

_VECTOR = [1.0]  # records are read by id and metadata only; Chroma requires a vector


def copy_link_id(source: str, destination: str) -> str:
    """The record saying ``destination`` holds copies of ``source``'s facts."""
    return f"copies:{hashed_id(source)}:{hashed_id(destination)}"


class CopyLinks:
    """The copy records of one store, in its scopes collection."""

    def __init__(self, collection: Any, where: str) -> None:
        self._records = collection
        self._where = where

    def note(self, source: str, destination: str) -> None:
        """Record that ``destination`` now holds copies of ``source``'s facts."""
        with store_errors("record a copy between users", self._where):
            self._records.upsert(
                ids=[copy_link_id(source, destination)], embeddings=[_VECTOR],
                metadatas=[{"user_id": destination, "copies_of": hashed_id(source)}],
            )  # fmt: skip

    def holders(self, source: str) -> list[str]:
        """The users holding copies of ``source``'s facts."""
        with store_errors("read the copies of a user", self._where):
            got = self._records.get(where={"copies_of": {"$eq": hashed_id(source)}},
                                    include=["metadatas"])  # fmt: skip
        return sorted({str(m["user_id"]) for m in got["metadatas"] or []})

    def forget(self, source: str) -> None:
        """Delete the records of ``source``'s copies (once they name it no more)."""
        with store_errors("delete the copy records of a user", self._where):
            self._records.delete(where={"copies_of": {"$eq": hashed_id(source)}})
