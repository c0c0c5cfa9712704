"""``Memory``: the facade that composes the fact repository and the extraction pipeline.

Storage and retrieval live in :class:`~recallmem.persistence.repository.FactRepository`
(over Chroma, or the process's memory with ``MemoryConfig(store="memory")``), extraction
in :class:`~recallmem.extraction.pipeline.ExtractionPipeline`. This class holds the public
signatures; each method checks what it can in one line and hands the call to one part of
:mod:`recallmem.operations` (reading, writing, extracting, porting, the queue, health) or
to the repository.

>>> from recallmem.testing import HashingEmbeddings
>>> memory = Memory(MemoryConfig(store="memory"), embeddings=HashingEmbeddings())
>>> fact = memory.remember("Prefers reports in Chinese", user_id="ada", category="preference")
>>> [hit.fact.content for hit in memory.recall("report language", user_id="ada")]
['Prefers reports in Chinese']
>>> memory.close()
"""

from __future__ import annotations

import builtins
import shutil
import weakref
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime, tzinfo
from typing import TYPE_CHECKING, Any

from langchain_core.embeddings import Embeddings
from langchain_core.language_models import BaseChatModel

from recallmem._async import async_twin
from recallmem.config import MemoryConfig
from recallmem.embedders import default_embeddings
from recallmem.facts.decay import Decay
from recallmem.facts.export_format import ImportReport
from recallmem.facts.listing import select
from recallmem.facts.validation import (
    check_fact_id,
    check_fact_ids,
    optional_key,
    optional_text,
    require_user,
)
from recallmem.limits import DEFAULT_PAGE
from recallmem.memory_background import BackgroundWork
from recallmem.operations.extracting import Extracting, configured_model
from recallmem.operations.health import MemoryHealth, check_health
from recallmem.operations.maintaining import Maintaining
from recallmem.operations.porting import Porting
from recallmem.operations.queue_admin import QueueAdmin
from recallmem.operations.reading import Reading
from recallmem.operations.writing import Writing
from recallmem.persistence.repository import FactRepository
from recallmem.retrieval.ranking import Weights
from recallmem.retrieval.shown import RetrievalRecord
from recallmem.store.backends import scratch_config
from recallmem.types import Category, Fact, Profile, ScoredFact, Source, Status

if TYPE_CHECKING:
    from recallmem.extraction.proposal import ProposalOutcome


class Memory(BackgroundWork):
    """Long-term memory of typed facts per user, in Chroma (or the process), recalled offline.

    Opening reads nothing but the collection's settings: no text is embedded and no
    thread starts until a call needs it (see :meth:`start_background`). With
    ``config.store == "memory"`` nothing outlives :meth:`close`: the facts stay in this
    process and the queue and journals go to a temporary directory instead of ``home``.

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
        self.config = config = scratch_config(config or MemoryConfig())
        if config.store == "memory":  # removed at close, or when this object is collected
            self._scratch = weakref.finalize(self, shutil.rmtree, config.home, True)
        self.embeddings = embeddings or default_embeddings(config)
        self.model = configured_model(model, config)
        self.weights = Weights(half_life_days=config.recency_half_life_days)
        self.repository = repository = FactRepository.open(config, self.embeddings)
        self._extracting = Extracting(repository, self.model, config)
        self._reading = Reading(repository, config, self.weights, Decay.from_config(config))
        self._writing = Writing(repository, config, self._extracting)
        self._porting = Porting(repository, config)
        self._maintaining = Maintaining(repository, config)
        self.queue = QueueAdmin(self._extracting)
        """The extraction queue's administration: pending windows, dead letters, usage."""

    # reading -----------------------------------------------------------------

    def recall(self, query: str, *, user_id: str, k: int | None = None, agent_id: str | None = None,
               categories: Iterable[str | Category] | None = None, min_score: float | None = None,
               include_inactive: bool = False, timezone: str | tzinfo | None = None,
               ) -> list[ScoredFact]:  # fmt: skip
        """The user's facts most relevant to ``query``, best first, with score parts.

        Searches the user's shared facts plus ``agent_id``'s own; only active facts
        whose ``valid_until`` has not passed, unless ``include_inactive``. The score's
        ``confidence`` part is the decayed confidence (:mod:`recallmem.facts.decay`).
        ``k`` defaults to ``config.recall_k``. ``timezone`` (an IANA name or a ``tzinfo``;
        UTC if None) is the user's, where "yesterday" or "上周" in the query begin and end.
        """
        return self._reading.recall(query, user_id=user_id, k=k, agent_id=agent_id,
            categories=categories, min_score=min_score, include_inactive=include_inactive,
            timezone=timezone)  # fmt: skip

    def revision(self, user_id: str) -> str | None:
        """A token that changes whenever the user's memory (facts or profile) changes."""
        return self.repository.revision(require_user(user_id))

    def nearest(self, texts: Sequence[str], *, user_id: str, agent_id: str | None = None,
                k: int = 5) -> list[list[ScoredFact]]:  # fmt: skip
        """For each text, the ``k`` most similar active facts by meaning alone."""
        return self._reading.nearest(texts, user_id=user_id, agent_id=agent_id, k=k)

    def get(self, fact_id: str, *, user_id: str | None = None) -> Fact:
        """One fact by id; with ``user_id``, only if it is that user's."""
        return self.repository.get(check_fact_id(fact_id), user_id=user_id)

    def list(self, *, user_id: str, agent_id: str | None = None,
             category: str | Category | None = None, status: str | Status | None = Status.ACTIVE,
             thread_id: str | None = None, text: str | None = None, limit: int = DEFAULT_PAGE,
             offset: int = 0) -> builtins.list[Fact]:  # fmt: skip
        """The user's facts, newest first, filtered and paginated. ``status=None`` lists all."""
        return select(self.repository.facts(require_user(user_id)), agent_id=agent_id,
            category=category, status=status, thread_id=thread_id, text=text, limit=limit,
            offset=offset)  # fmt: skip

    def count(self) -> int:
        """How many facts the store holds, all users together."""
        return self.repository.count()

    def users(self, *, text: str | None = None) -> builtins.list[str]:
        """Ids of the users with facts stored, sorted; ``text`` keeps those containing it
        (case-insensitive). A scan of the id directory: for admin views, not hot paths."""
        needle = optional_text(text, "text")
        found = self.repository.users()
        return [u for u in found if needle.casefold() in u.casefold()] if needle else found

    def retrievals(self, user_id: str, *, thread_id: str | None = None,
                   limit: int = DEFAULT_PAGE) -> builtins.list[RetrievalRecord]:  # fmt: skip
        """What reached the user's models (in one thread if given), newest first."""
        return self._writing.records.latest(user_id, thread_id=thread_id, limit=limit)

    # writing -----------------------------------------------------------------

    def remember(self, content: str, *, user_id: str, category: str | Category,
                 confidence: float = 0.9, agent_id: str | None = None,
                 thread_id: str | None = None, source: Source | None = None,
                 pinned: bool = False, valid_until: datetime | str | None = None,
                 keywords: Sequence[str] = (), questions: Sequence[str] = ()) -> Fact:  # fmt: skip
        """Store one fact, or confirm the one it duplicates; returns the stored fact.

        ``valid_until`` (a timezone-aware datetime or an ISO 8601 string with an offset)
        is when the fact stops being true: from then on it is not recalled. A past
        value stores the fact already expired. ``keywords``: words recall matches too.
        ``questions``: search keys, the questions the fact answers (in the user's
        language and the other) and perhaps a paraphrase, embedded with it; without
        any, the keying step writes some when a model is configured.
        """
        item = {"content": content, "category": category, "confidence": confidence,
                "source": source, "pinned": pinned, "valid_until": valid_until,
                "keywords": keywords, "questions": questions}  # fmt: skip
        facts = self.remember_many([item], user_id=user_id, agent_id=agent_id, thread_id=thread_id)
        return facts[0]

    def remember_many(self, items: Iterable[Mapping[str, Any]], *, user_id: str,
                      agent_id: str | None = None, thread_id: str | None = None,
                      ) -> builtins.list[Fact]:  # fmt: skip
        """Store many facts in one embedding batch; duplicates confirm existing facts.

        Each item is a mapping with ``content``, ``category`` and optionally ``confidence``,
        ``pinned``, ``source``, ``valid_until``, ``keywords``, ``questions``. Returns the
        stored fact for each item.
        """
        return self._writing.remember_many(items, user_id=user_id, agent_id=agent_id,
                                           thread_id=thread_id)  # fmt: skip

    def remember_proposed(self, content: str, *, user_id: str, category: str | Category,
                          confidence: float = 0.9, agent_id: str | None = None,
                          thread_id: str | None = None, message_id: str | None = None,
                          keywords: Sequence[str] = (), questions: Sequence[str] = (),
                          learned_in: str | None = None) -> ProposalOutcome:  # fmt: skip
        """Store a fact an agent's model proposed (the ``remember`` tool) under extraction's
        rules (:mod:`recallmem.extraction.admission`); its source is ``planner`` (with the
        message it answered and ``learned_in``, the agent whose run it came from)."""
        return self._writing.remember_proposed(content, user_id=user_id, category=category,
            confidence=confidence, agent_id=agent_id, thread_id=thread_id,
            message_id=message_id, keywords=keywords, learned_in=learned_in,
            questions=questions)  # fmt: skip

    def record_retrieval(self, record: RetrievalRecord) -> None:
        """Keep what one retrieval put before a model (durable, bounded, erased by purges)."""
        self._writing.records.add(RetrievalRecord.model_validate(record))

    def put(self, facts: Sequence[Fact]) -> None:
        """Write whole fact records as they are; no dedup happens here (import's way in).
        An id must be one the API's paths can name, and not another user's fact's."""
        self.repository.put(check_fact_ids(facts))

    def update(self, fact_id: str, *, user_id: str | None = None, content: str | None = None,
               category: str | Category | None = None, confidence: float | None = None,
               pinned: bool | None = None, status: str | Status | None = None,
               reason: str | None = None, valid_until: datetime | str | None = None,
               keywords: Sequence[str] | None = None,
               questions: Sequence[str] | None = None) -> Fact:  # fmt: skip
        """Edit a fact; new content is re-embedded and the old text kept in history.

        ``questions`` replaces its search keys (``[]`` clears them for good); new content
        given without them drops the old keys, and the keying step writes new ones.

        ``status="active"`` restores a faded fact (its decay clock restarts); an expired
        one also needs a later ``valid_until``.
        """
        return self._writing.update(fact_id, user_id, content=content, category=category,
            confidence=confidence, pinned=pinned, status=status, reason=reason,
            valid_until=valid_until, keywords=keywords, questions=questions)  # fmt: skip

    def move(self, fact_id: str, *, agent_id: str | None, user_id: str | None = None) -> Fact:
        """Move a fact between scopes: to the user's shared memory (``agent_id=None``), seen
        by every agent, or to one agent's own. The move is kept in the fact's history."""
        return self._writing.move(fact_id, user_id, agent_id)

    def forget(self, fact_id: str | None = None, *, user_id: str | None = None,
               thread_id: str | None = None, agent_id: str | None = None,
               purge: bool = False) -> int:  # fmt: skip
        """Forget one fact, or all of a user's (narrowed by thread or agent).

        Soft by default: facts leave recall but stay for audit and export.
        ``purge=True`` erases them with their vectors; purging a whole user also erases
        their profiles. Returns how many facts were affected.
        """
        return self._writing.forget(fact_id, user_id=user_id, thread_id=thread_id,
                                    agent_id=agent_id, purge=purge)  # fmt: skip

    def get_profile(self, *, user_id: str, agent_id: str | None = None) -> Profile:
        """The user's profile (empty sections if none was written)."""
        agent_id = optional_key(agent_id, "agent_id")
        return self.repository.profile(user_id=require_user(user_id), agent_id=agent_id)

    def set_profile(self, profile: Profile) -> Profile:
        """Replace the profile of ``profile.user_id`` (and ``agent_id``)."""
        return self._writing.set_profile(profile)

    # portability -------------------------------------------------------------

    def export(self, *, user_id: str, agent_id: str | None = None,
               embeddings: bool = False) -> dict[str, Any]:  # fmt: skip
        """Every fact (all statuses) and profile of a user, in the versioned format; with
        ``embeddings``, their vectors too (an import with the same embedder keeps them)."""
        return self._porting.export(user_id, agent_id, embeddings)

    def import_(self, data: Any) -> ImportReport:
        """Import an export; all rows are validated first and nothing is written if any fails."""
        return self._porting.import_(data)

    def copy(self, *, from_user_id: str, to_user_id: str, from_agent_id: str | None = None,
             to_agent_id: str | None = None, categories: Iterable[str | Category] | None = None,
             ids: Sequence[str] | None = None) -> builtins.list[Fact]:  # fmt: skip
        """Copy a scope's active facts (narrowed by category or id) into another scope.

        Each copy is a new fact whose ``copied_from`` names the original; one that
        duplicates a destination fact confirms it instead. An agent id of None is the
        user's shared scope. Returns the destination fact of each copied fact.
        """
        return self._maintaining.copy(from_user_id, to_user_id, from_agent_id, to_agent_id,
                                      categories, ids)  # fmt: skip

    # the service ------------------------------------------------------------------

    def health(self, timeout: float | None = None) -> MemoryHealth:
        """Whether the store reads (giving up after ``timeout`` seconds, if given), this
        process still owns the store's home, and the extraction queue works."""
        return check_health(self.repository.store, self.queue, timeout)

    def announce_service(self, url: str, *, open_access: bool) -> None:
        """Name the service at ``url`` in the embedded home's lock file, where the CLI
        looks for whom to ask (nothing for other stores)."""
        self.repository.store.announce(url, open_access=open_access)

    def close(self, timeout: float = 10.0) -> None:
        """Flush pending extraction within ``timeout`` and the noted access times.

        Safe to call more than once; what cannot be extracted in time stays queued.
        """
        self._extracting.close(timeout)
        self._maintaining.close(timeout)
        self.repository.flush_access_times()
        self._writing.records.close()
        self.repository.store.close()
        if self.config.store == "memory":
            self._scratch()

    def __enter__(self) -> Memory:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    arecall = async_twin(recall)
    aremember = async_twin(remember)
    aremember_many = async_twin(remember_many)
    aremember_proposed = async_twin(remember_proposed)
    arecord_retrieval = async_twin(record_retrieval)
    aretrievals = async_twin(retrievals)
    aget = async_twin(get)
    alist = async_twin(list)
    aupdate = async_twin(update)
    aforget = async_twin(forget)
    amove = async_twin(move)
    anearest = async_twin(nearest)
    arevision = async_twin(revision)
    aput = async_twin(put)
    aget_profile = async_twin(get_profile)
    aset_profile = async_twin(set_profile)
    aexport = async_twin(export)
    aimport_ = async_twin(import_)
    acopy = async_twin(copy)
    acount = async_twin(count)
    ausers = async_twin(users)
    ahealth = async_twin(health)
    aclose = async_twin(close)
