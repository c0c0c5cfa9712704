"""The bilingual matrix: blind-set loader, per-question split, padding, metrics, floor
curve, MemoryBank gold rule, the fast ``evaluate`` hook and the suite end to end."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from bench.bilingual_data import (
    BlindSetError,
    Fact,
    Question,
    User,
    load_blind_set,
    load_blind_sets,
    load_locomo_set,
    load_memorybank_set,
    padded,
    padded_set,
    split_of,
)
from bench.bilingual_metrics import (
    Outcome,
    Ranked,
    breakdown,
    floor_curve,
    highest_floor,
    outcome,
    summarize,
    worst_kind,
)


def _fact(fid: str, text: str, lang: str = "en", category: str = "preference") -> dict[str, Any]:
    return {
        "id": fid,
        "text": text,
        "lang": lang,
        "category": category,
        "said_at": "2026-10-03T09:12:00Z",
    }


def _question(qid: str, text: str, kind: str, gold: list[str]) -> dict[str, Any]:
    return {"id": qid, "text": text, "kind": kind, "gold": gold, "asked_at": "2026-11-28T10:00:00Z"}


TOY_BLIND = {
    "name": "toy",
    "users": [
        {
            "user_id": "t1",
            "languages": "mixed",
            "profile": "a developer in Shanghai",
            "facts": [
                _fact(
                    "t1-f01", "The coffee machine I bought last week leaks water", "en", "context"
                ),
                _fact("t1-f02", "喜欢喝美式咖啡，不加糖", "zh"),
                _fact("t1-f03", "Prefers dark mode in every editor"),
                _fact("t1-f04", "我的猫叫豆豆", "zh", "identity"),
            ],
            "questions": [
                _question("t1-q01", "咖啡机有什么问题？", "zh_en", ["t1-f01"]),
                _question("t1-q02", "How does the user take their coffee?", "en_zh", ["t1-f02"]),
                _question("t1-q03", "editor theme", "keyword", ["t1-f03"]),
                _question("t1-q04", "我的猫叫什么名字？", "zh_zh", ["t1-f04"]),
                _question("t1-q05", "What is the user's blood type?", "noanswer", []),
            ],
        },
        {
            "user_id": "t2",
            "languages": "en",
            "facts": [
                _fact("t2-f01", "Runs five kilometres every morning", category="behavior"),
                _fact("t2-f02", "Works as a nurse at a children's hospital", category="hobby"),
            ],
            "questions": [
                _question("t2-q01", "What is the user's job?", "en_en", ["t2-f02"]),
                _question(
                    "t2-q02", "How much exercise does the user get?", "paraphrase", ["t2-f01"]
                ),
                _question("t2-q03", "Which car does the user drive?", "noanswer", []),
            ],
        },
    ],
}


@pytest.fixture
def blind_dir(tmp_path: Path) -> Path:
    folder = tmp_path / "bilingual"
    folder.mkdir()
    (folder / "toy.json").write_text(json.dumps(TOY_BLIND, ensure_ascii=False), encoding="utf-8")
    return folder


# --- loader -------------------------------------------------------------------------------


def test_blind_set_loads_facts_questions_and_times(blind_dir: Path) -> None:
    (toy,) = load_blind_sets(blind_dir)
    assert toy.name == "toy" and toy.source == "blind"
    first, second = toy.users
    assert (first.languages, len(first.facts), len(first.questions)) == ("mixed", 4, 5)
    assert first.facts[0].cites == frozenset({"t1-f01"})
    assert first.facts[0].said_at is not None and first.facts[0].said_at.utcoffset() is not None
    assert first.facts[0].said_at.isoformat() == "2026-10-03T09:12:00+00:00"
    assert first.questions[0].gold == frozenset({"t1-f01"}) and first.questions[0].answerable
    noanswer = first.questions[4]
    assert noanswer.kind == "noanswer" and not noanswer.answerable
    assert second.size == "~15"


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda d: d["users"][0]["questions"][0].update(kind="riddle"), "kind 'riddle'"),
        (lambda d: d["users"][0]["questions"][0].update(gold=["t9-f01"]), "t9-f01"),
        (lambda d: d["users"][0]["questions"][4].update(gold=["t1-f01"]), "noanswer"),
        (lambda d: d["users"][0]["questions"][0].update(gold=[]), "noanswer"),
        (lambda d: d["users"][0]["facts"][0].pop("text"), "text"),
        (lambda d: d["users"][0].update(languages="fr"), "languages 'fr'"),
        (lambda d: d["users"][0]["facts"].append(dict(d["users"][0]["facts"][0])), "share an id"),
    ],
)
def test_malformed_blind_set_is_refused_naming_the_file_and_the_fault(
    tmp_path: Path, change: Any, message: str
) -> None:
    data = json.loads(json.dumps(TOY_BLIND))
    change(data)
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    with pytest.raises(BlindSetError) as caught:
        load_blind_set(path)
    assert message in str(caught.value) and "bad.json" in str(caught.value)


def test_no_blind_folder_means_no_blind_set(tmp_path: Path) -> None:
    assert load_blind_sets(tmp_path / "absent") == []


# --- split --------------------------------------------------------------------------------


def test_split_is_the_parity_of_the_question_ids_sha1() -> None:
    for qid in ("a1-q01", "conv-26/q3", "madial/17"):
        parity = int(hashlib.sha1(qid.encode()).hexdigest(), 16) % 2
        assert split_of(qid) == ("dev" if parity == 0 else "test")
    shares = [split_of(f"u-q{n}") for n in range(2000)].count("dev") / 2000
    assert 0.45 < shares < 0.55


# --- padding ------------------------------------------------------------------------------


def _pool(prefix: str, n: int) -> list[Fact]:
    return [Fact(f"pad/{prefix}{i}", f"{prefix} distractor {i}", frozenset()) for i in range(n)]


def test_padding_adds_half_english_half_chinese_deterministically(blind_dir: Path) -> None:
    (toy,) = load_blind_sets(blind_dir)
    user = toy.users[0]
    english, chinese = _pool("en", 700), _pool("zh", 700)
    big = padded(user, english, chinese, 1000)
    assert big.user_id == "t1+pad" and big.size == "1000+"
    assert big.facts[: len(user.facts)] == user.facts
    extra = big.facts[len(user.facts) :]
    assert len(extra) == 1000 and len({f.id for f in extra}) == 1000
    assert sum(f.id.startswith("pad/en") for f in extra) == 500
    assert all(not f.cites for f in extra)
    assert big.questions == user.questions
    assert padded(user, english, chinese, 1000) == big  # the same draw every run
    assert padded_set(toy, english, chinese, 10).users == (padded(user, english, chinese, 10),)


def test_padding_never_repeats_a_users_own_text() -> None:
    user = User("u", "mixed", (Fact("u-f1", "en distractor 3", frozenset({"u-f1"})),), ())
    texts = [f.text for f in padded(user, _pool("en", 10), _pool("zh", 10), 20).facts]
    assert texts.count("en distractor 3") == 1


# --- metrics ------------------------------------------------------------------------------


def _outcome(
    kind: str, gold: set[str], cited: list[set[str]], scores: list[float], system: str = "default"
) -> Outcome:
    question = Question("q", "?", kind, frozenset(gold))
    ranked = Ranked([frozenset(c) for c in cited], scores)
    return outcome("s", system, question, "~15", "mixed", ranked)


def test_metrics_are_hand_checked() -> None:
    first = _outcome("en_en", {"a"}, [{"a"}, {"b"}], [0.9, 0.5])
    third = _outcome("zh_en", {"a", "b"}, [{"x"}, {"y"}, {"a"}] + [{"z"}] * 3 + [{"b"}], [0.9] * 7)
    missed = _outcome("zh_en", {"a"}, [{"x"}] * 10 + [{"a"}], [0.9] * 11)
    blank = _outcome("noanswer", set(), [{"x"}], [0.3])
    assert (first.rank, third.rank, missed.rank) == (1, 3, None)
    assert (third.recall5, third.recall10) == (0.5, 1.0)
    summary = summarize([first, third, missed, blank])
    assert summary == {"n": 3, "top1": 33.33, "R@5": 50.0, "R@10": 66.67, "MRR": 44.44}
    table = breakdown([first, third, missed, blank])
    assert set(table["kind"]) == {"en_en", "zh_en"}  # noanswer has no answerable question
    assert table["kind"]["zh_en"]["MRR"] == round(100 / 6, 2)


def test_sizes_are_listed_smallest_first() -> None:
    question = Question("q", "?", "en_en", frozenset({"a"}))
    hit = Ranked([frozenset({"a"})], [1.0])
    rows = [outcome("s", "default", question, size, "en", hit) for size in ("1000+", "~50", "~15")]
    assert list(breakdown(rows)["size"]) == ["~15", "~50", "1000+"]


def test_worst_kind_is_where_the_default_loses_most_to_cosine() -> None:
    default = breakdown(
        [
            _outcome("en_en", {"a"}, [{"a"}], [1.0]),
            _outcome("zh_en", {"a"}, [{"b"}, {"a"}], [1.0, 0.5]),
        ]
    )
    cosine = breakdown(
        [
            _outcome("en_en", {"a"}, [{"b"}, {"a"}], [1.0, 0.5], "cosine"),
            _outcome("zh_en", {"a"}, [{"a"}], [1.0], "cosine"),
        ]
    )
    assert worst_kind(default, cosine) == {
        "kind": "zh_en",
        "default_top1": 0.0,
        "cosine_top1": 100.0,
        "n": 1,
    }


def test_floor_curve_counts_empty_no_answers_and_lost_gold() -> None:
    rows = [
        _outcome("noanswer", set(), [{"x"}], [0.30]),
        _outcome("noanswer", set(), [{"x"}], [0.50]),
        _outcome("noanswer", set(), [], []),  # nothing returned at any floor
        _outcome("en_en", {"a", "b"}, [{"a"}, {"b"}], [0.80, 0.40]),
        _outcome("en_en", {"a"}, [{"a"}], [0.60]),
    ]
    curve = floor_curve(rows, (0.0, 0.4, 0.42, 0.6, 0.62))
    assert (curve["n_noanswer"], curve["n_gold"]) == (3, 3)
    got = [(r["floor"], r["noanswer_empty"], r["gold_lost"]) for r in curve["rows"]]
    assert got == [
        (0.0, 33.33, 0.0),
        (0.4, 66.67, 0.0),
        (0.42, 66.67, 33.33),
        (0.6, 100.0, 33.33),
        (0.62, 100.0, 66.67),
    ]
    assert highest_floor(curve, max_loss=2.0) == 0.4
    assert highest_floor(curve, max_loss=40.0) == 0.6


# --- public sets in the same shape ----------------------------------------------------------


def test_locomo_set_keeps_session_dates_and_asks_category_5_as_noanswer(
    toy_data: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("RECALLMEM_BENCH_DATA", str(toy_data))
    locomo = load_locomo_set("fact")
    conv = locomo.users[0]
    assert all(f.said_at is not None for f in conv.facts)
    assert [q.kind for q in conv.questions] == ["single-hop", "multi-hop", "noanswer"]
    assert not conv.questions[2].answerable and conv.questions[2].labelled


def test_memorybank_gold_is_every_turn_of_the_day_the_question_names(
    toy_data: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("RECALLMEM_BENCH_DATA", str(toy_data))
    (user,) = load_memorybank_set().users
    assert len(user.facts) == 3 and user.facts[0].text == "今天我在公园跑了五公里。\n真厉害！"
    dated, undated, other_day = user.questions
    assert dated.kind == "dated" and dated.gold == frozenset(
        {f"{user.user_id}/2023-04-27/0", f"{user.user_id}/2023-04-27/1"}
    )
    # No day named, or a day with no conversation: no gold can be built, so unlabelled.
    assert undated.kind == other_day.kind == "unlabelled"
    assert not undated.labelled and not undated.answerable


# --- the fast hook and the suite end to end ---------------------------------------------------


def test_evaluate_scores_a_ranking_function_without_chroma(
    toy_data: Path, blind_dir: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from bench.bilingual import bm25_rank, cosine_rank, evaluate

    monkeypatch.setenv("RECALLMEM_BENCH_DATA", str(toy_data))
    cache = tmp_path / "vectors.npz"

    def gold_first(candidates: Any, asked: Any) -> np.ndarray:
        return np.array([1.0 if ids & asked.question.gold else 0.0 for ids in candidates.cites])

    perfect = evaluate(gold_first, "all", folder=blind_dir, cache_file=cache)
    pooled = perfect["bilingual (all blind sets)"]
    assert pooled["overall"] == {"n": 6, "top1": 100.0, "R@5": 100.0, "R@10": 100.0, "MRR": 100.0}
    assert set(perfect) == {
        "toy",
        "toy+pad",
        "bilingual (all blind sets)",
        "bilingual+pad (all blind sets)",
    }
    assert cache.exists()  # a second process embeds nothing
    dev = evaluate(cosine_rank, "dev", folder=blind_dir, cache_file=cache)
    test = evaluate(cosine_rank, "test", folder=blind_dir, cache_file=cache)
    assert dev["toy"]["overall"]["n"] + test["toy"]["overall"]["n"] == 6
    lexical = evaluate(bm25_rank, "all", padded=False, folder=blind_dir, cache_file=cache)
    assert "toy+pad" not in lexical
    assert lexical["toy"]["kind"]["zh_zh"]["top1"] == 100.0  # 我的猫 shares its bigrams


def test_bilingual_suite_runs_end_to_end_and_keeps_the_first_look(
    toy_data: Path,
    blind_dir: Path,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    from bench.__main__ import main
    from bench.bilingual_report import FirstLookExistsError, bilingual

    monkeypatch.setenv("RECALLMEM_BENCH_DATA", str(toy_data))
    monkeypatch.setenv("RECALLMEM_BENCH_BLIND", str(blind_dir))
    assert main(["bilingual", "--quick", "--no-write"]) == 0
    out = capsys.readouterr().out
    assert "| toy | 3 |" in out  # the test split: zh_en, zh_zh, paraphrase
    assert "highest floor losing <= 2 % of answerable gold on dev:" in out
    results = tmp_path / "results"
    payload = bilingual(quick=True, first_look=True, results_dir=results)
    saved = json.loads((results / "bilingual_first_look.json").read_text(encoding="utf-8"))
    assert saved["provenance"]["blind_files_sha256"].keys() == {"toy.json"}
    assert (
        saved["results"]["toy"]["default"]["test"]["overall"]
        == (payload["results"]["toy"]["default"]["test"]["overall"])
    )
    before = (results / "bilingual_first_look.json").read_bytes()
    with pytest.raises(FirstLookExistsError, match="recorded once"):
        bilingual(quick=True, first_look=True, results_dir=results)
    assert (results / "bilingual_first_look.json").read_bytes() == before
    assert not (results / "bilingual.json").exists()
    assert set(payload["floor"]["by_source"]) == {"blind", "locomo-fact"}
    assert len(payload["floor"]["curves"]["default"]["dev"]["rows"]) == 51


def test_the_floor_figure_is_drawn_from_the_payload(tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")
    from bench.plots import plot_all
    from bench.report import save_results

    rows = [{"floor": f, "noanswer_empty": 100.0 * f, "gold_lost": 50.0 * f} for f in (0, 0.5, 1)]
    curve = {"dev": {"rows": rows}, "test": {"rows": rows}}
    floor = {
        "curves": {"default": curve, "cosine": curve},
        "by_source": {"blind": curve},
        "chosen_dev": 0.0,
    }
    save_results("bilingual", {"floor": floor}, tmp_path)
    (written,) = plot_all(tmp_path, tmp_path / "img")
    assert written.name == "bench_bilingual_floor.png"
    assert written.read_bytes().startswith(b"\x89PNG")


def test_run_encoder_embeds_each_text_once_and_keeps_vectors_between_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from recallmem.embedders import UniversalSentenceEncoder

    from bench.bilingual_cache import RunEncoder

    embedded: list[str] = []
    real = UniversalSentenceEncoder.embed_array

    def counting(self: UniversalSentenceEncoder, texts: list[str]) -> np.ndarray:
        embedded.extend(texts)
        return real(self, texts)

    monkeypatch.setattr(UniversalSentenceEncoder, "embed_array", counting)
    cache = tmp_path / "vectors.npz"
    first = RunEncoder(cache)
    vectors = first.embed_array(["我喜欢咖啡", "likes coffee", "我喜欢咖啡"])
    again = first.embed_array(["likes coffee"])
    assert embedded == ["我喜欢咖啡", "likes coffee"]
    assert np.array_equal(vectors[1], again[0]) and np.array_equal(vectors[0], vectors[2])
    first.save()
    second = RunEncoder(cache)
    assert np.array_equal(second.embed_array(["likes coffee"])[0], again[0])
    assert embedded == ["我喜欢咖啡", "likes coffee"]  # nothing embedded by the second run
