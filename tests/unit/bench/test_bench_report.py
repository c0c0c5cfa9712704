from __future__ import annotations

from pathlib import Path

from bench.report import load_results, markdown_table, replace_section, save_results, write_section


def test_a_section_is_replaced_and_the_others_are_kept(tmp_path: Path) -> None:
    docs = tmp_path / "benchmarks.md"
    write_section("a", "first A", docs)
    write_section("b", "only B", docs)
    write_section("a", "second A", docs)
    text = docs.read_text(encoding="utf-8")
    assert "second A" in text
    assert "first A" not in text
    assert text.index("<!-- bench:a -->") < text.index("<!-- bench:b -->")
    assert "only B" in text
    assert text.startswith("# Benchmarks")


def test_text_outside_sections_survives() -> None:
    doc = "intro\n<!-- bench:x -->\nold\n<!-- /bench:x -->\nhand-written outro\n"
    assert replace_section(doc, "x", "new") == (
        "intro\n<!-- bench:x -->\nnew\n<!-- /bench:x -->\nhand-written outro\n"
    )


def test_markdown_table_aligns_numbers_right_and_marks_missing() -> None:
    table = markdown_table(["system", "R@10", "ratio"], [["bm25", 52.44, None]])
    assert table.splitlines() == [
        "| system | R@10 | ratio |",
        "|---|---:|---|",
        "| bm25 | 52.4 | – |",
    ]


def test_results_round_trip(tmp_path: Path) -> None:
    save_results("toy", {"r": {"10": 1.5}}, tmp_path)
    assert load_results("toy", tmp_path) == {"r": {"10": 1.5}}
