"""The secret gate skips only patterns that cannot match: findings are exactly those of
running every pattern, on the secret and benign sets, hostile strings and random text."""

from __future__ import annotations

import json
import re
from dataclasses import replace
from pathlib import Path

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st
from recallmem.secrets.detector import SecretRules, load_secret_rules
from recallmem.secrets.gates import ASCII_CASE_PAIRS, Gate, required_words

DATA = Path(__file__).resolve().parents[1] / "data"
FLAGS = re.IGNORECASE | re.MULTILINE


def corpus() -> list[str]:
    texts = [
        case["text"]
        for name in ("secrets", "secrets_heldout", "benign", "benign_heldout")
        for case in yaml.safe_load((DATA / "secrets" / f"{name}.yaml").read_text("utf-8"))
    ]
    texts += [
        case["text"] for case in yaml.safe_load((DATA / "hostile_strings.yaml").read_text("utf-8"))
    ]
    texts += [json.loads(line)["text"] for file in sorted((DATA / "signals").glob("*.jsonl"))
              for line in file.read_text("utf-8").splitlines() if line.strip()][::5]  # fmt: skip
    return texts


def variants(text: str) -> list[str]:
    # Other cases, and the non-ASCII letters re's IGNORECASE pairs with ASCII ones.
    return [
        text,
        text.upper(),
        text.swapcase(),
        text.replace("s", "\u017f"),
        text.replace("k", "\u212a").replace("K", "\u212a"),
        text.replace("i", "\u0130"),
    ]


@pytest.fixture(scope="module")
def rules() -> SecretRules:
    return load_secret_rules()


def test_gated_findings_equal_ungated_findings(rules: SecretRules) -> None:
    assert rules.gate is not None and sum(rules.gate.gated) > len(rules.gate.gated) // 2
    ungated = replace(rules, gate=None)
    texts = [v for text in corpus() for v in variants(text)]
    assert len(texts) > 3000
    found = 0
    for text in texts:
        assert rules.scan(text) == ungated.scan(text), text
        found += bool(ungated.scan(text))
    assert found > 200  # the sets hold real secrets, which the gate lets through


def test_every_match_holds_one_of_its_patterns_words(rules: SecretRules) -> None:
    texts = [v for text in corpus() for v in variants(text)]
    for rule in rules.rules:
        for pattern in rule.patterns:
            words = required_words(pattern)
            if words is None:
                continue
            either = re.compile("|".join(map(re.escape, words)), FLAGS)
            for text in texts:
                for match in pattern.finditer(text):
                    assert either.search(match.group()), (pattern.pattern, match.group())


def test_required_words_read_off_the_pattern() -> None:
    def words(pattern: str) -> set[str] | None:
        found = required_words(re.compile(pattern, FLAGS))
        return None if found is None else set(found)

    assert words(r"\b(?:password|passwd|pw)\s*[:=]") == {"password", "passwd", "pw"}
    assert words(r"(?<=_)token=\w+") == {"token="}
    assert words(r"(?:api)?[_\-]?key\s*=") == {"key"}  # the optional part is not required
    assert words(r"x?(?=secret)\w+") is None  # a lookahead's text is not in the match
    assert words(r"\d{3}-\d{2}") == {"-"}
    assert words(r"(?:\d[ \-]?){12,18}\d") is None
    assert words(r"[ab]c") == {"c"}  # of two sets, the one with the fewest words
    assert words(r"(?:密码|口令)是") == {"密码", "口令"}


def test_a_text_with_no_word_skips_the_gated_patterns() -> None:
    patterns = [re.compile(r"\bsecret\s*=\s*\w+", FLAGS), re.compile(r"\d{4}", FLAGS)]
    gate = Gate(patterns, FLAGS)
    assert gate.gated == [True, False]
    assert not gate.opens("nothing to see here 1234")
    assert gate.opens("my SECRET = x") and gate.opens("my \u017fecret = x")  # ſ is an s to re
    assert patterns[0].search("my \u017fecret = x")


def test_the_lowered_search_answers_as_the_case_insensitive_one(rules: SecretRules) -> None:
    gate = rules.gate
    assert gate is not None and gate._lowered is not None and gate._any is not None
    texts = [v for text in corpus() for v in variants(text)]
    texts += [text.replace("a", "\u0131") for text in corpus()]  # dotless ı, the fourth pair
    assert [t for t in texts if gate.opens(t) != bool(gate._any.search(t))] == []


def test_the_characters_re_pairs_with_ascii_are_the_ones_the_gate_names() -> None:
    # Every code point, once, through each ASCII letter's case-insensitive pattern.
    everything = "".join(map(chr, range(0x80, 0xD800))) + "".join(map(chr, range(0xE000, 0x110000)))
    paired = {c for letter in "abcdefghijklmnopqrstuvwxyz"
              for c in re.findall(letter, everything, re.IGNORECASE)}  # fmt: skip
    assert paired == set(ASCII_CASE_PAIRS)
    # lower() keeps every position but İ's, and makes ASCII of no other character.
    changed = {c for c in everything if len(c.lower()) != 1 or c.lower().isascii()}
    assert changed <= set(ASCII_CASE_PAIRS)


ALPHABET = st.sampled_from(["password", "pw", " is ", ": ", "=", "_", "-", "sk-", "token", "key",
    "secret", "密码", "是", "a1B2c3D4e5F6g7H8", "4111 1111 1111 1111", "123-45-6789", " ",
    "\u017f", "\u212a", "\u0130", "\u0131", "PIN ", "1234", "https://", "u:p@", "verification code ", "Ab9"])  # fmt: skip


@settings(max_examples=400, deadline=None)
@given(st.lists(ALPHABET, max_size=12).map("".join))
def test_random_texts_find_the_same_secrets(text: str) -> None:
    rules = load_secret_rules()
    assert rules.scan(text) == replace(rules, gate=None).scan(text)
