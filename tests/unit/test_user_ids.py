"""A user id holds no character a reader cannot see, so two users never look the same."""

from __future__ import annotations

import re

import pytest
from recallmem.errors import InvalidInputError, MissingScopeError
from recallmem.limits import USER_ID_PATTERN, check_scope_id, check_user_id
from recallmem.text.quoting import BRAILLE_BLANK, hidden_characters


def test_no_hidden_character_fits_the_pattern() -> None:
    fits = [c for c in (*hidden_characters(), BRAILLE_BLANK) if re.fullmatch(USER_ID_PATTERN, c)]
    assert fits == []


@pytest.mark.parametrize(
    "invisible", ["\ufeff", "\u200b", "\u2060", "\U000e0061", "\u202e", "\ufe0f", "\u3164"]
)
def test_an_id_that_looks_like_another_is_refused(invisible: str) -> None:
    with pytest.raises(MissingScopeError, match="invisible format characters"):
        check_user_id(f"ada{invisible}")


def test_ids_in_any_script_are_kept() -> None:
    for user in ("ada", "用户-7", "Ärger_ü", "مريم", "👩💻", "a-b_c.d:e"):
        assert check_user_id(user) == user


def test_even_a_joiner_is_refused() -> None:
    # Scripts and emoji need joiners in text, but in an id "a\u200dda" would pass for "ada".
    with pytest.raises(MissingScopeError):
        check_user_id("a\u200dda")


@pytest.mark.parametrize("control", ["\x00", "\x1b", "\x7f", "\x9b", "\r", "\x08"])
def test_an_id_with_a_control_character_is_refused(control: str) -> None:
    with pytest.raises(MissingScopeError, match="control"):
        check_user_id(f"ada{control}")
    with pytest.raises(InvalidInputError, match="control"):
        check_scope_id(f"writer{control}", "agent_id")


@pytest.mark.parametrize("dots", [".", ".."])
def test_the_paths_dot_segments_are_no_user_ids(dots: str) -> None:
    # Clients resolve /v1/users/../facts as /v1/facts: such a user could not be reached.
    with pytest.raises(MissingScopeError, match=r"not '\.' or '\.\.'"):
        check_user_id(dots)
    assert [check_user_id(u) for u in ("...", ".ada", "..ada")] == ["...", ".ada", "..ada"]


def test_agent_and_thread_ids_keep_spaces_but_not_hidden_characters() -> None:
    assert check_scope_id("support bot 2", "agent_id") == "support bot 2"
    with pytest.raises(InvalidInputError, match="invisible"):
        check_scope_id("writer\u200b", "agent_id")
