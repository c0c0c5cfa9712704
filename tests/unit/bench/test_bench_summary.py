from __future__ import annotations

from pathlib import Path

from bench.report import save_results
from bench.summary import ablation_story, measured, verdicts


def _run(r10: float) -> dict[str, object]:
    return {"recall": {"overall": {"10": r10}}}


def test_targets_are_judged_on_the_test_split(tmp_path: Path) -> None:
    save_results("locomo", {"fact": {"dev": _run(70.0), "test": _run(66.5)}}, tmp_path)
    save_results("madial", {"all": {"dev": _run(74.0), "test": _run(75.0)}}, tmp_path)
    save_results(
        "scale",
        {"spread": [{"size": 100_000, "recall_random_user_ms": {"p50": 3.0, "p95": 12.5}}]},
        tmp_path,
    )
    rows = verdicts(measured(tmp_path))
    assert [r[4] for r in rows] == ["not met (-1.5)", "met", "met", "not measured", "not measured"]
    assert rows[0][2:4] == [70.0, 66.5]


def test_missing_results_are_not_measured(tmp_path: Path) -> None:
    assert [r[4] for r in verdicts(measured(tmp_path))] == ["not measured"] * 5


def _kinds(**top1: float) -> dict[str, object]:
    return {
        "overall": {"top1": sum(top1.values()) / len(top1)},
        "kind": {kind: {"top1": value} for kind, value in top1.items()},
    }


def test_the_bilingual_targets_count_kinds_below_plain_cosine(tmp_path: Path) -> None:
    default = {"dev": _kinds(en_en=95.0, zh_en=80.0), "test": _kinds(en_en=94.0, zh_en=91.0)}
    cosine = {"dev": _kinds(en_en=90.0, zh_en=85.0), "test": _kinds(en_en=90.0, zh_en=90.0)}
    worse = {"dev": _kinds(dialogue=40.0), "test": _kinds(dialogue=40.0)}
    better = {"dev": _kinds(dialogue=50.0), "test": _kinds(dialogue=30.0)}
    results = {
        "bilingual (all blind sets)": {"default": default, "cosine": cosine},
        "set_a": {"default": default, "cosine": cosine},
        "madial": {"default": worse, "cosine": better},
    }
    save_results("bilingual", {"results": results}, tmp_path)
    rows = verdicts(measured(tmp_path))
    assert rows[3][2:] == [87.5, 92.5, "met"]
    # dev: set_a's zh_en and madial's dialogue; the pooled row is not counted again.
    assert rows[4][2:] == [2.0, 0.0, "met"]


def _step(label: str, locomo: float, madial: float) -> dict[str, object]:
    return {
        "label": label,
        "runs": {"locomo-fact": {"dev": _run(locomo)}, "madial": {"dev": _run(madial)}},
    }


def test_the_ablation_story_gives_each_adopted_step_its_dev_gain(tmp_path: Path) -> None:
    steps = [
        _step("dense only", 60.0, 70.0),
        _step("+ BM25", 62.5, 74.0),
        _step("+ time-aware scoring = **default**", 63.0, 74.0),
        _step("candidate: + MMR", 62.0, 71.0),
    ]
    save_results("ablation", {"steps": steps}, tmp_path)
    story = ablation_story(tmp_path)
    assert "BM25 +2.5 LoCoMo / +4.0 MADial" in story
    assert "time-aware scoring +0.5 LoCoMo / +0.0 MADial" in story
    assert story.endswith("left out because dev said no: MMR.")
    assert ablation_story(tmp_path / "missing") == ""
