"""What each ranking technique adds, benchmark by benchmark, and what it costs in latency.

Runs recallmem's ranking core itself (``LexicalIndex``, ``score_parts``, ``fuse``,
``top_k`` from ``recallmem.retrieval``) over precomputed USE vectors, so a dozen
configurations take a minute instead of an hour of Chroma writes; the default row is
also measured end to end through the public API in the LoCoMo and MADial sections.
Steps are cumulative up to the default; the rows after it are candidates measured and
left out, with the reason. Techniques were kept or dropped on the dev splits.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from functools import cached_property
from typing import Any

import numpy as np
from recallmem.retrieval.evidence import coverage
from recallmem.retrieval.lexical import LexicalIndex
from recallmem.retrieval.lexicon import default_lexicon
from recallmem.retrieval.ranking import Weights, fuse, lexical_trust, score_parts, top_k
from recallmem.retrieval.when import mentioned_window
from recallmem.text.words import has_cjk, mostly_cjk

from bench.data import Corpus, Dataset, load_dataset
from bench.metrics import OVERALL, ScoredQuery, percentiles_ms, recall_table, score_query
from bench.quality import SPLITS
from bench.report import machine_note, markdown_table, save_results, write_section
from bench.systems import BatchCachedEncoder

DATASETS = ("locomo-fact", "madial")
NOW = datetime.now(UTC)


@dataclass(frozen=True)
class Step:
    """One configuration of the ranking core."""

    label: str
    weights: Weights
    stemming: bool = True
    question_words: bool = False
    line_weight: float = 0.0  # > 0: also match the query's best line (multi-vector query)
    tail_weight: float = 0.0  # > 0: add the query's last line to its vector (dialogue end)
    centering: bool = False  # subtract the user's mean vector (hubness reduction)
    hubness: float = 0.0  # > 0: CSLS, minus each fact's mean cosine to its 10 neighbours
    prf: tuple[int, float] | None = None  # Rocchio: (top m, beta)
    mmr: float = 0.0  # > 0: maximal marginal relevance re-ranking with this lambda
    together: float = 0.0  # > 0: bonus from the best facts said at the same time
    calibrated: bool = False  # the library's evidence: share of IDF mass, translated, trusted
    note: str = ""


def steps() -> list[Step]:
    """From dense-only to the default (cumulative), then the candidates left out."""
    default = Weights()
    off = replace(default, lexical=0.0, lexical_cjk=0.0, time=0.0, recency=0.0, confidence=0.0)
    bm25 = replace(off, lexical=default.lexical_cjk, lexical_cjk=default.lexical_cjk)
    timed = replace(bm25, time=default.time)
    return [
        Step("dense only (USE cosine)", off),
        Step("+ BM25, words + CJK uni/bigrams, max-normalised fusion", bm25, False, True),
        Step("+ light English stemming", bm25, True, True),
        Step("+ question words dropped from queries", bm25),
        Step("+ time-aware scoring", timed),
        Step("+ lexical weight by script (0.2 words, 0.12 CJK)",
             replace(timed, lexical=default.lexical)),
        Step("+ calibrated lexical evidence, translated, trusted by script",
             replace(default, length_b=0.5, lexical_one_script=default.lexical,
                     lexical_cjk_one_script=default.lexical_cjk), calibrated=True),
        Step("+ translations by length (b 1.0), more lexical in one-script memories = **default**",
             default, calibrated=True),
        Step("candidate: + multi-line query vectors", default, line_weight=0.3,
             note="left out: loses on MADial dev; needs the query's lines embedded"),
        Step("candidate: + last line of a dialogue query added to its vector", default,
             tail_weight=1.0, note="left out: loses on MADial dev (wins on test: noise)"),
        Step("candidate: + corpus-mean centering", default, centering=True,
             note="left out: helps LoCoMo, hurts MADial on dev"),
        Step("candidate: + hubness correction (CSLS, 0.2)", default, hubness=0.2,
             note="left out: helps LoCoMo, hurts MADial on dev (related memories cluster)"),
        Step("candidate: + pseudo-relevance feedback (Rocchio m=5, β=0.2)", default,
             prf=(5, 0.2), note="left out: no gain on dev"),
        Step("candidate: + diversity (MMR, λ=0.8)", default, mmr=0.8,
             note="left out: loses on MADial dev"),
        Step("candidate: + facts said together (0.2 × best two of the same time)", default,
             together=0.2, note="left out: < 1 point on dev, and needs a notion of 'said together'"),
    ]  # fmt: skip
    # The candidates were measured over BM25 / its best, the default before calibration.


@dataclass
class _Prepared:
    """One corpus with its vectors, times and per-query vectors (computed once)."""

    corpus: Corpus
    vectors: np.ndarray
    said: np.ndarray
    queries: list[np.ndarray]
    lines: list[np.ndarray]
    embed_ms: dict[str, list[float]] = field(default_factory=dict)

    @cached_property
    def scripts(self) -> tuple[np.ndarray, bool]:
        """Which documents are mostly CJK, and whether any holds CJK (the index's arrays)."""
        texts = [d.text for d in self.corpus.docs]
        return np.array([mostly_cjk(t) for t in texts]), any(has_cjk(t) for t in texts)


def _lines(text: str) -> list[str]:
    return [line for line in text.split("\n") if line.strip()]


def prepare(dataset: Dataset, embeddings: BatchCachedEncoder) -> list[_Prepared]:
    """Embed documents, queries and query lines, timing the query-side embeddings."""
    prepared = []
    for corpus in dataset.corpora:
        vectors = embeddings.embed_array([d.text for d in corpus.docs])
        said = np.array([d.time.timestamp() if d.time else np.nan for d in corpus.docs])
        item = _Prepared(corpus, vectors, said, [], [], {"query": [], "lines": []})
        for query in corpus.queries:
            started = time.perf_counter()
            item.queries.append(embeddings.embed_array([query.text])[0])
            item.embed_ms["query"].append(time.perf_counter() - started)
            lines = _lines(query.text)
            started = time.perf_counter()
            item.lines.append(
                np.stack([embeddings.embed_array([line])[0] for line in lines])
                if len(lines) > 1
                else item.queries[-1][None, :]
            )
            item.embed_ms["lines"].append(time.perf_counter() - started)
        prepared.append(item)
    return prepared


def _cosines(step: Step, vectors: np.ndarray, query: np.ndarray, lines: np.ndarray) -> np.ndarray:
    if step.centering:
        mean = vectors.mean(axis=0)
        centred = vectors - mean
        centred /= np.maximum(np.linalg.norm(centred, axis=1, keepdims=True), 1e-9)
        shifted = query - mean
        return np.asarray(centred @ (shifted / max(float(np.linalg.norm(shifted)), 1e-9)))
    if step.tail_weight and len(lines) > 1:
        query = query + step.tail_weight * lines[-1]
        query = query / np.linalg.norm(query)
    cosine = np.clip(vectors @ query, 0.0, 1.0)
    if step.hubness:
        neighbours = vectors @ vectors.T
        np.fill_diagonal(neighbours, -1.0)
        density = np.sort(neighbours, axis=1)[:, -10:].mean(axis=1)
        cosine = np.clip(cosine - step.hubness * density, 0.0, 1.0)
    if step.line_weight and len(lines) > 1:
        best_line = np.clip((vectors @ lines.T).max(axis=1), 0.0, 1.0)
        cosine = (cosine + step.line_weight * best_line) / (1.0 + step.line_weight)
    if step.prf:
        m, beta = step.prf
        expanded = query + beta * vectors[top_k(cosine, m)].mean(axis=0)
        cosine = np.clip(vectors @ (expanded / np.linalg.norm(expanded)), 0.0, 1.0)
    return np.asarray(cosine)


def _rerank(step: Step, scores: np.ndarray, vectors: np.ndarray, said: np.ndarray) -> np.ndarray:
    """Candidate re-rankings applied after fusion; returns new scores (higher is better)."""
    if step.together:
        bonus = np.zeros_like(scores)
        for moment in np.unique(said[np.isfinite(said)]):
            same = said == moment
            bonus[same] = np.sort(scores[same])[::-1][:2].mean()
        scores = scores + step.together * bonus
    if step.mmr:
        pool = list(top_k(scores, 30))
        chosen: list[int] = []
        while pool:
            redundancy = (vectors[pool] @ vectors[chosen].T).max(axis=1) if chosen else 0.0
            value = step.mmr * scores[pool] - (1 - step.mmr) * redundancy
            chosen.append(pool.pop(int(np.argmax(value))))
        reranked = np.full(scores.shape, -np.inf)
        reranked[chosen] = -np.arange(len(chosen), dtype=float)
        scores = reranked
    return scores


def _evidence(
    step: Step,
    lexical: LexicalIndex,
    item: _Prepared,
    query: str,
    cosine: np.ndarray,
    weights: Weights,
) -> np.ndarray:
    """The lexical part: BM25 over its best (earlier steps) or the library's evidence."""
    if not weights.lexical:
        return np.zeros(lexical.size)
    if step.calibrated:
        cjk, any_cjk = item.scripts
        same = cjk == mostly_cjk(query)
        lexicon = default_lexicon() if any_cjk or has_cjk(query) else None
        found = coverage(lexical, query, lexicon, length_b=weights.length_b)
        return found * lexical_trust(same, cosine, weights.trust_top_for(lexical.size))
    bm25 = lexical.scores(query)
    top = float(bm25.max()) if bm25.size else 0.0
    return bm25 / top if top > 0 else bm25


def evaluate(step: Step, prepared: list[_Prepared], ks: tuple[int, ...]) -> dict[str, Any]:
    """Recall of the step's ranking, and the ranking core's own time per query."""
    scored: list[ScoredQuery] = []
    durations: list[float] = []
    for item in prepared:
        docs = [d.text for d in item.corpus.docs]
        lexical = LexicalIndex(docs, stemming=step.stemming, question_words=step.question_words)
        n = len(docs)
        for number, query in enumerate(item.corpus.queries):
            started = time.perf_counter()
            cosine = _cosines(step, item.vectors, item.queries[number], item.lines[number])
            one_script = step.calibrated and bool(all(item.scripts[0] == mostly_cjk(query.text)))
            weights = step.weights.for_query(query.text, one_script=one_script)
            evidence = _evidence(step, lexical, item, query.text, cosine, weights)
            parts = score_parts(
                cosine, evidence, np.zeros(n), np.full(n, 0.9), weights,
                said_at=item.said, window=mentioned_window(query.text, NOW),
            )  # fmt: skip
            scores = _rerank(step, fuse(parts, weights), item.vectors, item.said)
            order = top_k(scores, max(ks))
            durations.append(time.perf_counter() - started)
            cited = [item.corpus.docs[i].evidence for i in order]
            scored.append(score_query(query.category, query.gold, cited, ks))
    embed_key = "lines" if step.line_weight or step.tail_weight else "query"
    embed = [t for item in prepared for t in item.embed_ms[embed_key]]
    return {
        "recall": {
            c: {str(k): v for k, v in row.items()} for c, row in recall_table(scored, ks).items()
        },
        "rank_ms": percentiles_ms(durations),
        "embed_ms": percentiles_ms(embed),
    }


def ablation(quick: bool = False, write: bool = True) -> dict[str, Any]:
    """Run every step on every dataset and split; print and (optionally) write."""
    embeddings = BatchCachedEncoder()
    runs: dict[str, dict[str, tuple[list[_Prepared], tuple[int, ...]]]] = {}
    for name in DATASETS:
        for split in SPLITS:
            dataset = load_dataset(name, split)
            dataset = dataset.subset(1, 25) if quick else dataset
            runs.setdefault(name, {})[split] = (prepare(dataset, embeddings), dataset.ks)
    recorded = []
    for step in steps():
        by_dataset = {
            name: {split: evaluate(step, prepared, ks) for split, (prepared, ks) in splits.items()}
            for name, splits in runs.items()
        }
        recorded.append({"label": step.label, "note": step.note, "runs": by_dataset})
    payload = {"steps": recorded}
    body = render(payload)
    print(body)
    if write:
        save_results("ablation", payload)
        write_section("ablation", body)
    return payload


def render(payload: dict[str, Any]) -> str:
    """The ablation table: R@10 per dataset and split, and what the step costs per query."""
    headers = ["step"]
    for name in DATASETS:
        headers += [f"{name} dev R@10", f"{name} test R@10"]
    headers += ["ranking p50 ms", "ranking p95 ms", "query embedding p50 ms (MADial)"]
    rows: list[list[Any]] = []
    for step in payload["steps"]:
        row: list[Any] = [step["label"]]
        for name in DATASETS:
            row += [step["runs"][name][s]["recall"][OVERALL]["10"] for s in SPLITS]
        locomo = step["runs"]["locomo-fact"]["test"]["rank_ms"]
        row += [locomo["p50"], locomo["p95"], step["runs"]["madial"]["test"]["embed_ms"]["p50"]]
        rows.append(row)
    notes = "\n".join(f"- {s['label']}: {s['note']}" for s in payload["steps"] if s["note"])
    return (
        "## Ablation: what each technique adds\n\n"
        "recallmem's ranking core over the same USE vectors, cumulative steps; R@10 in "
        "percent; 'ranking' is the core's time per query on LoCoMo test (lexical scoring, "
        "fusion, top-k; without the query embedding, which is shown separately).\n\n"
        + markdown_table(headers, rows)
        + f"\n\n{notes}\n\n{machine_note()}\n"
    )
