"""The fused score on small hand-checked memories: what a word match may and may not do."""

from __future__ import annotations

import numpy as np
import pytest
from recallmem.retrieval.fusion import (
    Scope,
    Scored,
    centre_of,
    dialogue_tail,
    nearest_cosine,
    relevance,
)
from recallmem.retrieval.lexical import LexicalIndex
from recallmem.retrieval.lexicon import default_lexicon
from recallmem.retrieval.ranking import Weights, calibrated, translation_gate
from recallmem.text.words import has_cjk, mostly_cjk


def _score(query: str, facts: list[str], cosine: list[float]) -> Scored:
    cjk = np.array([mostly_cjk(f) for f in facts])
    lexicon = default_lexicon() if has_cjk(query) or cjk.any() else None
    scope = Scope(
        cosine=np.array(cosine, dtype=np.float32),
        cjk=cjk,
        age_days=np.zeros(len(facts)),
        confidence=np.full(len(facts), 0.9, dtype=np.float32),
        said_at=np.full(len(facts), np.nan),
        rows=np.arange(len(facts)),
    )
    return relevance(query, scope, LexicalIndex(facts), lexicon, Weights(), None)


def test_one_common_word_of_a_long_question_is_no_evidence() -> None:
    facts = [
        "Prefers invoices sent as PDFs, never as Word documents",
        "Wants client emails drafted in a warm but concise tone",
        "Keeps a paper notebook for every project",
    ]
    query = (
        "The venue coordinator asked me to send my bill as a docx file, "
        "so which format do I normally insist on for clients?"
    )
    scored = _score(query, facts, [0.30, 0.29, 0.10])
    assert scored.parts.lexical[1] == 0.0  # "client" alone, a sliver of the question
    assert int(np.argmax(scored.scores)) == 0


def test_a_trap_word_never_outranks_the_meaning() -> None:
    # The trap shares one word with the question; the answer shares none but is nearer.
    facts = [
        "Likes dark mode in every editor",
        "Enjoys long essays about the history of science",
        "Runs five kilometres on Sunday mornings",
    ]
    query = "What do I like to read in the evenings, and how long should it be?"
    scored = _score(query, facts, [0.33, 0.38, 0.12])
    assert int(np.argmax(scored.scores)) == 1


def test_a_far_fact_in_the_other_language_is_not_lifted_by_translations() -> None:
    facts = ["用户的丈夫在香港一家会计师事务所工作", "要在十二月前续签港澳通行证"]
    scored = _score("What do I need to renew before I can visit Hong Kong?", facts, [0.12, 0.46])
    assert scored.parts.lexical[0] == 0.0
    assert int(np.argmax(scored.scores)) == 1


def test_a_near_fact_in_the_other_language_keeps_its_translated_evidence() -> None:
    facts = ["Likes pour-over coffee, always without sugar", "用户家里的咖啡机上周开始漏水"]
    scored = _score("What went wrong with my coffee machine?", facts, [0.41, 0.40])
    assert scored.parts.lexical[1] > 0.05 and scored.parts.lexical[0] == 0.0
    assert int(np.argmax(scored.scores)) == 1


def test_the_score_is_rebuilt_from_its_parts_and_weights() -> None:
    facts = ["Uses TypeScript at work", "喜欢长篇文章", "Drinks tea in the afternoon"]
    scored = _score("Which language do I use at work?", facts, [0.5, 0.2, 0.1])
    w, p = scored.weights, scored.parts
    rebuilt = (
        w.dense * p.dense + w.lexical * p.lexical + w.recency * p.recency
    ) + w.confidence * p.confidence
    assert scored.scores.tolist() == pytest.approx(rebuilt.tolist())


def test_calibrated_evidence_and_the_gate_switch_off_at_zero() -> None:
    evidence = np.array([0.02, 0.5])
    assert calibrated(evidence, 0.0).tolist() == evidence.tolist()
    same = np.array([False, False])
    assert translation_gate(same, np.array([0.9, 0.1]), 0.0).tolist() == [1.0, 1.0]


def test_a_dialogue_tail_is_also_matched_by_its_last_line() -> None:
    text = "user: I'm drafting next year's price sheet.\nassistant: Want help?\nuser: What number?"
    assert dialogue_tail(text) == "What number?"
    assert dialogue_tail("用户：先帮我写张贺卡\n助手：好的\n用户：抬头写什么") == "抬头写什么"
    assert dialogue_tail("one line only") is None
    assert dialogue_tail("user: hi\nassistant:") is None
    rows = np.array([[1.0, 0.0], [0.0, 1.0]], dtype=np.float32)
    whole, tail = np.array([0.8, 0.6], dtype=np.float32), np.array([0.0, 1.0], dtype=np.float32)
    assert nearest_cosine(rows, whole, None).tolist() == pytest.approx([0.8, 0.6])
    assert nearest_cosine(rows, whole, tail).tolist() == pytest.approx([0.8, 1.0])


def _unit(rows: np.ndarray) -> np.ndarray:
    normed: np.ndarray = rows / np.linalg.norm(rows, axis=-1, keepdims=True)
    return normed


def test_cosines_from_a_large_memorys_centre_are_the_cosines_of_the_centred_vectors() -> None:
    rng = np.random.default_rng(7)
    vectors = _unit(rng.standard_normal((1200, 16)) + 2.0)  # a common direction
    query, tail = _unit(rng.standard_normal(16) + 2.0), _unit(rng.standard_normal(16))
    centre = centre_of(vectors, Weights())
    assert centre is not None
    shifted, q, t = vectors - centre.vector, query - centre.vector, tail - centre.vector
    expected = np.maximum(_unit(shifted) @ _unit(q), _unit(shifted) @ _unit(t))
    assert nearest_cosine(vectors, query, tail, centre) == pytest.approx(expected, abs=1e-5)
    rows = np.array([3, 700, 1199])
    assert nearest_cosine(vectors[rows], query, None, centre, rows) == pytest.approx(
        (_unit(shifted) @ _unit(q))[rows], abs=1e-5
    )


def test_a_fact_near_every_query_no_longer_outranks_the_answer_in_a_large_memory() -> None:
    rng = np.random.default_rng(0)
    common, own = _unit(rng.standard_normal(32)), _unit(rng.standard_normal(32))
    hubs = _unit(common + 0.15 * rng.standard_normal((1500, 32)))  # near every query
    answer = _unit(0.3 * common + own)  # says what the query asks, little of the rest
    vectors = np.vstack([hubs, answer])
    query = _unit(common + 0.5 * own)
    raw = nearest_cosine(vectors, query, None)
    assert (raw > raw[-1]).sum() > 1000  # plain cosine ranks most hubs above the answer
    centred = nearest_cosine(vectors, query, None, centre_of(vectors, Weights()))
    assert int(np.argmax(centred)) == len(hubs)


def test_a_small_memory_and_a_zero_weight_are_not_centred() -> None:
    vectors = _unit(np.random.default_rng(1).standard_normal((999, 8)))
    assert centre_of(vectors, Weights()) is None  # the mean of a few facts is their own
    assert centre_of(np.vstack([vectors, vectors[:1]]), Weights(centring=0.0)) is None
