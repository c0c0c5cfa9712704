"""Search keys a model wrote for a fact (``Fact.questions``), read and vetted like the
fact's own text.

The extraction model writes them with each fact (``prompts/extract.yaml``) and the keying
model for facts without any (``prompts/keys.yaml``); the planner may pass some to the
``remember`` tool. Whoever wrote them, a key is kept only when it is one line within
``limits.MAX_QUESTION_CHARS``, holds no secret (alone or read after the keys before it),
is no instruction (``prompts/scope_rules.yaml``), and says nothing its fact does not:
no number the fact lacks (a month's name may come back as its number), and in a fact not
mostly Chinese no identifier (``ESP32``) or capitalised name the fact lacks. That is what
can be checked without a model: an English fact's names and identifiers are written the
same in every language, while a Chinese fact's names may come back in pinyin and its
terms as English abbreviations (糖化血红蛋白, HbA1c), and are not checked. A key set aside is
reported with its reason; the fact keeps the others, since keys only help recall.

>>> from recallmem.extraction.scope_rules import load_scope_rules
>>> from recallmem.secrets.detector import load_secret_rules
>>> keys = ["When is my passport due?", "护照哪天到期？", "Is Ada's passport due in 2027?"]
>>> vetted = vet_questions(keys, "Passport renewal is due 2026-03-31",
...                        load_secret_rules(), load_scope_rules())
>>> vetted.kept
('When is my passport due?', '护照哪天到期？')
>>> [r.reason for r in vetted.rejected]
["names '2027', which the fact does not say"]
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from recallmem.extraction.scope_rules import ScopeRules
from recallmem.limits import MAX_QUESTION_CHARS, MAX_QUESTIONS
from recallmem.secrets.detector import SecretRules, find_secret
from recallmem.text.words import mostly_cjk, normalize

_NUMBER = re.compile(r"(?<![A-Za-z0-9])\d+(?:[.,:]\d+)*")  # not inside an identifier (ESP32)
# A fact written with Chinese numerals ("三十多年") may be keyed with digits ("30 years").
_CJK_NUMERALS = frozenset("〇零一二两三四五六七八九十百千万亿")
_LATIN_WORD = re.compile(r"[A-Za-z][A-Za-z0-9]*(?:['’.\-_+#][A-Za-z0-9]+)*")
_SENTENCE_END = re.compile(r"[.?!。？！:：]\s*$")
_FIRST_PERSON = frozenset({"i", "i'm", "i’m", "i've", "i’ve", "i'd", "i’d", "i'll", "i’ll"})
_POSSESSIVE = re.compile(r"['’]s$")
# A date said with a month's name comes back in Chinese as its number ("July 10" -> 7月10日).
_MONTHS = ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec")
_MONTH_NAME = re.compile(r"\b(" + "|".join(_MONTHS) + r")[a-z]*\b", re.IGNORECASE)


@dataclass(frozen=True)
class SetAside:
    """A key that was not kept, and why."""

    key: str
    reason: str


@dataclass(frozen=True)
class Vetted:
    """The keys kept, in order, and those set aside."""

    kept: tuple[str, ...]
    rejected: tuple[SetAside, ...]


def foreign_detail(key: str, fact: str) -> str | None:
    """A number, or (in a fact not mostly Chinese) an identifier or a Latin-script name,
    that ``key`` says and ``fact`` does not, else None.

    >>> foreign_detail("Does Ada bake on weekends?", "Bakes sourdough bread on weekends")
    'Ada'
    >>> foreign_detail("7月10日去哪？", "Flying to Portland on July 10") is None
    True
    >>> foreign_detail("Where does Wang Jianguo live?", "用户叫王建国，住在杭州") is None
    True
    """
    said = fact.casefold()
    if not _CJK_NUMERALS & set(fact):
        digits = re.sub(r"[\s,]", "", said)
        months = {str(_MONTHS.index(m.group(1).lower()) + 1) for m in _MONTH_NAME.finditer(fact)}
        for found in _NUMBER.finditer(key):
            # Each run of digits on its own: 8:15 is "8点15" in Chinese, 3,000 is "3000".
            runs = re.findall(r"\d+", found.group().replace(",", ""))
            if any(run not in digits and run not in months for run in runs):
                return found.group()
    if mostly_cjk(fact):
        return None  # its names may come back in pinyin, its terms as abbreviations (HbA1c)
    for match in _LATIN_WORD.finditer(key):
        word = _POSSESSIVE.sub("", match.group())
        if word.casefold() in said or word.casefold() in _FIRST_PERSON:
            continue
        identifier = any(c.isdigit() for c in word)
        starts = not key[: match.start()].strip() or _SENTENCE_END.search(key[: match.start()])
        if identifier or (word[0].isupper() and not starts):
            return word
    return None


def _lines(value: Any) -> list[Any]:
    if value is None:
        return []
    if isinstance(value, str):
        return value.splitlines()
    return list(value) if isinstance(value, list | tuple) else [value]


def vet_questions(value: Any, fact: str, secrets: SecretRules, scope: ScopeRules) -> Vetted:
    """The usable keys among ``value`` (a list, or lines of one string) for a fact
    whose content is ``fact``; repeats, blanks and a key that is the fact itself are
    dropped silently, the rest of what is not kept is set aside with the reason."""
    kept: dict[str, str] = {normalize(fact): ""}
    rejected: list[SetAside] = []

    def aside(key: object, reason: str) -> None:
        rejected.append(SetAside(str(key)[:MAX_QUESTION_CHARS], reason))

    for raw in _lines(value):
        if isinstance(raw, Mapping | list | tuple | bool) or raw is None:
            aside(raw, "not a line of text")
            continue
        key = " ".join(str(raw).split())
        if not key or normalize(key) in kept:
            continue
        if len(key) > MAX_QUESTION_CHARS:
            aside(key, f"longer than {MAX_QUESTION_CHARS} characters; a key is one short line")
        elif find_secret(key, secrets, count_redacted=True) or find_secret(
            " ".join([*kept.values(), key]), secrets
        ):
            aside(key, "holds a secret; secrets are never stored")
        elif instruction := scope.violation(key):
            aside(key, instruction)
        elif foreign := foreign_detail(key, fact):
            aside(key, f"names {foreign!r}, which the fact does not say")
        elif len(kept) > MAX_QUESTIONS:
            aside(key, f"more than {MAX_QUESTIONS} keys; the first {MAX_QUESTIONS} are kept")
        else:
            kept[normalize(key)] = key
    return Vetted(tuple(k for k in kept.values() if k), tuple(rejected))
