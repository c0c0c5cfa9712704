from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from bench.data import (
    load_locomo,
    load_madial,
    madial_query,
    normalize_evidence,
    parse_locomo_time,
)


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("D1:3", ("D1:3",)),
        ("D8:6; D9:17", ("D8:6", "D9:17")),
        ("D30:05", ("D30:5",)),
        ("D:11:26", ("D11:26",)),
        ("D9:1 D4:4 D4:6", ("D9:1", "D4:4", "D4:6")),
        ("D26:14, D26:34, D26:42", ("D26:14", "D26:34", "D26:42")),
        ("D", ()),
        (["D1:2", "D1:02", "d3:4"], ("D1:2", "D3:4")),
    ],
)
def test_evidence_ids_are_normalised(raw: str | list[str], expected: tuple[str, ...]) -> None:
    assert normalize_evidence(raw) == expected


def test_locomo_time_is_parsed_as_utc() -> None:
    assert parse_locomo_time("1:56 pm on 8 May, 2023") == datetime(2023, 5, 8, 13, 56, tzinfo=UTC)


def test_locomo_fact_level_keeps_categories_1_to_4_with_usable_evidence(toy_data: Path) -> None:
    dataset = load_locomo("fact", path=toy_data / "locomo" / "locomo10.json")
    first, second = dataset.corpora
    assert [q.text for q in first.queries] == [
        "What is the name of Ann's puppy?",
        "What did Rex chew?",
    ]
    assert first.queries[1].gold == frozenset({"D2:1", "D1:1"})
    assert first.queries[1].category == "multi-hop"
    assert second.queries[0].gold == frozenset({"D1:1"})
    assert {d.text: d.evidence for d in first.docs}["Ann's puppy Rex chewed her violin case."] == {
        "D2:1",
        "D1:1",
    }
    assert dataset.n_docs == 4
    assert dataset.n_queries == 3
    assert dataset.ks == (5, 10, 20)


def test_locomo_turn_level_stores_each_turn_with_speaker_and_caption(toy_data: Path) -> None:
    dataset = load_locomo("turn", path=toy_data / "locomo" / "locomo10.json")
    texts = [d.text for d in dataset.corpora[0].docs]
    assert texts[1] == "Bo: I am training for a marathon. [shares a photo of running shoes]"
    assert dataset.corpora[0].docs[2].evidence == {"D2:1"}
    assert dataset.corpora[0].docs[2].time == datetime(2023, 6, 9, 10, 0, tzinfo=UTC)


def test_locomo_splits_are_disjoint(toy_data: Path) -> None:
    path = toy_data / "locomo" / "locomo10.json"
    assert [c.user_id for c in load_locomo("fact", "dev", path).corpora] == ["conv-a", "conv-b"]
    assert load_locomo("fact", "test", path).corpora == ()
    with pytest.raises(ValueError, match="unknown split"):
        load_locomo("fact", "train", path)
    with pytest.raises(ValueError, match="unknown LoCoMo level"):
        load_locomo("session", path=path)


def test_madial_query_drops_speaker_tags_and_stops_before_the_test_turn() -> None:
    dialogue = [
        "<BOD>\n",
        '<Bart>:"我要跳舞！"\n',
        '<Assistant>:"太棒了！"\n',
        '<Assistant>:"记得吗？"\n',
    ]
    assert madial_query(dialogue, [3, 5]) == "我要跳舞！\n太棒了！"


def test_madial_corpora_are_per_user_and_split_by_dialogue_id(toy_data: Path) -> None:
    everything = load_madial(folder=toy_data / "madial_bench_zh")
    assert [c.user_id for c in everything.corpora] == ["madial-user-1", "madial-user-2"]
    assert [d.id for d in everything.corpora[0].docs] == ["1", "2"]
    assert everything.corpora[0].queries[0].gold == {"1"}
    dev = load_madial("dev", folder=toy_data / "madial_bench_zh")
    assert [len(c.queries) for c in dev.corpora] == [1, 0]
    test = load_madial("test", folder=toy_data / "madial_bench_zh")
    assert [len(c.queries) for c in test.corpora] == [0, 1]


def test_missing_data_says_where_to_put_it(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="RECALLMEM_BENCH_DATA"):
        load_locomo("fact", path=tmp_path / "nope.json")
