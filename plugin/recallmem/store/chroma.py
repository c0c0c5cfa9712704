"""The Chroma shell: opening the client, reading and writing facts, scopes and profiles.

Two collections per prefix: ``<prefix>_facts`` (one record per fact, with its vector)
and ``<prefix>_scopes`` (per user: a revision token that changes on every write, and
the profiles). We always pass our own vectors: Chroma is never given the chance to
fall back to its default embedding function, which would try to download a model.
"""

from __future__ import annotations

import json
import uuid
import weakref
from collections.abc import Sequence
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

import numpy as np

from recallmem.config import MemoryConfig
from recallmem.errors import EmbeddingMismatchError, StoreError
from recallmem.store.codec import decode, encode, scope_where
from recallmem.store.failures import check_room, store_errors
from recallmem.store.heap import wipe_heap_blocks
from recallmem.store.lock import HomeLock, acquire
from recallmem.store.unapplied import report_unapplied
from recallmem.types import Fact, Profile

_SCOPE_VECTOR = [1.0]  # the scopes collection is looked up by id only
_READ_PAGE = 5000  # ids per get/delete: SQLite caps the variables of one query
_WRITE_BATCH = 2000  # below Chroma's max batch size, large enough to amortise calls
_WHOLE = ["documents", "metadatas", "embeddings"]
# Recall never searches Chroma's vector index (each process ranks a user's facts in its
# own index, docs/architecture.md); Chroma keeps it anyway and pays for building it on
# every write. A sparse graph built with a short search made a 100-fact upsert into 50k
# facts 2.2x faster here (143 against 313 ms); the vectors are stored exactly either way.
# Applies to collections created from now on: Chroma fixes these parameters at
# creation, so existing stores keep theirs.
FACTS_HNSW = {"space": "cosine", "ef_construction": 10, "max_neighbors": 4}


def open_client(config: MemoryConfig) -> Any:
    """An embedded ``PersistentClient`` under ``config.home``, or an ``HttpClient``."""
    import chromadb
    from chromadb.config import Settings

    settings = Settings(anonymized_telemetry=False, allow_reset=False)
    if config.chroma_url:
        url = urlparse(config.chroma_url)
        if url.scheme not in ("http", "https") or not url.hostname:
            raise StoreError(f"chroma_url {config.chroma_url!r} is not an http(s)://host:port URL")
        headers = {}
        if config.chroma_token is not None:
            headers["Authorization"] = f"Bearer {config.chroma_token.get_secret_value()}"
        with store_errors("connect to the Chroma server", config.chroma_url):
            return chromadb.HttpClient(
                host=url.hostname,
                port=url.port or (443 if url.scheme == "https" else 8000),
                ssl=url.scheme == "https",
                headers=headers,
                settings=settings,
            )
    with store_errors("open the embedded Chroma database", str(config.chroma_path)):
        config.chroma_path.mkdir(parents=True, exist_ok=True)
        return chromadb.PersistentClient(path=str(config.chroma_path), settings=settings)


def open_store(config: MemoryConfig, embedder: str, dimension: int | None) -> FactStore:
    """The fact store ``config`` names; an embedded one is first locked to this process
    (:mod:`recallmem.store.lock`), and unlocked again if opening fails."""
    lock = None if config.chroma_url else acquire(config.home)
    try:
        unapplied = 0
        if lock is not None:
            wipe_heap_blocks()  # the in-process vector index persists unused heap bytes
            unapplied = report_unapplied(config.chroma_path)
        client = open_client(config)
        store = FactStore(
            client, config.collection, embedder, dimension,
            path=None if config.chroma_url else config.chroma_path, lock=lock,
        )  # fmt: skip
        store.unapplied_at_open = unapplied
        return store
    except BaseException:
        if lock is not None:
            lock.release()
        raise


def _close(client: Any, lock: HomeLock | None) -> None:
    try:
        if lock is not None:  # a server client holds no files; only embedded ones are closed
            client.close()
    finally:
        if lock is not None:
            lock.release()


class FactStore:
    """Facts, revisions and profiles in Chroma. Every read and delete is scoped by user.

    ``path`` is the embedded database's directory (None for a Chroma server): writes
    check the room they need there first. ``lock`` is this process's hold on the home,
    given back by :meth:`close` (or when the store is garbage-collected).
    """

    def __init__(
        self,
        client: Any,
        prefix: str,
        embedder: str,
        dimension: int | None = None,
        *,
        path: Path | None = None,
        lock: HomeLock | None = None,
    ) -> None:
        self.embedder = embedder
        self._prefix = prefix
        self.path = path
        self.lock = lock
        self.where = str(path) if path is not None else "the Chroma server"
        self.unapplied_at_open = 0  # logged writes Chroma had not applied (unapplied.py)
        self._closer = weakref.finalize(self, _close, client, lock)
        # Without a declared dimension, the store's recorded one is used, or the first
        # write records it: opening never embeds anything (an API call for most embedders).
        metadata: dict[str, Any] = {"embedding_model": embedder}
        if dimension is not None:
            metadata["embedding_dim"] = dimension
        with self._errors("open the recallmem collections"):
            self._facts = client.get_or_create_collection(
                f"{prefix}_facts",
                embedding_function=None,
                metadata=metadata,
                configuration={"hnsw": FACTS_HNSW},
            )
            self._scopes = client.get_or_create_collection(
                f"{prefix}_scopes", embedding_function=None
            )
        recorded = self._facts.metadata or {}
        if recorded.get("embedding_model") != embedder:
            self._mismatch(recorded, embedder, dimension)
        self.dimension: int | None = recorded.get("embedding_dim")
        if dimension is not None:
            self.check_dimension(dimension)

    def _errors(self, action: str) -> Any:
        return store_errors(action, self.where)

    def close(self) -> None:
        """Release the Chroma client and this process's lock on the home (idempotent)."""
        self._closer()

    def _mismatch(self, recorded: dict[str, Any], embedder: str, dimension: int | None) -> None:
        model, dim = recorded.get("embedding_model"), recorded.get("embedding_dim")
        raise EmbeddingMismatchError(
            f"the collection '{self._prefix}_facts' was built with embeddings {model!r} "
            f"({dim} dimensions) but this Memory uses {embedder!r} "
            f"({dimension or 'undeclared'} dimensions); its vectors would be garbage. Open it "
            "with the embeddings it was built with, or move the memory: `recallmem export` "
            "with the old embeddings, then `recallmem import` into a new home or "
            "collection prefix with the new ones (import re-embeds every fact)."
        )

    def check_dimension(self, dimension: int) -> None:
        """Refuse vectors of another size than the collection's (a read: nothing is written)."""
        if self.dimension is not None and self.dimension != dimension:
            self._mismatch(self._facts.metadata or {}, self.embedder, dimension)

    def _record_dimension(self, dimension: int) -> None:
        self.check_dimension(dimension)
        if self.dimension is None:
            with self._errors("record the embedding dimension"):
                recorded = dict(self._facts.metadata or {})
                self._facts.modify(metadata={**recorded, "embedding_dim": dimension})
            self.dimension = dimension

    # facts ---------------------------------------------------------------

    def upsert(self, facts: Sequence[Fact], vectors: np.ndarray) -> None:
        """Write whole fact records with their vectors (the first write records their size)."""
        if len(facts):
            self._record_dimension(int(vectors.shape[1]))
        for start in range(0, len(facts), _WRITE_BATCH):
            batch = facts[start : start + _WRITE_BATCH]
            encoded = [encode(f) for f in batch]
            size = sum(len(doc) + len(str(meta)) for doc, meta in encoded) * 2
            check_room(self.path, size + vectors[start : start + _WRITE_BATCH].nbytes,
                       "write facts")  # fmt: skip
            with self._errors("write facts to Chroma"):
                self._facts.upsert(
                    ids=[f.id for f in batch],
                    documents=[doc for doc, _ in encoded],
                    metadatas=[meta for _, meta in encoded],
                    embeddings=vectors[start : start + _WRITE_BATCH],
                )

    def update_records(self, facts: Sequence[Fact]) -> None:
        """Rewrite records whose content did not change (no re-embedding)."""
        if not facts:
            return
        # Never pass documents without vectors: Chroma would embed them with its default
        # model, which means a download. The content is unchanged here by definition.
        metadatas = [encode(f)[1] for f in facts]
        check_room(self.path, sum(len(str(m)) for m in metadatas) * 2, "update facts")
        with self._errors("update facts in Chroma"):
            self._facts.update(ids=[f.id for f in facts], metadatas=metadatas)

    def touch(self, accessed: Sequence[tuple[str, float]]) -> None:
        """Record access times alone, so a stale copy can never overwrite a newer record."""
        if accessed:
            check_room(self.path, 64 * len(accessed), "record access times")
            with self._errors("record access times"):
                self._facts.update(
                    ids=[fact_id for fact_id, _ in accessed],
                    metadatas=[{"accessed_at": at} for _, at in accessed],
                )

    def load_user(self, user_id: str) -> tuple[list[Fact], np.ndarray]:
        """Every fact of a user, with its vectors as one ``(n, d)`` matrix."""
        # A `where` get scans the whole collection (Chroma groups every record with its
        # metadata, then filters), and each page of a paged one scans it again. So: one
        # page in one call, which is every user up to _READ_PAGE facts; a larger user
        # has the rest of its ids listed by one more scan, then read by id in pages.
        with self._errors(f"read the facts of user {user_id!r}"):
            first = self._facts.get(
                where=scope_where(user_id), include=_WHOLE, limit=_READ_PAGE, offset=0
            )
        pages = [first]
        if len(first["ids"]) == _READ_PAGE:
            with self._errors(f"list the facts of user {user_id!r}"):
                rest = self._facts.get(where=scope_where(user_id), include=[], offset=_READ_PAGE)
            pages += self._pages(rest["ids"], user_id, _WHOLE)
        facts = [fact for page in pages for fact in _decoded(page)]
        vectors = [np.asarray(p["embeddings"], dtype=np.float32) for p in pages if len(p["ids"])]
        if not vectors:  # no facts, and perhaps no dimension recorded yet
            return facts, np.zeros((0, self.dimension or 0), dtype=np.float32)
        return facts, np.concatenate(vectors)

    def _pages(self, ids: Sequence[str], user_id: str | None, include: list[str]) -> list[Any]:
        """Records by id, _READ_PAGE ids per call, within the user if given."""
        where = scope_where(user_id) if user_id is not None else None
        pages = []
        for start in range(0, len(ids), _READ_PAGE):
            with self._errors("read facts from Chroma"):
                pages.append(
                    self._facts.get(
                        ids=list(ids[start : start + _READ_PAGE]), where=where, include=include
                    )
                )
        return pages

    def get(self, ids: Sequence[str], *, user_id: str | None = None) -> list[Fact]:
        """The facts with these ids (in no particular order), within the user if given."""
        pages = self._pages(ids, user_id, ["documents", "metadatas"])
        return [fact for page in pages for fact in _decoded(page)]

    def ids_where(self, user_id: str, *, agent_id: str | None, thread_id: str | None) -> list[str]:
        """Ids of a user's facts, narrowed by agent and thread when given."""
        where = scope_where(user_id, agent_id=agent_id, thread_id=thread_id)
        with self._errors("list fact ids"):
            return list(self._facts.get(where=where, include=[])["ids"])

    def ids_with_prefix(self, prefix: str) -> list[str]:
        """Ids of any user's facts starting with ``prefix``: a scan of every id, for the CLI."""
        with self._errors("list fact ids"):
            ids = self._facts.get(include=[])["ids"]
        return [fact_id for fact_id in ids if fact_id.startswith(prefix)]

    def delete(self, ids: Sequence[str], *, user_id: str) -> None:
        """Erase facts and their vectors; only the user's own ids are touched."""
        for start in range(0, len(ids), _READ_PAGE):
            with self._errors("delete facts from Chroma"):
                self._facts.delete(
                    ids=list(ids[start : start + _READ_PAGE]), where=scope_where(user_id)
                )

    def probe(self) -> None:
        """Read one fact record and one scope record: raises StoreError if Chroma cannot
        read (a count alone can answer while records cannot be read)."""
        with self._errors("read a fact record"):
            self._facts.get(limit=1, include=["documents", "metadatas"])
        with self._errors("read a scope record"):
            self._scopes.get(limit=1, include=["metadatas"])

    def count(self) -> int:
        """How many facts the collection holds, all users together."""
        with self._errors("count facts"):
            return int(self._facts.count())

    # scopes: revisions and profiles ---------------------------------------

    def revision(self, user_id: str) -> str | None:
        """The user's current revision token, or None if the user never wrote."""
        with self._errors("read a revision token"):
            got = self._scopes.get(ids=[_rev_id(user_id)], include=["metadatas"])
        metas = got["metadatas"]
        return str(metas[0]["revision"]) if metas else None

    def bump_revision(self, user_id: str) -> str:
        """Mark the user's memory as changed; other processes reload it on next recall."""
        token = uuid.uuid4().hex
        with self._errors("write a revision token"):
            self._scopes.upsert(
                ids=[_rev_id(user_id)],
                embeddings=[_SCOPE_VECTOR],
                metadatas=[{"user_id": user_id, "kind": "revision", "revision": token}],
            )
        return token

    def users(self) -> list[str]:
        """Every user who ever wrote (one revision token each), sorted."""
        with self._errors("list users"):
            got = self._scopes.get(where={"kind": {"$eq": "revision"}}, include=["metadatas"])
        return sorted({str(m["user_id"]) for m in got["metadatas"] or []})

    def load_profile(self, user_id: str, agent_id: str | None) -> Profile | None:
        """The stored profile of a user (and agent), if any."""
        with self._errors("read a profile"):
            got = self._scopes.get(
                ids=[_profile_id(user_id, agent_id)], include=["documents", "metadatas"]
            )
        if not got["ids"]:
            return None
        profile = Profile.model_validate_json(got["documents"][0])
        return profile if profile.user_id == user_id else None

    def save_profile(self, profile: Profile) -> None:
        """Replace the stored profile of ``profile.user_id`` / ``profile.agent_id``."""
        check_room(self.path, 2 * len(profile.model_dump_json()), "write a profile")
        with self._errors("write a profile"):
            self._scopes.upsert(
                ids=[_profile_id(profile.user_id, profile.agent_id)],
                embeddings=[_SCOPE_VECTOR],
                documents=[profile.model_dump_json()],
                metadatas=[{"user_id": profile.user_id, "kind": "profile"}],
            )

    def delete_scope(self, user_id: str) -> None:
        """Erase a user's revision and profiles ("forget me")."""
        with self._errors("delete a user's profiles"):
            self._scopes.delete(where={"user_id": {"$eq": user_id}})


def _decoded(page: Any) -> list[Fact]:
    return [
        decode(i, d, m)
        for i, d, m in zip(page["ids"], page["documents"], page["metadatas"], strict=True)
    ]


def _rev_id(user_id: str) -> str:
    # json.dumps quotes the id, so "a:b" and a crafted "a" + ":b" cannot collide.
    return "rev:" + json.dumps(user_id)


def _profile_id(user_id: str, agent_id: str | None) -> str:
    return "profile:" + json.dumps([user_id, agent_id])
