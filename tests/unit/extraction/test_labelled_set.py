"""The labelled set is valid, covers what it must, and its recordings cite real evidence."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest
from recallmem.errors import InvalidInputError
from recallmem.extraction.evaluate import ExpectedFact, has_keywords, load_cases, matches
from recallmem.extraction.parser import parse_extraction

CASES = load_cases()


def test_the_set_is_large_and_bilingual() -> None:
    languages = Counter(c.language for c in CASES)
    assert len(CASES) >= 30 and languages["zh"] >= 12 and languages["en"] >= 12


@pytest.mark.parametrize(
    "tag",
    [
        "identity",
        "preference",
        "todo",
        "decision",
        "correction",
        "transient",
        "secret",
        "supersede",
    ],
)
def test_the_set_covers(tag: str) -> None:
    assert any(tag in c.tags for c in CASES)


@pytest.mark.parametrize("case", [c for c in CASES if c.recorded], ids=lambda c: c.id)
def test_recordings_parse_whole_and_propose_the_expected(case) -> None:  # type: ignore[no-untyped-def]
    proposed = parse_extraction(case.recorded)
    if "unusable-keywords" in case.tags:  # set aside, while their facts are kept
        assert proposed.rejected and all(r.item.startswith("keyword ") for r in proposed.rejected)
    else:
        assert proposed.rejected == (), proposed.rejected  # every item of the reply is usable
    expected = [e for e in case.expected if not any(
        matches(f.content, f.category, e) for f in proposed.facts)]  # fmt: skip
    # Only cases about hygiene repairing a proposal (its language) may miss what they expect.
    assert not expected or "language" in case.tags, expected


def test_matching_needs_the_category_and_every_keyword() -> None:
    expected = ExpectedFact(
        category=["identity", "context"], keywords=["产品组|product team", "经理"]
    )
    assert matches("在产品组担任产品经理", "identity", expected)
    assert not matches("在产品组担任产品经理", "preference", expected)
    assert not matches("在产品组工作", "identity", expected)
    assert has_keywords(
        "Ｒｅｐｏｒｔｓ in CHINESE", ["reports", "chinese"]
    )  # width and case folded


def test_a_bad_file_says_what_is_wrong(tmp_path: Path) -> None:
    with pytest.raises(InvalidInputError, match="no labelled set"):
        load_cases(tmp_path / "missing.yaml")
    bad = tmp_path / "bad.yaml"
    bad.write_text(
        "version: 1\ncases:\n  - {id: a, language: fr, messages: [{role: user, content: x}]}\n",
        "utf-8",
    )
    with pytest.raises(InvalidInputError, match="language"):
        load_cases(bad)
