"""Reading a user's memory by relevance: recall and nearest by meaning. Reading writes nothing."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import tzinfo

from recallmem.config import MemoryConfig
from recallmem.facts.decay import Decay
from recallmem.facts.validation import (
    check_flag,
    check_min_score,
    check_query,
    optional_key,
    parse_categories,
    require_user,
)
from recallmem.persistence.repository import FactRepository
from recallmem.retrieval.fusion import dialogue_tail
from recallmem.retrieval.index import Query
from recallmem.retrieval.ranking import Weights
from recallmem.retrieval.when import user_zone
from recallmem.types import Category, ScoredFact, ScoreParts


class Reading:
    """Checks a read's input, fills the configured defaults and asks the repository."""

    def __init__(
        self, repository: FactRepository, config: MemoryConfig, weights: Weights, decay: Decay
    ) -> None:
        self.repository = repository
        self.config = config
        self.weights = weights
        self.decay = decay

    def recall(
        self,
        query: str,
        *,
        user_id: str,
        k: int | None,
        agent_id: str | None,
        categories: Iterable[str | Category] | None,
        min_score: float | None,
        include_inactive: bool,
        timezone: str | tzinfo | None,
    ) -> list[ScoredFact]:
        """The user's facts most relevant to ``query``, best first (``Memory.recall``)."""
        query, k = check_query(query, self.config.recall_k if k is None else k)
        user_id = require_user(user_id)
        tail = dialogue_tail(query)
        search = Query(
            text=query,
            vector=self.repository.embed_query(query),
            tail_vector=None if tail is None else self.repository.embed_query(tail),
            agent_id=optional_key(agent_id, "agent_id"),
            categories=parse_categories(categories),
            include_inactive=check_flag(include_inactive, "include_inactive"),
            k=k,
            min_score=check_min_score(min_score),
            timezone=user_zone(timezone),
            decay=self.decay,
        )
        return self.repository.search(user_id, search, self.weights)

    def nearest(
        self, texts: Sequence[str], *, user_id: str, agent_id: str | None, k: int
    ) -> list[list[ScoredFact]]:
        """For each text, the ``k`` most similar active facts by meaning alone."""
        user_id, agent_id = require_user(user_id), optional_key(agent_id, "agent_id")
        rows = self.repository.nearest(list(texts), user_id=user_id, agent_id=agent_id, k=k)
        return [
            [ScoredFact(fact=f, score=c, parts=ScoreParts(dense=max(c, 0.0))) for f, c in row]
            for row in rows
        ]
