"""The learned fusion (bench/bilingual_features.py, bench/bilingual_learned.py) on hand cases."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from recallmem.retrieval.ranking import lexical_trust

from bench.bilingual_data import Question
from bench.bilingual_features import (
    FEATURES,
    LearnedModelError,
    closeness,
    fold,
    lexical_features,
    load_model,
)
from bench.bilingual_learned import Case, train

RESULTS = Path(__file__).resolve().parents[3] / "bench" / "results" / "bilingual_learned.json"


def _final_model_text() -> str:
    return json.dumps({"weights": json.loads(RESULTS.read_text("utf-8"))["final"]})


def test_the_saved_model_loads_with_every_feature_named() -> None:
    model = load_model(_final_model_text())
    assert set(model.as_mapping()) == set(FEATURES)
    assert model.weight("dense") == pytest.approx(0.8)


@pytest.mark.parametrize(
    ("text", "fault"),
    [
        ("not json", "not JSON"),
        ('{"dense": 0.8}', '{"weights"'),
        ('{"weights": {"dense": 0.8, "bogus": 1}}', "unknown learned-fusion features"),
        ('{"weights": {"dense": 0.8, "time": -0.1}}', "'time' is -0.1"),
        ('{"weights": {"dense": 0.8, "time": "high"}}', "must be a number"),
        ('{"weights": {"dense": 0.8, "time": NaN}}', "finite"),
        ('{"weights": {"time": 0.2}}', "positive 'dense'"),
    ],
)
def test_malformed_weights_are_refused_with_the_fault_named(text: str, fault: str) -> None:
    with pytest.raises(LearnedModelError, match=fault.replace("{", r"\{")):
        load_model(text)


def test_the_score_rebuilds_from_the_folded_parts_and_weights() -> None:
    model = load_model(_final_model_text())
    rng = np.random.default_rng(7)
    features = rng.random((50, len(FEATURES))).astype(np.float32)
    folded = fold(model, features)
    assert np.allclose(folded.scores, features @ np.array(model.weights), atol=1e-5)
    rebuilt = sum(folded.weights[name] * folded.parts[name] for name in folded.parts)
    assert np.allclose(folded.scores, rebuilt, atol=1e-6)
    for part in folded.parts.values():
        assert part.min() >= 0.0 and part.max() <= 1.0 + 1e-6


def _features(cosine: list[float], lexical: list[float], same: list[bool]) -> np.ndarray:
    cos = np.array(cosine, dtype=np.float32)
    columns = lexical_features(
        np.array(lexical, dtype=np.float32),
        cos,
        np.array(same),
        cjk_query=False,
        one_line=True,
    )
    time = np.zeros((cos.size, 1), dtype=np.float32)
    return np.column_stack([cos, closeness(cos), columns, time])


def test_a_trap_word_never_outranks_the_meaning() -> None:
    # "What articles does the user like?" in a mixed memory: the answer, written in
    # Chinese ("喜欢长篇历史文章"), is nearest by meaning and shares no word; the trap
    # ("Likes dark mode") says "like", half the query's information, far below by
    # meaning. Its evidence is trusted as the default pipeline trusts it (the nearest
    # fact is in the other script).
    model = load_model(_final_model_text())
    cosine = np.array([0.62, 0.40, 0.30], dtype=np.float32)
    same = np.array([False, True, True])
    evidence = np.array([0.0, 0.5, 0.0], dtype=np.float32) * lexical_trust(same, cosine, 3)
    features = _features(cosine.tolist(), evidence.tolist(), same.tolist())
    scores = features @ np.array(model.weights)
    assert int(np.argmax(scores)) == 0


def test_evidence_near_the_meaning_decides_between_close_facts() -> None:
    # two facts alike by meaning: the one saying the query's rare words comes first
    model = load_model(_final_model_text())
    features = _features([0.60, 0.61], [0.9, 0.0], [True, True])
    assert int(np.argmax(features @ np.array(model.weights))) == 0


def _case(features: np.ndarray, gold: int) -> Case:
    mask = np.zeros(features.shape[0], dtype=bool)
    mask[gold] = True
    question = Question("q", "?", "en_en", frozenset({"g"}))
    return Case("toy", question, None, features, features[:, 0], features[:, 0], mask)  # type: ignore[arg-type]


def test_training_learns_the_feature_that_separates_gold() -> None:
    # gold is never the nearest by cosine but always says the query's words
    rng = np.random.default_rng(3)
    cases = []
    for _ in range(40):
        features = np.zeros((6, len(FEATURES)), dtype=np.float32)
        features[:, 0] = rng.uniform(0.3, 0.6, 6)
        features[0, 0] = features[1:, 0].max() - 0.02
        features[0, FEATURES.index("lexical_close")] = 1.0
        cases.append(_case(features, 0))
    model = train(cases)
    assert model.weight("lexical_close") > 0.1
    assert model.weight("lexical_far") == pytest.approx(0.0, abs=0.02)
