"""A user id holds no invisible format character, so two users never look the same."""

from __future__ import annotations

import unicodedata

import pytest
from recallmem.errors import MissingScopeError
from recallmem.limits import FORMAT_CHARACTERS, check_user_id


def test_the_table_holds_every_format_character_of_this_unicode() -> None:
    listed = {c for low, high in FORMAT_CHARACTERS for c in range(low, high + 1)}
    missing = [
        hex(c) for c in range(0x110000) if unicodedata.category(chr(c)) == "Cf" and c not in listed
    ]
    assert not missing, f"add these to limits.FORMAT_CHARACTERS: {missing}"


@pytest.mark.parametrize("invisible", ["\ufeff", "\u200b", "\u2060", "\U000e0061", "\u202e"])
def test_an_id_that_looks_like_another_is_refused(invisible: str) -> None:
    with pytest.raises(MissingScopeError, match="invisible format characters"):
        check_user_id(f"ada{invisible}")


def test_ids_in_any_script_are_kept() -> None:
    for user in ("ada", "用户-7", "Ärger_ü", "مريم", "👩💻"):
        assert check_user_id(user) == user


def test_even_a_joiner_is_refused() -> None:
    # Scripts and emoji need joiners in text, but in an id "a\u200dda" would pass for "ada".
    with pytest.raises(MissingScopeError):
        check_user_id("a\u200dda")
