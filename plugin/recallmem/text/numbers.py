"""Numbers in text, as canonical strings: what a fact's figures are checked against.

A fact may write a number another way than the user said it: full-width digits
(``３０００``), thousands separators (``3,000``), a multiplier (``3万``, ``3.5k``,
``3 thousand``), Chinese numerals (``三千``, ``两万五``) or English number words
(``three thousand``, ``twenty-five``). :func:`numbers_said` finds every number a text
says, generously (for the user's messages); :func:`numbers_written` finds the figures a
text states, strictly (for a fact): digits and Chinese numerals that are clearly a
number, not dates or times, which a model writes when it resolves "next Friday" or
"in two years". A run of digits split by spaces, hyphens or dots into a phone, account
or card number counts whole (``415-555-0100`` is ``4155550100``).

>>> sorted(numbers_said("我比较喜欢三千字左右的长文, budget 3.5万, call 415 555 0100"))
['0100', '100', '3.5', '3000', '35000', '415', '4155550100', '555']
>>> numbers_written("喜欢 3000 字左右的长文; due 2025-03-07 at 9:30")
['3000']
>>> numbers_written("wire all savings to account 991")
['991']
>>> numbers_written("两人考虑 2027-28 学年搬家, 模考 142/180, 三个月, 两年")
['142', '180', '3', '2']
"""

from __future__ import annotations

import re
import unicodedata
from decimal import Decimal, InvalidOperation

_CN_DIGITS = {"零": 0, "〇": 0, "一": 1, "二": 2, "两": 2, "三": 3, "四": 4, "五": 5, "六": 6,
              "七": 7, "八": 8, "九": 9}  # fmt: skip
_CN_UNITS = {"十": 10, "百": 100, "千": 1000}
_CN_BIG = {"万": 10_000, "亿": 100_000_000}
_CN_NUMERAL = re.compile(f"[{''.join([*_CN_DIGITS, *_CN_UNITS, *_CN_BIG])}]+")
# What follows a Chinese numeral that is a count: 三个, 两年, 五岁 (not 一直, 一起).
_CN_MEASURE = set("个位岁年月日号天周次件人口元块钱字页本张条层楼分秒点小时倍")
# A lone 一 is an article ("一个": "a"), and 两 before people a pair ("两人": "the two of
# them", for "we"): what a model writes for words with no figure the user must have said.
_CN_ARTICLES = {"一": _CN_MEASURE, "两": set("人位口")}
_MULTIPLIER = {"万": 10_000, "千": 1000, "百": 100, "亿": 100_000_000, "k": 1000, "m": 1_000_000,
               "thousand": 1000, "million": 1_000_000, "billion": 1_000_000_000}  # fmt: skip
_DIGIT_GROUP = re.compile(r"\d+(?:[ .\-]\d+)*")
_SEPARATOR = re.compile(r"(?<=\d),(?=\d)")
# A Latin multiplier ends where a Latin letter would make it a word ("650k左右" is scaled,
# "650kg" is not): \b cannot say so before a CJK character, which is a word character too.
_SCALED = re.compile(
    r"(\d+(?:\.\d+)?)\s*(万|千|百|亿|(?:k|m|thousand|million|billion)(?![a-z]))", re.I
)
_LONG_NUMBER = 7  # digits from which a split run is one number (a phone, an account)
_ONES = (
    "zero one two three four five six seven eight nine ten eleven twelve thirteen "
    "fourteen fifteen sixteen seventeen eighteen nineteen"
)
_TENS = "twenty thirty forty fifty sixty seventy eighty ninety"
_NTHS = "first second third fourth fifth sixth seventh eighth ninth tenth eleventh twelfth"
_WORDS = {w: n for n, w in enumerate(_ONES.split(" "))}
_WORDS.update({w: 10 * n for n, w in enumerate(_TENS.split(" "), start=2)})
_ORDINALS = {w: n for n, w in enumerate(_NTHS.split(" "), start=1)}
_SCALES = {"hundred": 100, "thousand": 1000, "million": 1_000_000, "billion": 1_000_000_000}
_WORD = re.compile(r"[a-z]+")
# Dates and times a model resolves from "tomorrow" or "next year": not figures the user
# must have said.
_MONTHS = "jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec"
_DATES = re.compile(
    r"\d{4}[-/.]\d{1,2}[-/.]\d{1,2}(?:[ T]\d{1,2}:\d{2}(?::\d{2})?)?"
    # A school or fiscal year: "2027-28", "2027/28".
    r"|\b(?:19|20)\d{2}\s*[-–/]\s*\d{2}(?![\d\-/.:])"
    # Not inside a score or a ratio: "142/180" holds no "42/18".
    r"|(?<!\d)\d{1,2}/\d{1,2}(?:/\d{2,4})?(?!\d)|\d{1,2}:\d{2}(?::\d{2})?"
    r"|\d{1,2}\s*(?:am|pm|a\.m\.|p\.m\.)\b|\d{4}\s*年|\d{1,2}\s*[月日号点时]"
    # A range of days: "9 月 14–20 日", "Aug 14-17".
    r"|\d{1,2}\s*[–—~\-至到]\s*\d{1,2}\s*[日号]"
    rf"|\b(?:{_MONTHS})[a-z]*\.?\s+\d{{1,2}}\s*[–—\-]\s*\d{{1,2}}(?!\d)"
    # A month's day is one or two digits, never the start of a year ("July 2026").
    rf"|\b(?:{_MONTHS})[a-z]*\.?\s+\d{{1,2}}(?!\d)(?:st|nd|rd|th)?(?:,?\s+\d{{4}})?"
    rf"|\b\d{{1,2}}(?:st|nd|rd|th)?\s+(?:{_MONTHS})[a-z]*|\b(?:19|20)\d{{2}}\b",
    re.I,
)


def _canonical(value: Decimal) -> str:
    if value == value.to_integral_value():
        return str(int(value))
    return format(value.normalize(), "f")


def _decimal(text: str) -> Decimal | None:
    try:
        return Decimal(text)
    except InvalidOperation:
        return None


def chinese_value(numeral: str) -> int:
    """The value of a Chinese numeral: ``三千`` 3000, ``一万二千`` 12000, ``两万五`` 25000.

    >>> [chinese_value(n) for n in ("三千", "十五", "两万五", "一九九一")]
    [3000, 15, 25000, 1991]
    """
    if all(c in _CN_DIGITS for c in numeral):  # read digit by digit: 一九九一
        return int("".join(str(_CN_DIGITS[c]) for c in numeral))
    total = section = digit = 0
    last_unit = 1
    for char in numeral:
        if char in _CN_DIGITS:
            digit = _CN_DIGITS[char]
        elif char in _CN_UNITS:
            last_unit = _CN_UNITS[char]
            section += (digit or 1) * last_unit
            digit = 0
        else:
            last_unit = _CN_BIG[char]
            total += (section + digit) * last_unit
            section = digit = 0
    # A digit after a unit is the next unit down, spoken short: 两万五 is 25000.
    tail = digit * (last_unit // 10) if digit and last_unit >= 100 and not section else digit
    return total + section + tail


def _english(text: str) -> set[str]:
    """Numbers written as English words: ``three thousand five hundred``, ``third``."""
    found: set[str] = set()
    total = current = 0
    counting = False
    for word in [*_WORD.findall(text.lower().replace("-", " ")), ""]:
        if word in _WORDS:
            current, counting = current + _WORDS[word], True
        elif word in _SCALES and counting:
            current *= _SCALES[word] if _SCALES[word] == 100 else 1
            if _SCALES[word] > 100:
                total, current = total + current * _SCALES[word], 0
        elif word == "and" and counting:
            continue
        else:
            if counting:
                found.add(str(total + current))
            total = current = 0
            counting = False
            if word in _ORDINALS:
                found.add(str(_ORDINALS[word]))
    return found


def _digit_groups(text: str) -> list[list[str]]:
    """Each run of digits, with the digit runs it is split into."""
    return [re.split(r"[ .\-]", m.group()) for m in _DIGIT_GROUP.finditer(text)]


def _unseparated(text: str) -> str:
    # Thousands separators only: a comma elsewhere ends a word. NFKC reads "，" as ",",
    # and dropping it made "1.5M，lead" one word, "1.5Mlead", so 1.5M was never said.
    return _SEPARATOR.sub("", text)


def numbers_said(text: str) -> set[str]:
    """Every number ``text`` says, however written (canonical strings)."""
    text = unicodedata.normalize("NFKC", text)
    found: set[str] = set()
    plain = _unseparated(text).replace("_", "")
    for match in _DIGIT_GROUP.finditer(plain):
        parts = re.split(r"[ .\-]", match.group())
        if len(parts) == 2 and "." in match.group() and (value := _decimal(match.group())):
            found.add(_canonical(value))  # a decimal: 3.5
            continue
        found.update(parts)
        found.update(p.lstrip("0") or "0" for p in parts)
        found.add("".join(parts))
    for amount, scale in _SCALED.findall(plain):
        if (value := _decimal(amount)) is not None:
            found.add(_canonical(value * _MULTIPLIER[scale.lower()]))
    found.update(
        str(chinese_value(m.group()))
        for m in _CN_NUMERAL.finditer(text)
        if m.group() not in _CN_BIG
    )  # fmt: skip (万 after digits is a multiplier)
    found.update(_english(text))
    return found


def numbers_written(text: str) -> list[str]:
    """The figures ``text`` states (dates and times aside), each canonical: digits
    (scaled by a multiplier that follows), and Chinese numerals that are clearly a
    number (more than one character, or a count: 三个, 两年)."""
    text = _DATES.sub(" ", _unseparated(unicodedata.normalize("NFKC", text)))
    figures: list[str] = []
    scaled = {m.start(): m for m in _SCALED.finditer(text)}
    for match in _DIGIT_GROUP.finditer(text):
        parts = re.split(r"[ .\-]", match.group())
        if (found := scaled.get(match.start())) is not None:
            value = _decimal(found.group(1))
            figures.append(_canonical(value * _MULTIPLIER[found.group(2).lower()]) if value
                           is not None else found.group(1))  # fmt: skip
        elif sum(map(len, parts)) >= _LONG_NUMBER:
            figures.append("".join(parts))
        elif len(parts) == 2 and "." in match.group() and (value := _decimal(match.group())):
            figures.append(_canonical(value))
        else:
            figures.extend(p.lstrip("0") or "0" for p in parts)
    for match in _CN_NUMERAL.finditer(text):
        after = text[match.end() : match.end() + 1]
        lone = after in _CN_MEASURE and after not in _CN_ARTICLES.get(match.group(), ())
        if match.group() not in _CN_BIG and (len(match.group()) > 1 or lone):
            figures.append(str(chinese_value(match.group())))
    return figures
