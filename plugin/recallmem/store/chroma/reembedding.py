"""Re-embedding a store for another embedder (``recallmem reembed``): every fact keeps its
record, and only its vector is computed again from its content. Nothing is extracted again.

A store records the embedder its vectors came from and refuses any other
(``EmbeddingMismatchError``). To change embedders, each user's collection is rewritten
with vectors of the new one, one collection at a time:

1. the store is marked as re-embedding to the new embedder (the id directory's metadata),
   and from then on refuses to open for anything but this re-embedding;
2. per user collection not yet done: its records are read and their contents embedded;
   the records and new vectors are journaled (``<home>/reembed/<collection>.json``,
   written whole or not at all); the collection is dropped and created again with the
   new vectors, marked with the embedder; the journal is removed;
3. the store records the new embedder and dimension, and the mark is removed.

Killed at any point, the next run finishes the journals it finds, skips the collections
marked done, and goes on: at most one user's contents are embedded twice, and no record is
lost (a collection is dropped only once its records and vectors are on disk). Imports,
profiles, revisions and the extraction queue hold no vectors of the store and are not
touched; an import a crash left unfinished carries vectors of the old embedder and must
complete first.

Embedded stores are locked for the duration. On a Chroma server, stop every recallmem
worker first (as for ``recallmem migrate``): one still running keeps writing vectors of
the old embedder.
"""

from __future__ import annotations

import base64
import json
import logging
import re
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from langchain_core.embeddings import Embeddings

from recallmem.config import MemoryConfig
from recallmem.durability.intents import IntentLog
from recallmem.durability.whole_files import write_durably
from recallmem.embedders import embed_matrix, embedder_name, load_embedder
from recallmem.errors import StoreError
from recallmem.store.chroma.adapter import ChromaFactStore
from recallmem.store.chroma.failures import store_errors
from recallmem.store.chroma.layout import REEMBEDDING_KEY
from recallmem.store.chroma.opening import open_store
from recallmem.store.chroma.workarounds.dropped_index import drop_collection
from recallmem.store.chroma.workarounds.saved_index import USER_HNSW

log = logging.getLogger("recallmem.store")

JOURNAL_DIR = "reembed"
REEMBED_PAGE = 500  # records read, embedded and written per step
_MODEL, _DIM = "embedding_model", "embedding_dim"
Progress = Callable[[int, int], None]


@dataclass(frozen=True)
class ReembedReport:
    """What a run of :func:`reembed_store` did."""

    embedder: str
    dimension: int
    facts: int  # facts given new vectors by this run
    collections: int  # user collections rewritten by this run (resumed journals included)


def reembed_store(
    config: MemoryConfig,
    embeddings: Embeddings | None = None,
    progress: Progress | None = None,
) -> ReembedReport | None:
    """Give every fact of the configured store vectors of ``embeddings`` (by default the
    embedder ``config.embedder`` names); None when the store already uses it.

    Resumable: run it again after an interruption, with the same embeddings.

    >>> import tempfile
    >>> from recallmem import Memory, MemoryConfig
    >>> from recallmem.testing import HashingEmbeddings
    >>> config = MemoryConfig(home=tempfile.mkdtemp())
    >>> with Memory(config, embeddings=HashingEmbeddings(64)) as memory:
    ...     _ = memory.remember("Writes TypeScript at work", user_id="ada", category="knowledge")
    >>> new = HashingEmbeddings(128, model_name="hashing-v2")
    >>> reembed_store(config, new)
    ReembedReport(embedder='HashingEmbeddings:hashing-v2', dimension=128, facts=1, collections=1)
    >>> with Memory(config, embeddings=new) as memory:
    ...     [hit.fact.content for hit in memory.recall("TypeScript", user_id="ada")]
    ['Writes TypeScript at work']
    """
    embeddings = embeddings or load_embedder(config.embedder, config)
    target = embedder_name(embeddings)
    store = open_store(config, None, None)  # as recorded: this is the one open a mark allows
    try:
        return _Reembedding(store, config.home, embeddings, target, progress).run()
    finally:
        store.close()


class _Reembedding:
    def __init__(
        self,
        store: ChromaFactStore,
        home: Path,
        embeddings: Embeddings,
        target: str,
        progress: Progress | None,
    ) -> None:
        self.store = store
        self.client = store.collections.client
        self.prefix = store.collections.prefix
        self.journals = home / JOURNAL_DIR
        self.intents = IntentLog(home)
        self.embeddings = embeddings
        self.target = target
        self.progress = progress
        self.dimension = 0
        self.facts = 0
        self.rewritten = 0

    def run(self) -> ReembedReport | None:
        directory = self.store.collections.directory
        recorded = dict(directory.metadata or {})
        declared = getattr(self.embeddings, "dimension", None)
        self.dimension = declared if isinstance(declared, int) else self._probe_dimension()
        done = {_MODEL: self.target, _DIM: self.dimension}
        if REEMBEDDING_KEY not in recorded and _is(recorded, done, absent_dim_ok=True):
            return None
        if pending := self.intents.pending():
            raise StoreError(
                f"an import into this store is unfinished ({pending[0]}); its vectors are of "
                f"the embedder the store was built with ({recorded.get(_MODEL)!r}): open the "
                "memory once with that embedder (it completes the import), then re-embed"
            )
        log.warning("recallmem: re-embedding '%s' from %r to %r; this resumes if interrupted",
                    self.prefix, recorded.get(_MODEL), self.target)  # fmt: skip
        with self._chroma("mark the store as re-embedding"):
            directory.modify(metadata={**recorded, REEMBEDDING_KEY: self.target})
            names = self._user_collections()
        total = self.store.count()
        for journal in sorted(self.journals.glob("*.json")):
            self._finish(journal)
        finished = 0  # facts of collections a run before this one finished
        for name in names:
            self.store.collections.refuse_cut(name, f"re-embed collection {name}")
            with self._chroma("read a user collection's settings"):
                handle = self.client.get_collection(name, embedding_function=None)
            if not _is(handle.metadata or {}, done, absent_dim_ok=False):
                self._rewrite(name)
            else:
                finished += int(handle.count())
            if self.progress is not None:
                self.progress(min(finished + self.facts, total), total)
        kept = {k: v for k, v in recorded.items() if k != REEMBEDDING_KEY}
        with self._chroma("record the new embedder"):
            directory.modify(metadata={**kept, **done})
        shutil.rmtree(self.journals, ignore_errors=True)
        return ReembedReport(self.target, self.dimension, self.facts, self.rewritten)

    def _chroma(self, action: str) -> Any:
        return store_errors(action, self.store.where)

    def _probe_dimension(self) -> int:
        return int(embed_matrix(self.embeddings, ["dimension probe"]).shape[1])

    def _user_collections(self) -> list[str]:
        mine = re.compile(rf"{re.escape(self.prefix)}_u[0-9a-f]{{32}}")
        return sorted(c.name for c in self.client.list_collections() if mine.fullmatch(c.name))

    def _rewrite(self, name: str) -> None:
        ids: list[str] = []
        documents: list[str | None] = []
        metadatas: list[dict[str, Any]] = []
        with self._chroma(f"read the records of collection {name}"):
            handle = self.client.get_collection(name, embedding_function=None)
            read = 0
            while True:  # records only: the old vectors are not read
                page = handle.get(include=["documents", "metadatas"], limit=REEMBED_PAGE,
                                  offset=read)  # fmt: skip
                read += len(page["ids"])
                for i, document, metadata in zip(
                    page["ids"], page["documents"], page["metadatas"], strict=True
                ):
                    if metadata and "record" in metadata:  # a fact (not a probe a crash left)
                        ids.append(i)
                        documents.append(document)
                        metadatas.append(dict(metadata))
                if len(page["ids"]) < REEMBED_PAGE:
                    break
        contents = [_content(d, m) for d, m in zip(documents, metadatas, strict=True)]
        vectors = np.zeros((0, self.dimension), dtype=np.float32)
        for start in range(0, len(ids), REEMBED_PAGE):
            part = embed_matrix(self.embeddings, contents[start : start + REEMBED_PAGE])
            vectors = np.concatenate([vectors, part.reshape(-1, self.dimension)])
        if vectors.shape[1] != self.dimension:
            raise StoreError(f"{self.target} returned vectors of {vectors.shape[1]} dimensions, "
                             f"not the {self.dimension} it declared")  # fmt: skip
        body = {
            "name": name,
            "metadata": {_MODEL: self.target, _DIM: self.dimension},
            "ids": ids,
            "documents": documents,
            "metadatas": metadatas,
            "vectors": base64.b64encode(vectors.astype("<f4").tobytes()).decode("ascii"),
        }
        self.journals.mkdir(parents=True, exist_ok=True)
        journal = self.journals / f"{name}.json"
        write_durably(journal, json.dumps(body).encode("utf-8"))
        self._finish(journal)

    def _finish(self, journal: Path) -> None:
        """Drop the journal's collection and write it again from the journal (idempotent)."""
        body = json.loads(journal.read_text(encoding="utf-8"))
        name, ids = body["name"], body["ids"]
        raw = np.frombuffer(base64.b64decode(body["vectors"]), dtype="<f4")
        vectors = raw.reshape(len(ids), -1) if ids else raw.reshape(0, self.dimension)
        with self._chroma(f"write collection {name} with the new vectors"):
            drop_collection(self.client, self.store.path, name)
            handle = self.client.create_collection(
                name, embedding_function=None, metadata=body["metadata"],
                configuration={"hnsw": USER_HNSW},
            )  # fmt: skip
            # Chroma takes a batch with a document for every record or for none.
            for with_document in (True, False):
                documents = body["documents"]
                rows = [r for r, d in enumerate(documents) if (d is not None) is with_document]
                for start in range(0, len(rows), REEMBED_PAGE):
                    part = rows[start : start + REEMBED_PAGE]
                    handle.upsert(
                        ids=[ids[r] for r in part],
                        embeddings=vectors[part],
                        metadatas=[body["metadatas"][r] for r in part],
                        documents=[documents[r] for r in part] if with_document else None,
                    )
        users = sorted({str(m["user_id"]) for m in body["metadatas"] if m.get("user_id")})
        self.store.revisions.record_writes(users)  # other processes reload what they hold
        journal.unlink()
        self.facts += len(ids)
        self.rewritten += 1


def _is(metadata: dict[str, Any], done: dict[str, Any], *, absent_dim_ok: bool) -> bool:
    """Whether ``metadata`` records the target embedder (and its dimension)."""
    if metadata.get(_MODEL) != done[_MODEL]:
        return False
    dim = metadata.get(_DIM)
    return dim == done[_DIM] or (absent_dim_ok and dim is None)


def _content(document: str | None, metadata: dict[str, Any]) -> str:
    """The text a fact's vector is made from: its content (the document, for a record of
    the first schema)."""
    content = json.loads(str(metadata["record"])).get("content")
    return content if isinstance(content, str) else document or ""
