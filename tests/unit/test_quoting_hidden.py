"""quote_text removes every character no reader sees, and keeps what real text needs.

Removed: format characters (Cf) but joiners, variation selectors but one presentation
selector after a character, the other default-ignorable characters (fillers, grapheme
joiner). Kept: emoji ZWJ sequences, one VS15/VS16, ZWNJ in Persian, Chinese and English
text byte for byte.
"""

from __future__ import annotations

import itertools
import unicodedata

import pytest
from hypothesis import given
from hypothesis import strategies as st
from recallmem.text.quoting import hidden_characters, quote_text, visible_text

from tests.hidden_text import PAYLOAD, smuggle, unsmuggle


def test_a_payload_spelled_in_variation_selectors_does_not_survive() -> None:
    hidden = "Likes tea \U0001f375" + smuggle(PAYLOAD)
    assert unsmuggle(hidden).decode() == PAYLOAD  # the smuggling works on the raw text
    assert quote_text(hidden) == "Likes tea \U0001f375"
    assert unsmuggle(quote_text(hidden)) == b""


@pytest.mark.parametrize(
    "char",
    [
        "\ufff9", "\ufffa", "\ufffb",  # interlinear annotation (Cf)
        "\U0001d173", "\U0001d17a",  # musical beams and ties (Cf)
        "\U00013430", "\U00013438", "\U0001343f",  # Egyptian format controls (Cf, 15.0)
        "\u034f",  # combining grapheme joiner
        "\u180b", "\u180d", "\u180f",  # Mongolian free variation selectors
        "\u115f", "\u1160", "\u3164", "\uffa0",  # Hangul fillers
        "\ufe00", "\ufe0f", "\U000e0100", "\U000e01ef",  # variation selectors, between spaces
        "\u200b", "\u2060", "\ufeff", "\u00ad", "\u202e", "\U000e0041",  # removed before too
    ],
)  # fmt: skip
def test_each_hidden_character_is_removed(char: str) -> None:
    assert quote_text(f"a {char} b") == "a b"
    assert quote_text(f"ab{char}{char}cd") == "abcd"
    assert visible_text(f"x{char}") == "x"


def test_every_format_character_but_the_joiners_is_removed() -> None:
    format_characters = [c for c in map(chr, range(0x110000)) if unicodedata.category(c) == "Cf"]
    assert set(format_characters) <= hidden_characters()
    kept = {c for c in format_characters if quote_text(f"a{c}b") != "ab"}
    assert kept == {"\u200c", "\u200d"}


def test_the_braille_blank_reads_as_a_space() -> None:
    assert quote_text("Likes\u2800\u2800\u2800tea") == "Likes tea"
    assert visible_text("\u2800\u2800").strip() == ""


@pytest.mark.parametrize(
    "text",
    [
        "Family: \U0001f468\u200d\U0001f469\u200d\U0001f467\u200d\U0001f466",  # ZWJ sequence
        "Loves \u2764\ufe0f and \u2603\ufe0e",  # one VS16, one VS15
        "Rainbow flag \U0001f3f3\ufe0f\u200d\U0001f308",  # VS16 then ZWJ
        "Keycap 1\ufe0f\u20e3",
        "Eye in speech bubble \U0001f441\ufe0f\u200d\U0001f5e8\ufe0f",
        "\u0645\u06cc\u200c\u062e\u0648\u0627\u0647\u0645",  # Persian, a ZWNJ inside
        "\u0915\u094d\u200d\u0937",  # Devanagari with a ZWJ
        "我喜欢喝乌龙茶，不加糖。",
        "Prefers reports in Chinese (简体), deadline: Friday!",
    ],
)
def test_emoji_scripts_chinese_and_english_pass_unchanged(text: str) -> None:
    assert quote_text(text) == text


def test_selectors_and_joiners_that_carry_nothing_visible_go() -> None:
    assert quote_text("tea\ufe0f\ufe0f\ufe0e") == "tea"  # a run of selectors
    assert quote_text("\ufe0ftea \ufe0f") == "tea"  # after nothing, after a space
    assert quote_text("a\u200d\ufe0fb") == "a\u200db"  # a selector after a joiner
    assert quote_text("a\ufe01b") == "ab"  # not a presentation selector
    # Joiner runs would spell bits as ZWJ/ZWNJ: a run of two or more goes whole.
    assert quote_text("tea" + "\u200d\u200c\u200c\u200d" * 20 + "time") == "teatime"


@given(st.text(alphabet=st.sampled_from(["\ufe0e", "\ufe0f", "\u200d", "\u200c", "x", " "])))
def test_at_most_one_selector_or_joiner_sits_between_visible_characters(text: str) -> None:
    quoted = quote_text(text)
    for a, b in itertools.pairwise(quoted):
        assert not (a in "\ufe0e\ufe0f\u200c\u200d" and b in "\ufe0e\ufe0f\u200c\u200d") or (
            a in "\ufe0e\ufe0f" and b in "\u200c\u200d"  # VS16 then ZWJ: an emoji sequence
        ), repr(quoted)
