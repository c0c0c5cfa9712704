"""Run one system over one dataset: store, query, score, time.

Add time is wall time over every ``add`` call (embedding included); search time is per
query (query embedding included), after one untimed warm-up query per user so lazy
loading is not billed to the first query.
"""

from __future__ import annotations

import resource
import time
from collections import Counter
from dataclasses import asdict, dataclass, field
from typing import Any

from bench.data import Corpus, Dataset
from bench.metrics import ScoredQuery, percentiles_ms, recall_table, score_query
from bench.systems.base import Hit, System


@dataclass
class RunResult:
    """Everything measured for one system on one dataset."""

    system: str
    dataset: str
    n_docs: int
    n_queries: int
    recall: dict[str, dict[int, float]]
    add_seconds: float
    search_ms: dict[str, float]
    peak_rss_mb: float | None = None
    baseline_rss_mb: float | None = None
    query_counts: dict[str, int] = field(default_factory=dict)
    options: dict[str, Any] = field(default_factory=dict)

    @property
    def adds_per_second(self) -> float:
        return round(self.n_docs / self.add_seconds, 1) if self.add_seconds else 0.0

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["adds_per_second"] = self.adds_per_second
        data["recall"] = {c: {str(k): v for k, v in row.items()} for c, row in self.recall.items()}
        return data


def peak_rss_mb() -> float:
    """This process's peak resident memory so far, in MB (Linux reports KB)."""
    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0, 1)


def cited_evidence(hits: list[Hit], corpus: Corpus) -> list[frozenset[str]]:
    """The evidence ids each hit cites: the union over the documents it stands for."""
    evidence = {doc.id: doc.evidence for doc in corpus.docs}
    return [frozenset().union(*(evidence.get(d, frozenset()) for d in hit)) for hit in hits]


def run(system: System, dataset: Dataset, *, options: dict[str, Any] | None = None) -> RunResult:
    """Store every corpus, ask every query, and score the rankings."""
    k_max = max(dataset.ks)
    add_seconds = 0.0
    durations: list[float] = []
    scored: list[ScoredQuery] = []
    for corpus in dataset.corpora:
        started = time.perf_counter()
        system.add(corpus.user_id, corpus.docs)
        add_seconds += time.perf_counter() - started
        if corpus.queries:
            system.search(corpus.user_id, corpus.queries[0].text, k_max)  # warm-up
        for query in corpus.queries:
            started = time.perf_counter()
            hits = system.search(corpus.user_id, query.text, k_max)
            durations.append(time.perf_counter() - started)
            cited = cited_evidence(hits, corpus)
            scored.append(score_query(query.category, query.gold, cited, dataset.ks))
    return RunResult(
        system=system.name,
        dataset=dataset.name,
        n_docs=dataset.n_docs,
        n_queries=dataset.n_queries,
        recall=recall_table(scored, dataset.ks),
        add_seconds=round(add_seconds, 3),
        search_ms=percentiles_ms(durations),
        options=dict(options or {}),
        query_counts=dict(Counter(row.category for row in scored)),
    )
