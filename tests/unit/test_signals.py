"""The four bilingual detectors: quality on the labelled sets, span contract, data validation."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from recallmem.errors import PromptError
from recallmem.signals import (
    LabelledCase,
    SignalKind,
    correction,
    evaluate,
    hedge,
    load_signals,
    recall_cue,
    remember_request,
)

DATA = Path(__file__).resolve().parents[1] / "data" / "signals"
SPLITS = ("dev", "heldout", "heldout2", "heldout3")
TARGET = 0.9


def _cases(kind: SignalKind, lang: str, splits: tuple[str, ...] = SPLITS) -> list[LabelledCase]:
    cases: list[LabelledCase] = []
    for split in splits:
        for line in (DATA / f"{kind.value}.{split}.jsonl").read_text(encoding="utf-8").splitlines():
            case = LabelledCase.model_validate(json.loads(line))
            if case.lang == lang:
                cases.append(case)
    return cases


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("kind", list(SignalKind))
def test_labelled_set_is_large_enough_and_balanced(kind: SignalKind, lang: str) -> None:
    cases = _cases(kind, lang)
    positives = sum(c.label for c in cases)
    assert len(cases) >= 60
    assert positives >= 25
    assert len(cases) - positives >= 25


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("kind", list(SignalKind))
def test_precision_and_recall_meet_target(kind: SignalKind, lang: str) -> None:
    quality = evaluate(kind, _cases(kind, lang), load_signals())
    misses = [
        c.text
        for c in _cases(kind, lang)
        if (load_signals().detect(kind, c.text) is not None) != c.label
    ]
    assert quality.precision >= TARGET, misses
    assert quality.recall >= TARGET, misses


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("kind", list(SignalKind))
def test_held_out_splits_alone_meet_target(kind: SignalKind, lang: str) -> None:
    quality = evaluate(kind, _cases(kind, lang, SPLITS[1:]), load_signals())
    assert quality.precision >= TARGET
    assert quality.recall >= TARGET


@pytest.mark.parametrize(
    ("detector", "text", "span"),
    [
        (recall_cue, "按上次那个方案继续", "上次"),
        (recall_cue, "As I said, we deploy on Kubernetes.", "As I said"),
        (hedge, "我无法访问之前的对话，能再说一下吗？", "无法访问之前的对话"),
        (hedge, "Could you remind me which database you use?", "Could you remind me"),
        (correction, "不对，我是后端", "不对"),
        (correction, "You got my name wrong, it's Lena.", "You got my name wrong"),
        (remember_request, "以后都用中文回复", "以后都"),
        (remember_request, "From now on, reply in bullet points.", "From now on"),
    ],
)
def test_returns_the_span_that_fired(detector: object, text: str, span: str) -> None:
    assert callable(detector)
    found = detector(text)
    assert found == span
    assert found in text


@pytest.mark.parametrize(
    ("detector", "text"),
    [
        (hedge, "I'm not sure this code compiles."),
        (hedge, "我不确定这个 API 是否支持流式"),
        (recall_cue, "在提交代码之前应该做哪些检查？"),
        (remember_request, "How do I remember all the git commands?"),
        (correction, "What's wrong with this loop?"),
    ],
)
def test_uncertainty_about_the_task_is_not_a_signal(detector: object, text: str) -> None:
    assert callable(detector)
    assert detector(text) is None


def test_an_exclusion_only_vetoes_the_words_it_covers() -> None:
    # The task doubt is excluded by no pattern, the context hedge later in the reply still fires.
    text = "I'm not sure this compiles. Also, could you remind me which framework you use?"
    assert hedge(text) == "could you remind me"
    # A quoted mention of a cue phrase is not a use of it, but a real request beside it is.
    assert remember_request("What does 'going forward' mean?") is None
    assert remember_request("Going forward, explain what 'going forward' means.") == "Going forward"


def test_empty_text_fires_nothing() -> None:
    assert all(load_signals().detect(kind, "") is None for kind in SignalKind)


def _write(tmp_path: Path, body: str) -> Path:
    (tmp_path / "signals.yaml").write_text(body, encoding="utf-8")
    return tmp_path


_VALID_DETECTOR = """
    description: a detector for the tests
    patterns:
      en: ['\\bhello\\b']
      zh: ['你好']
"""


def test_a_pattern_that_does_not_compile_is_named_at_load(tmp_path: Path) -> None:
    body = "name: signals\nversion: '1'\ndetectors:\n"
    for kind in SignalKind:
        body += f"  {kind.value}:{_VALID_DETECTOR}"
    body = body.replace("'你好'", "'你好('", 1)
    with pytest.raises(PromptError, match=r"你好\(.*does not compile"):
        load_signals(_write(tmp_path, body))


def test_a_missing_detector_is_an_error(tmp_path: Path) -> None:
    body = f"name: signals\nversion: '1'\ndetectors:\n  hedge:{_VALID_DETECTOR}"
    with pytest.raises(PromptError, match="detectors missing"):
        load_signals(_write(tmp_path, body))


def test_unknown_keys_are_rejected(tmp_path: Path) -> None:
    body = "name: signals\nversion: '1'\nextra: 1\ndetectors:\n"
    for kind in SignalKind:
        body += f"  {kind.value}:{_VALID_DETECTOR}"
    with pytest.raises(PromptError, match="extra"):
        load_signals(_write(tmp_path, body))


def test_an_override_directory_replaces_the_shipped_patterns(tmp_path: Path) -> None:
    body = "name: signals\nversion: '9'\ndetectors:\n"
    for kind in SignalKind:
        body += f"  {kind.value}:{_VALID_DETECTOR}"
    signals = load_signals(_write(tmp_path, body))
    assert signals.version == "9"
    assert signals.detect("hedge", "well hello there") == "hello"
    assert signals.detect("hedge", "上次") is None
