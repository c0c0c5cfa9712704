"""Secrets written to evade the rules are found: invisible characters inside them,
look-alike letters, compatibility forms; redaction removes the original characters.

The rules read a view of the text (recallmem.secrets.view); these tests check that view
on handwritten evasions, on the labelled secret sets rewritten five ways (a zero-width
space after every character, Cyrillic look-alikes, fullwidth ASCII, marks over the
vowels, small capitals), and that ordinary text with joiners in emoji or Chinese, or
accented words, is not flagged.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st
from recallmem.errors import SecretRefusedError
from recallmem.secrets.detector import find_secret, redact, scan, screen_text
from recallmem.secrets.view import _STABLE, _seen, view_of
from recallmem.text.quoting import visible_text

from tests.hidden_text import EVASIONS, KEY

DATA = Path(__file__).resolve().parents[1] / "data" / "secrets"


@pytest.mark.parametrize(("text", "secret"), EVASIONS.items())
def test_each_evasion_is_found_and_redacted_whole(text: str, secret: str) -> None:
    assert find_secret(text) is not None
    redacted = redact(text)
    assert redacted == text.replace(secret, "[REDACTED]")
    with pytest.raises(SecretRefusedError, match=r"content holds a secret \(") as caught:
        screen_text(text, field="content", policy="refuse")
    assert secret not in str(caught.value)


def test_a_secret_with_hidden_characters_inside_leaves_no_part_of_it() -> None:
    text = f"key sk-proj-{KEY[:10]}\u200b{KEY[10:20]}\u2060{KEY[20:]}\ufeff, thanks"
    assert redact(text) == "key [REDACTED]\ufeff, thanks"  # the one after it is no part
    assert redact("pin is 4\u200b8\u200b3\u200b2 ok") == "pin is [REDACTED] ok"


def test_a_hidden_character_between_two_words_still_parts_them() -> None:
    # Removing the character joins "is" to the key; read as written, the key stands alone.
    text = f"My OpenAI key is\u200bsk-proj-{KEY}"
    assert redact(text) == "My OpenAI key is\u200b[REDACTED]"


def cases(name: str) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = yaml.safe_load((DATA / f"{name}.yaml").read_text("utf-8"))
    return rows


def zero_width(text: str) -> str:
    return "\u200b".join(text)


def cyrillic(text: str) -> str:
    return text.translate(str.maketrans("aeopcxyABEKMHOPCTX", "аеорсхуАВЕКМНОРСТХ"))


def fullwidth(text: str) -> str:
    return "".join(chr(ord(c) + 0xFEE0) if "!" <= c <= "~" else c for c in text)


def accented(text: str) -> str:  # a mark over every vowel: precomposed, or combining
    marked = text.translate(str.maketrans("aeiouAEIOU", "äéîõùÄÉÎÕÙ"))
    return marked.replace("y", "y\u0301")


def small_capitals(text: str) -> str:
    return text.translate(str.maketrans("abcdefghijklmnoprstuvwyz", "ᴀʙᴄᴅᴇꜰɢʜɪᴊᴋʟᴍɴᴏᴘʀꜱᴛᴜᴠᴡʏᴢ"))


DISGUISES = [zero_width, cyrillic, fullwidth, accented, small_capitals]


@pytest.mark.parametrize("disguise", DISGUISES)
@pytest.mark.parametrize("suffix", ["", "_heldout"], ids=["dev", "heldout"])
def test_every_labelled_secret_the_rules_find_is_found_disguised(
    disguise: Any, suffix: str
) -> None:
    found = [
        case for case in cases(f"secrets{suffix}") if case["secret"] not in redact(case["text"])
    ]
    assert len(found) >= 35
    for case in found:
        text, secret = disguise(case["text"]), disguise(case["secret"])
        redacted = redact(text)
        assert secret not in redacted, text
        assert case["secret"] not in visible_text(redacted), text


@pytest.mark.parametrize("disguise", DISGUISES)
def test_benign_texts_disguised_are_not_flagged(disguise: Any) -> None:
    benign = [c["text"] for n in ("benign", "benign_heldout") for c in cases(n)]
    clean = [text for text in benign if not scan(text)]
    assert len(clean) >= 80
    assert [text for text in clean if scan(disguise(text))] == []


@pytest.mark.parametrize(
    "text",
    [
        "Family: \U0001f468\u200d\U0001f469\u200d\U0001f467 loves pass the parcel",
        "Sent \u2764\ufe0f to the team, password manager works fine",
        "我喜欢\u200b喝茶，密\u200d码已经改过了",
        "\u0645\u06cc\u200c\u062e\u0648\u0627\u0647\u0645 my token is expired",
        "Uses a pass\u200dword manager",
        "The \u0440\u0430ssword is stored in 1Password",
        "Müller fährt nach Zürich; café au lait, señor, Ångström, Dvořák",
        "Order \uff14\uff11\uff11\uff11 \uff11\uff11\uff11\uff11 \uff11\uff11\uff11\uff11 "
        "\uff11\uff11\uff11\uff11 shipped",
    ],
)
def test_ordinary_text_with_joiners_or_look_alikes_is_not_a_secret(text: str) -> None:
    assert scan(text) == []
    assert redact(text) == text


def test_the_fast_path_skips_only_characters_the_view_leaves_alone() -> None:
    skipped = [chr(c) for c in range(0x30000) if not _STABLE.match(chr(c))]
    assert len(skipped) > 30000
    assert [c for c in skipped if _seen(c) != c] == []
    assert view_of("Prefers reports in Chinese") is None
    assert view_of("我喜欢喝乌龙茶") is None


PIECES = st.sampled_from(["a", "sk-", "pass", "word", " ", "1", "\u200b", "\u2060", "\ufe0f",
    "\u0430", "\uff53", "\ufb01", "\u2800", "密码", "\u3164", "é", "\U0001d41a"])  # fmt: skip


@given(st.lists(PIECES, max_size=16).map("".join))
def test_every_view_span_comes_from_the_original_characters_it_names(text: str) -> None:
    view = view_of(text)
    if view is None:
        return
    for start in range(len(view.text) + 1):
        for end in range(start, len(view.text) + 1):
            first, last = view.span(start, end)
            assert 0 <= first <= last <= len(text)
            source = text[first:last]
            read = view_of(source)
            assert view.text[start:end] in (source if read is None else read.text)
