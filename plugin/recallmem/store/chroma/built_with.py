"""Which embedder a Chroma store was built with, and the size of its vectors.

Both are recorded in the id directory's metadata: the embedder's name when the store is
created, the size at the first write (opening embeds nothing, and an embedder need not
declare its size). Every open compares the name and every write the size, so vectors of
another model are never mixed with the stored ones, whose similarities would be garbage.
"""

from __future__ import annotations

from typing import Any

from recallmem.errors import EmbeddingMismatchError
from recallmem.store.chroma.layout import REEMBEDDING_KEY


class BuiltWith:
    """The embedder and dimension recorded in ``directory``'s metadata. ``embedder`` None
    takes the recorded one: only a re-embedding opens a store so."""

    def __init__(
        self, directory: Any, prefix: str, embedder: str | None, dimension: int | None
    ) -> None:
        self._directory = directory
        self._prefix = prefix
        recorded = directory.metadata or {}
        self.embedder = embedder or str(recorded.get("embedding_model"))
        if embedder is not None:
            if REEMBEDDING_KEY in recorded:
                raise EmbeddingMismatchError(
                    f"the store '{prefix}' is being re-embedded for "
                    f"{recorded[REEMBEDDING_KEY]!r} and cannot be used until that finishes: "
                    "run `recallmem reembed` again with that embedder (it resumes)"
                )
            if recorded.get("embedding_model") != embedder:
                self._mismatch(dimension)
        self.dimension: int | None = recorded.get("embedding_dim")
        if dimension is not None:
            self.check(dimension)

    def check(self, dimension: int) -> None:
        """Refuse vectors of another size than the store's (a read: nothing is written)."""
        if self.dimension is not None and self.dimension != dimension:
            self._mismatch(dimension)

    def record(self, dimension: int) -> None:
        """Check ``dimension``, and record it if the store has none yet (raises what
        Chroma raises; the caller maps it)."""
        self.check(dimension)
        if self.dimension is None:
            recorded = dict(self._directory.metadata or {})
            self._directory.modify(metadata={**recorded, "embedding_dim": dimension})
            self.dimension = dimension

    def _mismatch(self, dimension: int | None) -> None:
        recorded = self._directory.metadata or {}
        model, dim = recorded.get("embedding_model"), recorded.get("embedding_dim")
        raise EmbeddingMismatchError(
            f"the store '{self._prefix}' was built with embeddings {model!r} "
            f"({dim} dimensions) but this Memory uses {self.embedder!r} "
            f"({dimension or 'undeclared'} dimensions); its vectors would be garbage. Open it "
            "with the embeddings it was built with, or re-embed it for the new ones: "
            "`recallmem reembed` (with RECALLMEM_EMBEDDER and its settings as this Memory "
            "has them; in code, recallmem.store.reembedding.reembed_store). Every fact is "
            "kept and nothing is extracted again; an interrupted run resumes."
        )
