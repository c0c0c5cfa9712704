"""The vocabulary of time expressions, from ``prompts/time_words.yaml``, compiled.

The words are data (month names, the words that introduce a year or a month, relative
phrases in English and Chinese); this module checks them when they load and builds the
regular expressions :mod:`recallmem.retrieval.when` reads queries with.

>>> TIME_WORDS.month_of["sep"], TIME_WORDS.relative[0].unit
(9, 'day')
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from recallmem.prompts import compiled_patterns, load_data
from recallmem.text.words import listed_once

Unit = Literal["day", "week", "month", "year"]


def _lower_case_words(words: list[str]) -> list[str]:
    for word in words:
        if not word or word != word.lower() or word.split() != [word]:
            raise ValueError(f"{word!r} must be one lower-case word (queries are lower-cased)")
    return listed_once(words)


class ChineseMarks(BaseModel):
    """The characters after a year, a month and a day number: 2023年10月13日."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    year: str = Field(min_length=1, max_length=1)
    month: str = Field(min_length=1, max_length=1)
    day: list[str] = Field(min_length=1)


class RelativeSpec(BaseModel):
    """Phrases naming the ``unit`` that is ``offset`` units from today's."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    unit: Unit
    offset: int
    patterns: list[str] = Field(min_length=1)

    _compiles = field_validator("patterns")(compiled_patterns)


class TimeWordsSpec(BaseModel):
    """``prompts/time_words.yaml``."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: Literal["time_words"]
    version: str = Field(min_length=1)
    months: list[list[str]] = Field(min_length=12, max_length=12)
    ordinal_suffixes: list[str]
    between_day_and_month: list[str]
    before_a_year: list[str] = Field(min_length=1)
    before_a_month: list[str] = Field(min_length=1)
    chinese: ChineseMarks
    relative: list[RelativeSpec]

    _words = field_validator(
        "ordinal_suffixes", "between_day_and_month", "before_a_year", "before_a_month"
    )(_lower_case_words)

    @field_validator("months")
    @classmethod
    def _each_name_once(cls, months: list[list[str]]) -> list[list[str]]:
        if empty := [n + 1 for n, names in enumerate(months) if not names]:
            raise ValueError(f"months {empty} have no name")
        _lower_case_words([name for names in months for name in names])
        return months


def _any(words: list[str]) -> str:
    return "|".join(map(re.escape, words))


@dataclass(frozen=True)
class Relative:
    """A compiled relative phrase."""

    pattern: re.Pattern[str]
    unit: Unit
    offset: int


@dataclass(frozen=True)
class TimeWords:
    """The compiled vocabulary: what each pattern's groups hold is said beside it."""

    month_of: dict[str, int]
    day_month_year: re.Pattern[str]  # day, month name, year
    month_day_year: re.Pattern[str]  # month name, day, year
    month_year: re.Pattern[str]  # month name, year
    zh_date: re.Pattern[str]  # year, month, day or None
    zh_month: re.Pattern[str]  # month
    year_alone: re.Pattern[str]  # year in group 1 or 2
    in_month: re.Pattern[str]  # month name
    relative: tuple[Relative, ...]

    @classmethod
    def compile(cls, spec: TimeWordsSpec) -> TimeWords:
        """Build the patterns; longer month names are tried first ("june" before "jun")."""
        month_of = {names[0]: n + 1 for n, names in enumerate(spec.months)} | {
            name: n + 1 for n, names in enumerate(spec.months) for name in names[1:]
        }
        mon = r"(" + _any(sorted(month_of, key=len, reverse=True)) + r")\.?"
        day = rf"(\d{{1,2}})(?:{_any(spec.ordinal_suffixes)})?"
        year = r"((?:19|20)\d\d)(?!\d)"
        of = rf"(?:(?:{_any(spec.between_day_and_month)})\s+)?"
        zh_year, zh_month = re.escape(spec.chinese.year), re.escape(spec.chinese.month)
        zh_day = rf"\s*[{''.join(map(re.escape, spec.chinese.day))}]"
        return cls(
            month_of=month_of,
            day_month_year=re.compile(rf"\b{day}\s+{of}{mon},?\s+{year}"),
            month_day_year=re.compile(rf"\b{mon}\s+{day},?\s+{year}"),
            month_year=re.compile(rf"\b{mon},?\s+{of}{year}"),
            zh_date=re.compile(
                rf"((?:19|20)\d\d)\s*{zh_year}\s*(\d{{1,2}})\s*{zh_month}(?:\s*(\d{{1,2}}){zh_day})?"
            ),
            zh_month=re.compile(
                rf"(?<![\d{zh_year}])(\d{{1,2}})\s*{zh_month}(?:\s*\d{{1,2}}{zh_day})?"
            ),
            year_alone=re.compile(rf"\b(?:{_any(spec.before_a_year)})\s+{year}|{year}\s*{zh_year}"),
            in_month=re.compile(rf"\b(?:{_any(spec.before_a_month)})\s+{mon}\b"),
            relative=tuple(
                Relative(re.compile("|".join(r.patterns)), r.unit, r.offset) for r in spec.relative
            ),
        )


TIME_WORDS = TimeWords.compile(load_data("time_words", TimeWordsSpec))
