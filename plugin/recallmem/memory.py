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
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from functools import cached_property
from typing import TYPE_CHECKING, Any

from langchain_core.embeddings import Embeddings
from langchain_core.language_models import BaseChatModel

from recallmem._async import async_twin
from recallmem.config import MemoryConfig
from recallmem.dedup import merge_batch
from recallmem.errors import FactNotFoundError
from recallmem.listing import select
from recallmem.portability import ImportReport, accept_import, build_export
from recallmem.repository import FactRepository
from recallmem.retrieval.index import Query
from recallmem.retrieval.ranking import Weights
from recallmem.store.chroma import FactStore, open_client
from recallmem.store.embeddings import (
    default_embeddings,
    embed_matrix,
    embed_query_vector,
    embedder_name,
)
from recallmem.types import Category, Fact, Profile, ScoredFact, ScoreParts, Source, Status, utcnow
from recallmem.validation import check_query, edit_fact, new_fact, parse_categories, require_user

if TYPE_CHECKING:
    from recallmem.extraction.backlog import DeadLetter, PendingEntry
    from recallmem.extraction.pipeline import ExtractionPipeline, Observation
    from recallmem.extraction.report import ExtractionReport


_MERGE_BATCH = 1000


class Memory:
    """Long-term memory of typed facts per user, in Chroma, recalled offline.

    Args:
        config: settings; by default read from ``RECALLMEM_*`` environment variables.
        embeddings: any LangChain ``Embeddings``; by default the built-in one named by
            ``config.embedder`` (the offline multilingual Universal Sentence Encoder unless
            set to "e5"). A collection refuses an embedder it was not built with
            (``EmbeddingMismatchError``).
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
        self.embeddings = embeddings or default_embeddings(self.config.embedder)
        self.model = model
        if model is None and self.config.llm_model:
            from recallmem.extraction.chain import model_from_config

            self.model = model_from_config(self.config)
        self.weights = Weights(half_life_days=self.config.recency_half_life_days)
        declared = getattr(self.embeddings, "dimension", None)
        self.store = FactStore(
            open_client(self.config),
            self.config.collection,
            embedder_name(self.embeddings),
            declared if isinstance(declared, int) else None,
        )
        self._repo = FactRepository(self.store, self.embeddings, self.config.index_cache_facts)

    # reading -----------------------------------------------------------------

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
        index = self._repo.index(require_user(user_id))
        vector = embed_query_vector(self.embeddings, query)
        self.store.check_dimension(len(vector))
        search = Query(
            text=query,
            vector=vector,
            agent_id=agent_id,
            categories=parse_categories(categories),
            include_inactive=include_inactive,
            k=k,
            min_score=min_score,
        )
        now = utcnow()
        hits = index.search(search, self.weights, now)
        self._repo.access.add(index.touch([hit.fact.id for hit in hits], now))
        return [h.model_copy(update={"fact": index.get(h.fact.id) or h.fact}) for h in hits]

    def revision(self, user_id: str) -> str | None:
        """A token that changes whenever the user's memory (facts or profile) changes."""
        return self.store.revision(require_user(user_id))

    def nearest(
        self, texts: Sequence[str], *, user_id: str, agent_id: str | None = None, k: int = 5
    ) -> list[list[ScoredFact]]:
        """For each text, the ``k`` most similar active facts by meaning alone."""
        index = self._repo.index(require_user(user_id))
        vectors = embed_matrix(self.embeddings, list(texts))
        self.store.check_dimension(vectors.shape[1])
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
        facts = self._repo.index(require_user(user_id)).facts()
        return select(facts, agent_id=agent_id, category=category, status=status,
                      thread_id=thread_id, text=text, limit=limit, offset=offset)  # fmt: skip

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
        (fact,) = self.remember_many(
            [item], user_id=user_id, agent_id=agent_id, thread_id=thread_id
        )
        return fact

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
        results: builtins.list[Fact] = []
        for start in range(0, len(candidates), _MERGE_BATCH):
            results += self._remember_batch(candidates[start : start + _MERGE_BATCH], now)
        return results

    def _remember_batch(
        self, candidates: builtins.list[Fact], now: datetime
    ) -> builtins.list[Fact]:
        # A batch is compared with itself as one matrix, so its size bounds time and memory;
        # later batches see earlier ones through the index.
        vectors = embed_matrix(self.embeddings, [c.content for c in candidates])
        self.store.check_dimension(vectors.shape[1])
        with self._repo.writing(candidates[0].user_id) as index:
            merged = merge_batch(
                candidates,
                vectors,
                index.nearest(vectors, agent_id=candidates[0].agent_id, k=3),
                threshold=self.config.dedup_similarity,
                now=now,
            )
            embedded = [fact for fact, _ in merged.embedded]
            rows = [row for _, row in merged.embedded]
            self._repo.write(index, embedded, vectors[rows], merged.records)
        return merged.results

    def put(self, facts: Sequence[Fact]) -> None:
        """Write whole fact records as they are; no dedup happens here.

        The extraction pipeline's way to apply a plan, and import's way in.
        """
        by_user: dict[str, builtins.list[Fact]] = {}
        for fact in facts:
            by_user.setdefault(fact.user_id, []).append(fact)
        for user_id, group in by_user.items():
            with self._repo.writing(user_id) as index:
                self._repo.save(index, group)

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
        old = self.get(fact_id, user_id=user_id)
        with self._repo.writing(old.user_id) as index:
            old = self.get(fact_id, user_id=old.user_id)  # as of now that we hold the lock
            fact = edit_fact(
                old, now=utcnow(), content=content, category=category, confidence=confidence,
                pinned=pinned, status=status, reason=reason,
            )  # fmt: skip
            self._repo.save(index, [fact])
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
        if fact_id is not None:
            user_id = self.get(fact_id, user_id=user_id).user_id
        user_id = require_user(user_id)
        whole_user = fact_id is None and thread_id is None and agent_id is None
        if fact_id is None and self.config.queue_path.exists():
            # Queued words of that scope would bring the facts back.
            self.extraction.purge(user_id, thread_id=thread_id, agent_id=agent_id)
        with self._repo.writing(user_id) as index:
            ids = [fact_id] if fact_id else self.store.ids_where(
                user_id, agent_id=agent_id, thread_id=thread_id
            )  # fmt: skip
            facts = self.store.get(ids, user_id=user_id)
            if purge:
                self._repo.purge(index, facts, whole_user=whole_user)
            else:
                now = utcnow()
                self._repo.save(index, [
                    f.model_copy(update={"status": Status.DELETED, "updated_at": now})
                    for f in facts if f.status is not Status.DELETED
                ])  # fmt: skip
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
        self.store.save_profile(profile)
        self._repo.published(profile.user_id)
        return profile

    def export(self, *, user_id: str, agent_id: str | None = None) -> dict[str, Any]:
        """Every fact (all statuses) and profile of a user, in the versioned format."""
        facts = self._repo.index(require_user(user_id)).facts()
        if agent_id is not None:
            facts = [f for f in facts if f.agent_id == agent_id]
        profiles = [p for a in {None, agent_id} if (p := self.store.load_profile(user_id, a))]
        return build_export(
            user_id, facts=sorted(facts, key=lambda f: f.created_at), profiles=profiles
        )

    def import_(self, data: Any) -> ImportReport:
        """Import an export; all rows are validated first and nothing is written if any fails."""
        checked = accept_import(data, lambda ids: {f.id: f.user_id for f in self.store.get(ids)})
        self.put(checked.facts)
        for profile in checked.profiles:
            self.set_profile(profile)
        return checked.report()

    # extraction ------------------------------------------------------------------

    @cached_property
    def extraction(self) -> ExtractionPipeline:
        """The durable extraction queue and worker (created on first use)."""
        from recallmem.extraction.pipeline import ExtractionPipeline

        return ExtractionPipeline(self, self.model, self.config)

    def start_background(self) -> None:
        """Start extracting queued windows in a background thread as they fall due.

        Called by ``MemoryMiddleware``, the service and the first ``observe``; opening a
        ``Memory`` or reading from it never starts model calls. Without a model it does
        nothing (windows stay queued).
        """
        self.extraction.start_background()

    def observe(
        self,
        messages: Sequence[Any],
        *,
        user_id: str,
        thread_id: str,
        agent_id: str | None = None,
    ) -> Observation:
        """Queue a finished turn (or the whole conversation) for extraction; returns at once.

        Windows are debounced per thread and written durably before this returns.
        """
        return self.extraction.observe(
            messages, user_id=user_id, thread_id=thread_id, agent_id=agent_id
        )

    def extract(
        self,
        messages: Sequence[Any],
        *,
        user_id: str,
        thread_id: str,
        agent_id: str | None = None,
    ) -> ExtractionReport:
        """Extract now and report what was added, confirmed, superseded and dropped, and why."""
        return self.extraction.extract(
            messages, user_id=user_id, thread_id=thread_id, agent_id=agent_id
        )

    def flush(self, timeout: float | None = None) -> builtins.list[ExtractionReport]:
        """Extract every pending window now, waiting at most ``timeout`` seconds."""
        return self.extraction.flush(timeout)

    def pending(self, user_id: str | None = None) -> builtins.list[PendingEntry]:
        """Windows waiting for extraction (with their user, thread and messages)."""
        if not self.config.queue_path.exists():  # nothing queued, and no file to create
            return []
        return self.extraction.pending(user_id)

    def dead_letters(self, user_id: str | None = None) -> builtins.list[DeadLetter]:
        """Windows that failed every retry, with the reason."""
        if not self.config.queue_path.exists():
            return []
        return self.extraction.dead_letters(user_id)

    def retry_dead_letter(self, letter_id: int) -> None:
        """Put a dead letter back in the queue."""
        self.extraction.retry_dead_letter(letter_id)

    def close(self, timeout: float = 10.0) -> None:
        """Flush pending extraction within ``timeout`` and buffered access times.

        Safe to call more than once; what cannot be extracted in time stays queued.
        """
        if "extraction" in self.__dict__:
            self.extraction.close(timeout)
        self._repo.access.flush()

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
    arevision = async_twin(revision)
    aput = async_twin(put)
    aget_profile = async_twin(get_profile)
    aset_profile = async_twin(set_profile)
    aexport = async_twin(export)
    aimport_ = async_twin(import_)
    aobserve = async_twin(observe)
    aextract = async_twin(extract)
    aflush = async_twin(flush)
    apending = async_twin(pending)
    adead_letters = async_twin(dead_letters)
