from __future__ import annotations

from pathlib import Path

import pytest

from bench.__main__ import main
from bench.report import save_results


def test_madial_suite_runs_end_to_end_on_toy_data(
    toy_data: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("RECALLMEM_BENCH_DATA", str(toy_data))
    assert main(["madial", "--quick", "--no-write"]) == 0
    out = capsys.readouterr().out
    assert "| split | category | queries | R@1 | R@3 | R@5 | R@10 |" in out
    # One query per split, its one relevant memory among the user's two: found by k=3.
    assert "| dev | overall | 1 |" in out
    assert "| test | overall | 1 |" in out


def test_plots_are_drawn_from_saved_results(tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")
    from bench.plots import plot_all

    run = {"system": "recallmem", "recall": {"overall": {"10": 60.0}}, "search_ms": {"p50": 2.0}}
    save_results("peers", {"madial": [run, {**run, "system": "bm25"}]}, tmp_path)
    scale_run = {
        "size": 1000,
        "recall_random_user_ms": {"p50": 1.0, "p95": 2.0},
        "recall_hot_user_ms": {"p50": 0.5, "p95": 0.9},
    }
    save_results("scale", {"spread": [scale_run], "single_user": [scale_run]}, tmp_path)
    written = plot_all(tmp_path, tmp_path / "img")
    assert [p.name for p in written] == ["bench_peers.png", "bench_scale.png"]
    assert all(p.read_bytes().startswith(b"\x89PNG") for p in written)


def test_the_dedup_suite_keeps_the_default_rule_free_of_false_merges(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["dedup", "--no-write"]) == 0
    row = next(line for line in capsys.readouterr().out.splitlines() if line.startswith("| 0.70 |"))
    assert row.rstrip(" |").endswith("| 0/20")  # containment with cosine >= 0.70


def test_the_signals_suite_scores_every_detector(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["signals", "--no-write"]) == 0
    out = capsys.readouterr().out
    assert "## Signal detectors" in out and "blind4, two-stage" in out
