"""The hot per-user index that recall searches: vectors, BM25 and filters in memory.

One user's facts live here as a numpy matrix of unit vectors plus derived arrays
(status, agent, category, confidence, age) and a lexical index
(:mod:`recallmem.retrieval.derived`), brought up to date row by row after a write.
Searching one user's few hundred facts this way takes well under a millisecond, where a
filtered Chroma query over a shared collection takes 100+ ms
(docs/decisions/0078-ranking.md). An index only ever holds one user's facts.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, tzinfo
from functools import cached_property

import numpy as np

from recallmem.facts.decay import Decay
from recallmem.retrieval.derived import Derived
from recallmem.retrieval.fusion import Centre, Scope, centre_of, nearest_cosine, relevance
from recallmem.retrieval.lexicon import Lexicon, default_lexicon
from recallmem.retrieval.matched_key import matched_key
from recallmem.retrieval.newer_first import newer_first
from recallmem.retrieval.ranking import Weights, top_k
from recallmem.retrieval.when import mentioned_window
from recallmem.text.words import has_cjk
from recallmem.types import Category, Fact, ScoredFact, ScoreParts, ScoreWeights

DEFAULT_DECAY = Decay()  # the configured defaults, for a query built without a Memory


@dataclass(frozen=True)
class Query:
    """What to search for and within which part of the user's memory."""

    text: str
    vector: np.ndarray
    tail_vector: np.ndarray | None = None  # of the last line of a dialogue tail (fusion)
    agent_id: str | None = None
    categories: frozenset[Category] | None = None
    include_inactive: bool = False
    k: int = 6
    min_score: float | None = None
    timezone: tzinfo = UTC  # the user's: where "yesterday" and "上周" begin and end
    decay: Decay = DEFAULT_DECAY  # the score's confidence part is the decayed confidence


def _lexicon_for(query: str, derived: Derived) -> Lexicon | None:
    # The dictionary is read on first need only: a memory and a query without Chinese
    # never pay for it.
    if has_cjk(query) or derived.cjk.any():
        return default_lexicon()
    return None


class UserIndex:
    """Facts and vectors of one user; all methods are thread-safe."""

    def __init__(self, user_id: str, facts: Sequence[Fact], vectors: np.ndarray) -> None:
        self.user_id = user_id
        self._lock = threading.RLock()
        self._facts = list(facts)
        self._vectors = vectors.astype(np.float32, copy=False)
        self._rows = {f.id: i for i, f in enumerate(self._facts)}
        self.revision = 0  # the user's writes it reflects: store/chroma/revisions.py

    def __len__(self) -> int:
        return len(self._facts)

    @cached_property
    def _derived(self) -> Derived:
        return Derived(self._facts)

    def _changed(self, replaced: Sequence[int] | None = None) -> None:
        # With the rows a change replaced (facts past the old end are new), the derived
        # arrays are brought up to date; without, computed again at the next search.
        derived = self.__dict__.pop("_derived", None)
        if derived is not None and replaced is not None:
            self.__dict__["_derived"] = derived.updated(self._facts, replaced)
        self.__dict__.pop("_centred", None)

    def _centre(self, weights: Weights) -> Centre | None:
        # Kept until the facts change: the mean and one product over the whole matrix.
        key = (weights.centring, weights.large_memory_facts)
        cached = self.__dict__.get("_centred")
        if cached is None or cached[0] != key:
            cached = self.__dict__["_centred"] = (key, centre_of(self._vectors, weights))
        centre: Centre | None = cached[1]
        return centre

    def get(self, fact_id: str) -> Fact | None:
        """The fact with this id, if this user has it."""
        with self._lock:
            row = self._rows.get(fact_id)
            return None if row is None else self._facts[row]

    def facts(self) -> list[Fact]:
        """A snapshot of every fact of the user."""
        with self._lock:
            return list(self._facts)

    def upsert(self, facts: Sequence[Fact], vectors: np.ndarray | None = None) -> None:
        """Add or replace facts; ``vectors`` may be None when no content changed."""
        with self._lock:
            fresh: list[int] = []
            replaced: list[int] = []
            for i, fact in enumerate(facts):
                if fact.user_id != self.user_id:
                    raise ValueError("a user's index only holds that user's facts")
                row = self._rows.get(fact.id)
                if row is None:
                    fresh.append(i)
                    continue
                self._facts[row] = fact
                replaced.append(row)
                if vectors is not None:
                    self._vectors[row] = vectors[i]
            if fresh:
                if vectors is None:
                    raise ValueError("new facts need their vectors")
                start = len(self._facts)
                self._facts.extend(facts[i] for i in fresh)
                added = vectors[fresh].astype(np.float32, copy=False)
                # An empty user may have been loaded before the store knew the dimension.
                self._vectors = np.vstack([self._vectors, added]) if len(self._vectors) else added
                self._rows.update((facts[i].id, start + n) for n, i in enumerate(fresh))
            self._changed(replaced)

    def touch(self, ids: Iterable[str], at: datetime) -> list[tuple[str, float]]:
        """Set last_accessed_at; the derived arrays are kept, their decay clock moved on."""
        with self._lock:
            touched = []
            derived = self.__dict__.get("_derived")
            for fact_id in ids:
                row = self._rows.get(fact_id)
                if row is not None:
                    self._facts[row] = self._facts[row].model_copy(update={"last_accessed_at": at})
                    touched.append((fact_id, at.timestamp()))
                    if derived is not None:
                        derived.alive[row] = max(derived.alive[row], at.timestamp())
            return touched

    def vectors(self, ids: Sequence[str]) -> np.ndarray:
        """The stored unit vectors of these facts, one row each (all must be this user's)."""
        with self._lock:
            return self._vectors[[self._rows[i] for i in ids]].copy()

    def remove(self, ids: Iterable[str]) -> None:
        """Drop facts (after a purge)."""
        with self._lock:
            gone = {self._rows[i] for i in ids if i in self._rows}
            if not gone:
                return
            keep = [r for r in range(len(self._facts)) if r not in gone]
            self._facts = [self._facts[r] for r in keep]
            self._vectors = self._vectors[keep]
            self._rows = {f.id: i for i, f in enumerate(self._facts)}
            self._changed()

    def _mask(self, derived: Derived, query: Query, now: datetime) -> np.ndarray:
        mask = np.ones(len(self._facts), dtype=bool)
        if not query.include_inactive:
            # Past its valid_until a fact is out at once, before maintenance marks it.
            mask &= derived.active & (derived.until > now.timestamp())
        mask &= derived.shared | (derived.agents == (query.agent_id or "\0"))
        if query.categories:
            wanted = np.array(sorted(c.value for c in query.categories), dtype=object)
            mask &= np.isin(derived.categories, wanted)
        return mask

    def search(self, query: Query, weights: Weights, now: datetime) -> list[ScoredFact]:
        """The best ``query.k`` facts in the query's scope, with their score parts."""
        with self._lock:
            if not self._facts:
                return []
            derived = self._derived
            rows = np.flatnonzero(self._mask(derived, query, now))
            if not rows.size:
                return []
            # Every fact in scope (the usual case): no copy of the whole matrix first.
            every = rows.size == len(self._facts)
            scored = relevance(
                query.text,
                Scope(
                    cosine=nearest_cosine(
                        self._vectors if every else self._vectors[rows],
                        query.vector,
                        query.tail_vector,
                        self._centre(weights),
                        None if every else rows,
                    ),
                    cjk=derived.cjk[rows],
                    age_days=(now.timestamp() - derived.seen[rows]) / 86400.0,
                    confidence=derived.confidence[rows]
                    * self._decay(derived, rows, query.decay, now),
                    said_at=derived.said[rows],
                    rows=rows,
                ),
                derived.lexical,
                _lexicon_for(query.text, derived),
                weights,
                mentioned_window(query.text, now.astimezone(query.timezone)),
            )
            scores, parts, weights = scored.scores, scored.parts, scored.weights
            changed, corrected = derived.change_flags
            newer = newer_first(scores, derived.said[rows], self._vectors, changed[rows],
                                None if every else rows, corrected[rows])  # fmt: skip
            scores = scores + newer
            if query.min_score is not None:
                scores = np.where(scores >= query.min_score, scores, -np.inf)
            best = [i for i in top_k(scores, query.k) if np.isfinite(scores[i])]
            used = ScoreWeights(
                dense=weights.dense,
                lexical=weights.lexical,
                recency=weights.recency,
                confidence=weights.confidence,
                time=0.0 if parts.time is None else weights.time,
                newer=1.0,
            )
            return [
                ScoredFact(
                    fact=self._facts[rows[i]],
                    score=round(float(scores[i]), 6),
                    weights=used,
                    parts=ScoreParts(
                        dense=round(float(parts.dense[i]), 4),
                        lexical=round(float(parts.lexical[i]), 4),
                        recency=round(float(parts.recency[i]), 4),
                        confidence=round(float(parts.confidence[i]), 4),
                        time=0.0 if parts.time is None else round(float(parts.time[i]), 4),
                        newer=round(float(newer[i]), 6),
                        key=matched_key(query.text, self._facts[rows[i]].questions),
                    ),
                )
                for i in best
            ]

    @staticmethod
    def _decay(derived: Derived, rows: np.ndarray, decay: Decay, now: datetime) -> np.ndarray:
        factors = decay.factors(
            derived.categories[rows], derived.pinned[rows], derived.alive[rows], now.timestamp()
        )
        return factors.astype(np.float32)

    def nearest(
        self, vectors: np.ndarray, *, agent_id: str | None, k: int, now: datetime | None = None
    ) -> list[list[tuple[Fact, float]]]:
        """For each vector, the ``k`` most similar active, unexpired facts in scope."""
        with self._lock:
            if not self._facts:
                return [[] for _ in range(len(vectors))]
            probe = Query(text="", vector=vectors[0], agent_id=agent_id)
            mask = self._mask(self._derived, probe, now or datetime.now(UTC))
            rows = np.flatnonzero(mask)
            cosines = vectors @ self._vectors[rows].T if rows.size else None
            result: list[list[tuple[Fact, float]]] = []
            for n in range(len(vectors)):
                if cosines is None:
                    result.append([])
                    continue
                best = top_k(cosines[n], k)
                result.append([(self._facts[rows[i]], float(cosines[n, i])) for i in best])
            return result


class IndexCache:
    """User indexes, loaded on first use, least recently used dropped past a fact budget."""

    def __init__(self, capacity_facts: int, load: Callable[[str], UserIndex]) -> None:
        self._capacity = capacity_facts
        self._load = load
        self._lock = threading.RLock()
        self._indexes: OrderedDict[str, UserIndex] = OrderedDict()

    def get(self, user_id: str) -> UserIndex:
        """The user's index, loading it if absent."""
        return self.fetch(user_id)[0]

    def fetch(self, user_id: str) -> tuple[UserIndex, bool]:
        """The user's index, and whether this call loaded it."""
        # Loads happen under the lock: two threads must never hold two copies of a user.
        with self._lock:
            index = self._indexes.get(user_id)
            if index is not None:
                self._indexes.move_to_end(user_id)
                return index, False
            index = self._load(user_id)
            self._indexes[user_id] = index
            self._shrink()
            return index, True

    def _shrink(self) -> None:
        held = sum(len(index) for index in self._indexes.values())
        while held > self._capacity and len(self._indexes) > 1:
            _, dropped = self._indexes.popitem(last=False)
            held -= len(dropped)

    def drop(self, user_id: str) -> None:
        """Forget a user's index; the next use reloads it."""
        with self._lock:
            self._indexes.pop(user_id, None)
