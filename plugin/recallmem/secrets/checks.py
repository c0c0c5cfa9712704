"""What a secret's value must look like, and the checksums numbers must pass.

Used by :mod:`recallmem.secrets.detector`: a rule in ``prompts/secrets.yaml`` names a value shape
(``strong``, ``random``) or a check (``luhn``, ``china_id``, ``us_ssn``) defined here.

>>> looks_random("9f86d081884c7d659a2feaa0c55ad015"), looks_random("user-profile-settings-v2")
(True, False)
"""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import date

_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}", re.I)
_HEX = re.compile(r"[0-9a-f]{24,}", re.I)


def looks_strong(value: str) -> bool:
    """6+ characters holding a digit or a symbol: not an ordinary word."""
    return len(value) >= 6 and any(c.isdigit() or not c.isalnum() for c in value)


def looks_random(value: str) -> bool:
    """Key-like: 24+ hex, or 20+ characters mixing cases and digits, never a UUID."""
    core = value.rstrip("=")
    if _UUID.fullmatch(core):
        return False
    if _HEX.fullmatch(core):
        return True
    digits, lower, upper = (any(test(c) for c in core) for test in
                            (str.isdigit, str.islower, str.isupper))  # fmt: skip
    separated = bool(re.search(r"[_\-]", core))
    return digits and (len(core) >= 32 or (len(core) >= 20 and lower and upper and not separated))


def luhn_valid(digits: str) -> bool:
    """The Luhn checksum of a card number.

    >>> luhn_valid("4111111111111111"), luhn_valid("4111111111111112")
    (True, False)
    """
    total = 0
    for n, char in enumerate(reversed(digits)):
        d = int(char) * (2 if n % 2 else 1)
        total += d - 9 if d > 9 else d
    return total % 10 == 0


_CARD_PREFIX = re.compile(r"4|5[1-5]|2[2-7]|3[47]|3[068]|35|6[0245]|62|81")
_CARD_GROUPS = {(4, 4, 4, 4), (4, 4, 4, 4, 3), (4, 6, 5), (4, 6, 4), (4, 4, 4, 1), (4, 4, 4, 2),
                (4, 4, 4, 3), (4, 4, 4, 4, 2), (6, 13)}  # fmt: skip


def card_valid(raw: str) -> bool:
    """13-19 digits grouped like a card, a known issuer prefix and the Luhn check."""
    digits = re.sub(r"\D", "", raw)
    groups = tuple(len(g) for g in re.split(r"[ \-]", raw))
    grouped = len(groups) == 1 or groups in _CARD_GROUPS
    return (13 <= len(digits) <= 19 and grouped and bool(_CARD_PREFIX.match(digits))
            and luhn_valid(digits))  # fmt: skip


_ID_WEIGHTS = (7, 9, 10, 5, 8, 4, 2, 1, 6, 3, 7, 9, 10, 5, 8, 4, 2)


def china_id_valid(number: str) -> bool:
    """An 18-character 身份证 number: a real birth date and the ISO 7064 MOD 11-2 check.

    >>> china_id_valid("11010519491231002X"), china_id_valid("110105194912310021")
    (True, False)
    """
    if not re.fullmatch(r"\d{17}[\dXx]", number):
        return False
    try:
        date(int(number[6:10]), int(number[10:12]), int(number[12:14]))
    except ValueError:
        return False
    total = sum(int(d) * w for d, w in zip(number[:17], _ID_WEIGHTS, strict=True))
    return "10X98765432"[total % 11] == number[17].upper()


def us_ssn_valid(raw: str) -> bool:
    """A US social security number in the ranges ever issued (no 000, 666, 9xx area...).

    >>> us_ssn_valid("123-45-6789"), us_ssn_valid("666-45-6789"), us_ssn_valid("123-00-6789")
    (True, False, False)
    """
    digits = re.sub(r"\D", "", raw)
    if len(digits) != 9:
        return False
    area, group, serial = int(digits[:3]), int(digits[3:5]), int(digits[5:])
    return 0 < area < 900 and area != 666 and group > 0 and serial > 0


CHECKS: dict[str, Callable[[str], bool]] = {
    "luhn": card_valid,
    "china_id": china_id_valid,
    "us_ssn": us_ssn_valid,
}


__all__ = ["CHECKS", "china_id_valid", "looks_random", "looks_strong", "luhn_valid", "us_ssn_valid"]
