"""mem0 (PyPI ``mem0ai``) as a peer: ``infer=False``, local Chroma store, telemetry off.

With ``infer=False`` mem0 stores each message verbatim and calls no LLM; it still builds
one at construction, so an OpenAI client is configured with a key that is never used.
Its BM25 and entity boosts need a hub model and spaCy, both unavailable offline (it
says so and falls back to semantic search): what is measured is what a user gets here.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from langchain_core.embeddings import Embeddings

from bench.data import Doc
from bench.systems.base import Hit

_QUIET_ENV = {"MEM0_TELEMETRY": "False", "ANONYMIZED_TELEMETRY": "False", "DO_NOT_TRACK": "1"}


class Mem0Peer:
    """mem0 ``Memory`` with the shared embedder, one ``add`` per document."""

    name = "mem0"

    def __init__(self, embeddings: Embeddings, workdir: Path, dims: int = 512) -> None:
        os.environ.update(_QUIET_ENV)
        os.environ["MEM0_DIR"] = str(workdir / "mem0home")
        logging.getLogger("mem0").setLevel(logging.ERROR)
        from mem0 import Memory  # type: ignore[import-untyped]  # imported late: telemetry reads the environment at import

        config: dict[str, Any] = {
            "vector_store": {
                "provider": "chroma",
                "config": {"collection_name": "bench", "path": str(workdir / "mem0chroma")},
            },
            "embedder": {
                "provider": "langchain",
                "config": {"model": embeddings, "embedding_dims": dims},
            },
            "llm": {"provider": "openai", "config": {"api_key": "unused-infer-false"}},
            "history_db_path": str(workdir / "mem0history.db"),
        }
        self._memory = Memory.from_config(config)

    def add(self, user_id: str, docs: Sequence[Doc]) -> None:
        for doc in docs:
            self._memory.add(
                [{"role": "user", "content": doc.text}],
                user_id=user_id,
                infer=False,
                metadata={"doc_id": doc.id},
            )

    def search(self, user_id: str, query: str, k: int) -> list[Hit]:
        # threshold=0: let the ranking alone decide what is in the top k.
        found = self._memory.search(query, filters={"user_id": user_id}, top_k=k, threshold=0.0)
        return [frozenset({item["metadata"]["doc_id"]}) for item in found["results"][:k]]

    def close(self) -> None:
        return None  # its files live in the workdir, which the caller removes
