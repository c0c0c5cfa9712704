"""``Memory``: the one place where storage, retrieval and extraction are wired together.

>>> import tempfile
>>> from recallmem.testing import HashingEmbeddings
>>> memory = Memory(MemoryConfig(home=tempfile.mkdtemp()), embeddings=HashingEmbeddings())
>>> fact = memory.remember("Prefers reports in Chinese", user_id="ada", category="preference")
>>> [hit.fact.content for hit in memory.recall("report language", user_id="ada")]
['Prefers reports in Chinese']
"""

from __future__ import annotations

import builtins
import threading
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from langchain_core.embeddings import Embeddings
from langchain_core.language_models import BaseChatModel

from recallmem._async import async_twin
from recallmem.config import MemoryConfig
from recallmem.dedup import merge_batch
from recallmem.errors import FactNotFoundError, ImportRejectedError, InvalidInputError
from recallmem.portability import ImportReport, build_export, validate_import
from recallmem.retrieval.index import IndexCache, Query, UserIndex
from recallmem.retrieval.ranking import Weights
from recallmem.store.access import AccessTimes
from recallmem.store.chroma import FactStore, open_client
from recallmem.store.embeddings import (
    UniversalSentenceEncoder,
    embed_matrix,
    embed_query_vector,
    embedder_name,
)
from recallmem.types import (
    Category,
    Fact,
    Profile,
    ScoredFact,
    ScoreParts,
    Source,
    Status,
    utcnow,
)
from recallmem.validation import (
    check_query,
    edit_fact,
    new_fact,
    parse_categories,
    parse_category,
    require_user,
)


class Memory:
    """Long-term memory of typed facts per user, in Chroma, recalled offline.

    Args:
        config: settings; by default read from ``RECALLMEM_*`` environment variables.
        embeddings: any LangChain ``Embeddings``; by default the offline multilingual
            Universal Sentence Encoder. A collection refuses an embedder it was not
            built with (``EmbeddingMismatchError``).
        model: the chat model that extracts facts from conversations.
    """

    def __init__(
        self,
        config: MemoryConfig | None = None,
        *,
        embeddings: Embeddings | None = None,
        model: BaseChatModel | None = None,
    ) -> None:
        self.config = config or MemoryConfig()
        self.embeddings = embeddings or UniversalSentenceEncoder()
        self.model = model
        self.weights = Weights(half_life_days=self.config.recency_half_life_days)
        dimension = getattr(self.embeddings, "dimension", None)
        if not isinstance(dimension, int):
            dimension = len(self.embeddings.embed_query("dimension probe"))
        self.store = FactStore(
            open_client(self.config),
            self.config.collection,
            embedder_name(self.embeddings),
            dimension,
        )
        self._indexes = IndexCache(self.config.index_cache_users, self._load_index)
        self._write_lock = threading.RLock()
        self._access = AccessTimes(self.store)

    # reading -----------------------------------------------------------------

    def _load_index(self, user_id: str) -> UserIndex:
        revision = self.store.revision(user_id)
        facts, vectors = self.store.load_user(user_id)
        index = UserIndex(user_id, facts, vectors)
        index.revision = revision
        return index

    def _index(self, user_id: str) -> UserIndex:
        """The user's index, reloaded if another process changed the user's memory."""
        index = self._indexes.get(user_id)
        if self.store.revision(user_id) != index.revision:
            self._indexes.drop(user_id)
            index = self._indexes.get(user_id)
        return index

    def recall(
        self,
        query: str,
        *,
        user_id: str,
        k: int | None = None,
        agent_id: str | None = None,
        categories: Iterable[str | Category] | None = None,
        min_score: float | None = None,
        include_inactive: bool = False,
    ) -> list[ScoredFact]:
        """The user's facts most relevant to ``query``, best first, with score parts.

        Searches the user's shared facts plus ``agent_id``'s own; only active facts
        unless ``include_inactive``. ``k`` defaults to ``config.recall_k``.
        """
        query, k = check_query(query, self.config.recall_k if k is None else k)
        index = self._index(require_user(user_id))
        search = Query(
            text=query,
            vector=embed_query_vector(self.embeddings, query),
            agent_id=agent_id,
            categories=parse_categories(categories),
            include_inactive=include_inactive,
            k=k,
            min_score=min_score,
        )
        now = utcnow()
        hits = index.search(search, self.weights, now)
        self._access.add(index.touch([hit.fact.id for hit in hits], now))
        return [h.model_copy(update={"fact": index.get(h.fact.id) or h.fact}) for h in hits]

    def nearest(
        self, texts: Sequence[str], *, user_id: str, agent_id: str | None = None, k: int = 5
    ) -> list[list[ScoredFact]]:
        """For each text, the ``k`` most similar active facts by meaning alone."""
        index = self._index(require_user(user_id))
        vectors = embed_matrix(self.embeddings, list(texts))
        return [
            [ScoredFact(fact=f, score=c, parts=ScoreParts(dense=max(c, 0.0))) for f, c in row]
            for row in index.nearest(vectors, agent_id=agent_id, k=k)
        ]

    def get(self, fact_id: str, *, user_id: str | None = None) -> Fact:
        """One fact by id; with ``user_id``, only if it is that user's."""
        found = self.store.get([fact_id], user_id=user_id)
        if not found:
            raise FactNotFoundError(fact_id)
        return found[0]

    def list(
        self,
        *,
        user_id: str,
        agent_id: str | None = None,
        category: str | Category | None = None,
        status: str | Status | None = Status.ACTIVE,
        thread_id: str | None = None,
        text: str | None = None,
        limit: int = 50,
        offset: int = 0,
    ) -> builtins.list[Fact]:
        """The user's facts, newest first, filtered and paginated. ``status=None`` lists all."""
        wanted_category = parse_category(category) if category is not None else None
        wanted_status = Status(status) if status is not None else None
        needle = text.casefold() if text else None
        if not 1 <= limit <= 1000 or offset < 0:
            raise InvalidInputError("limit must be 1-1000 and offset >= 0")
        facts = [
            f
            for f in self._index(require_user(user_id)).facts()
            if (agent_id is None or f.agent_id == agent_id)
            and (wanted_category is None or f.category is wanted_category)
            and (wanted_status is None or f.status is wanted_status)
            and (thread_id is None or f.thread_id == thread_id)
            and (needle is None or needle in f.content.casefold())
        ]
        facts.sort(key=lambda f: (f.updated_at, f.id), reverse=True)
        return facts[offset : offset + limit]

    # writing -----------------------------------------------------------------

    def remember(
        self,
        content: str,
        *,
        user_id: str,
        category: str | Category,
        confidence: float = 0.9,
        agent_id: str | None = None,
        thread_id: str | None = None,
        source: Source | None = None,
        pinned: bool = False,
    ) -> Fact:
        """Store one fact, or confirm the one it duplicates; returns the stored fact."""
        item = {
            "content": content,
            "category": category,
            "confidence": confidence,
            "source": source,
            "pinned": pinned,
        }
        return self.remember_many([item], user_id=user_id, agent_id=agent_id, thread_id=thread_id)[
            0
        ]

    def remember_many(
        self,
        items: Iterable[Mapping[str, Any]],
        *,
        user_id: str,
        agent_id: str | None = None,
        thread_id: str | None = None,
    ) -> builtins.list[Fact]:
        """Store many facts in one embedding batch; duplicates confirm existing facts.

        Each item is a mapping with ``content``, ``category`` and optionally
        ``confidence``, ``pinned``, ``source``. Returns the stored fact for each item.
        """
        user_id = require_user(user_id)
        now = utcnow()
        candidates = [
            new_fact(i, user_id=user_id, agent_id=agent_id, thread_id=thread_id, now=now)
            for i in items
        ]
        if not candidates:
            return []
        vectors = embed_matrix(self.embeddings, [c.content for c in candidates])
        with self._write_lock:
            index = self._index(user_id)
            merged = merge_batch(
                candidates,
                vectors,
                index.nearest(vectors, agent_id=agent_id, k=3),
                threshold=self.config.dedup_similarity,
                now=now,
            )
            embedded = [fact for fact, _ in merged.embedded]
            rows = [row for _, row in merged.embedded]
            self._write(index, embedded, vectors[rows], merged.records)
        return merged.results

    def _write(
        self,
        index: UserIndex,
        embedded: builtins.list[Fact],
        vectors: Any,
        records: builtins.list[Fact],
    ) -> None:
        """Persist, then publish a new revision, then update this process's index."""
        if embedded:
            self.store.upsert(embedded, vectors)
        self.store.update_records(records)
        index.revision = self.store.bump_revision(index.user_id)
        if embedded:
            index.upsert(embedded, vectors)
        if records:
            index.upsert(records)

    def _save(self, index: UserIndex, facts: Sequence[Fact]) -> None:
        """Write facts of one user, embedding only those whose text changed."""
        stale = {
            f.id for f in facts if (old := index.get(f.id)) is None or old.content != f.content
        }
        embedded = [f for f in facts if f.id in stale]
        vectors = embed_matrix(self.embeddings, [f.content for f in embedded]) if embedded else None
        self._write(index, embedded, vectors, [f for f in facts if f.id not in stale])

    def put(self, facts: Sequence[Fact]) -> None:
        """Write whole fact records as they are; no dedup happens here.

        The extraction pipeline's way to apply a plan, and import's way in.
        """
        by_user: dict[str, builtins.list[Fact]] = {}
        for fact in facts:
            by_user.setdefault(fact.user_id, []).append(fact)
        for user_id, group in by_user.items():
            with self._write_lock:
                self._save(self._index(user_id), group)

    def update(
        self,
        fact_id: str,
        *,
        user_id: str | None = None,
        content: str | None = None,
        category: str | Category | None = None,
        confidence: float | None = None,
        pinned: bool | None = None,
        status: str | Status | None = None,
        reason: str | None = None,
    ) -> Fact:
        """Edit a fact; new content is re-embedded and the old text kept in history."""
        with self._write_lock:
            old = self.get(fact_id, user_id=user_id)
            fact = edit_fact(
                old, now=utcnow(), content=content, category=category, confidence=confidence,
                pinned=pinned, status=status, reason=reason,
            )  # fmt: skip
            self._save(self._index(old.user_id), [fact])
            return fact

    def forget(
        self,
        fact_id: str | None = None,
        *,
        user_id: str | None = None,
        thread_id: str | None = None,
        agent_id: str | None = None,
        purge: bool = False,
    ) -> int:
        """Forget one fact, or all of a user's (narrowed by thread or agent).

        Soft by default: facts leave recall but stay for audit and export.
        ``purge=True`` erases them with their vectors; purging a whole user also erases
        their profiles. Returns how many facts were affected.
        """
        with self._write_lock:
            if fact_id is not None:
                facts = [self.get(fact_id, user_id=user_id)]
                user_id = facts[0].user_id
            else:
                user_id = require_user(user_id)
                ids = self.store.ids_where(user_id, agent_id=agent_id, thread_id=thread_id)
                facts = self.store.get(ids, user_id=user_id)
            index = self._index(user_id)
            if purge:
                self.store.delete([f.id for f in facts], user_id=user_id)
                if fact_id is None and thread_id is None and agent_id is None:
                    self.store.delete_scope(user_id)
                index.remove(f.id for f in facts)
                index.revision = self.store.bump_revision(user_id)
            else:
                now = utcnow()
                gone = [
                    f.model_copy(update={"status": Status.DELETED, "updated_at": now})
                    for f in facts
                    if f.status is not Status.DELETED
                ]
                self._save(index, gone)
            return len(facts)

    # profiles, export and import ---------------------------------------------

    def get_profile(self, *, user_id: str, agent_id: str | None = None) -> Profile:
        """The user's profile (empty sections if none was written)."""
        user_id = require_user(user_id)
        stored = self.store.load_profile(user_id, agent_id)
        return stored or Profile(user_id=user_id, agent_id=agent_id)

    def set_profile(self, profile: Profile) -> Profile:
        """Replace the profile of ``profile.user_id`` (and ``agent_id``)."""
        require_user(profile.user_id)
        with self._write_lock:
            self.store.save_profile(profile)
            index = self._index(profile.user_id)
            index.revision = self.store.bump_revision(profile.user_id)
        return profile

    def export(self, *, user_id: str, agent_id: str | None = None) -> dict[str, Any]:
        """Every fact (all statuses) and profile of a user, in the versioned format."""
        facts = self._index(require_user(user_id)).facts()
        if agent_id is not None:
            facts = [f for f in facts if f.agent_id == agent_id]
        profiles = [p for a in {None, agent_id} if (p := self.store.load_profile(user_id, a))]
        return build_export(
            user_id, facts=sorted(facts, key=lambda f: f.created_at), profiles=profiles
        )

    def import_(self, data: Any) -> ImportReport:
        """Import an export; all rows are validated first and nothing is written if any fails."""
        checked = validate_import(data)
        rejected = list(checked.rejected)
        owners = {f.id: f.user_id for f in self.store.get([f.id for f in checked.facts])}
        rejected += [
            (row, f"fact id {f.id!r} already belongs to another user")
            for row, f in enumerate(checked.facts)
            if owners.get(f.id, f.user_id) != f.user_id
        ]
        if rejected:
            listing = "; ".join(f"row {r}: {why}" for r, why in rejected[:20])
            raise ImportRejectedError(
                f"import rejected, nothing was written ({len(rejected)} bad rows): {listing}",
                rejected,
            )
        self.put(checked.facts)
        for profile in checked.profiles:
            self.set_profile(profile)
        users = sorted({f.user_id for f in checked.facts} | {p.user_id for p in checked.profiles})
        return ImportReport(
            imported=len(checked.facts), profiles=len(checked.profiles), users=users
        )

    def close(self) -> None:
        """Write buffered access times. Safe to call more than once."""
        self._access.flush()

    def __enter__(self) -> Memory:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    arecall = async_twin(recall)
    aremember = async_twin(remember)
    aremember_many = async_twin(remember_many)
    aget = async_twin(get)
    alist = async_twin(list)
    aupdate = async_twin(update)
    aforget = async_twin(forget)
    anearest = async_twin(nearest)
    aput = async_twin(put)
    aget_profile = async_twin(get_profile)
    aset_profile = async_twin(set_profile)
    aexport = async_twin(export)
    aimport_ = async_twin(import_)
