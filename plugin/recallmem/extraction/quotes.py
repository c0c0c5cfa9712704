"""The evidence rule: a proposed fact is stored only on a quote of the user's own words
that supports it.

The model writes the quote, so the rule cannot trust it: a model steered by text it read
(a web page the assistant quoted, say) could stitch single letters of the user's
messages into "a...m...i...n", or cite one word the user said ("me") for any fact. So:

- the quote is cut at each ellipsis into fragments, and every fragment must be a run of
  the user's whole words (``text.units``: words, and CJK characters one by one) from
  ONE user message; a fragment of a single character (a letter, a digit, one CJK
  character) is no piece of anyone's words and is refused;
- the quote must carry the fact: it shares a word of the fact (case folded, function
  words aside, a short ending such as "lives"/"live" allowed) or a CJK character that is
  no function word with it, or it says, in one
  piece, ``MIN_UNSHARED_UNITS`` meaningful words or CJK characters, as a paraphrase in
  the user's words does ("I don't eat meat" for "Is vegetarian").

The prompt asks for facts in the language the user spoke, so a fact and its quote
normally share words; a fact in the other language is refused by hygiene's language
rule before this one is asked.

>>> from recallmem.extraction.threads import Utterance
>>> said = [Utterance(id="u1", role="user", content="Can you summarise this page for me?")]
>>> locate_evidence("a...m...i...n", said)[1]
"evidence quotes single characters ('a', 'm', 'i', 'n'), not the user's words"
>>> locate_evidence("summarise this PAGE", said)[0].id
'u1'
>>> unsupported("User is the CEO of the company", "me")
"evidence 'me' shares no word with the fact and is too short to support it alone"
>>> unsupported("喜欢 3000 字左右的长文", "我比较喜欢三千字左右的长文")
''
"""

from __future__ import annotations

import html
from collections.abc import Sequence

from recallmem.extraction.threads import Utterance
from recallmem.text.words import STOPWORDS, is_cjk, units

# A quote sharing nothing with its fact must say this much on its own, in one piece:
# two meaningful words ("eat meat" for "Is vegetarian", "TS mostly" for "Uses
# TypeScript", 不吃肉 for 素食者), never one word ("me") alone.
MIN_UNSHARED_UNITS = 2
_MAX_ENDING = 3  # "live" ~ "lives", "lived"; "review" ~ "reviews", "reviewed"
_SEP = "\x00"  # joins units for a whole-unit search; never inside a unit


def _units(text: str) -> list[str]:
    # A model may straighten the user's curly apostrophe (don’t → don't): the same word.
    return units(text.replace("’", "'"))


def fragments(quote: str) -> list[tuple[str, ...]]:
    """The quote's parts between ellipses, each as its units (empty parts left out).

    >>> fragments("I live in Berlin … 喜欢长文")
    [('i', 'live', 'in', 'berlin'), ('喜', '欢', '长', '文')]
    """
    # The prompt shows text escaped (&lt; for <); a quote may copy either form.
    parts = html.unescape(quote).replace("…", "...").split("...")
    return [found for part in parts if (found := tuple(_units(part)))]


def _joined(found: Sequence[str]) -> str:
    return _SEP + _SEP.join(found) + _SEP


def locate_evidence(quote: str, window: Sequence[Utterance]) -> tuple[Utterance | None, str]:
    """The user message holding ``quote`` and a reason when there is none.

    Compared by units (case and width folded, punctuation ignored); each fragment must
    be a run of whole units of the same user message.
    """
    parts = fragments(quote)
    if not parts:
        return None, "no evidence quoted from the user's messages"
    if singles := [p[0] for p in parts if len(p) == 1 and len(p[0]) == 1]:
        shown = ", ".join(repr(s) for s in singles[:6])
        return None, f"evidence quotes single characters ({shown}), not the user's words"
    wanted = [_joined(p) for p in parts]
    holders = [u for u in window if all(w in _joined(_units(u.content)) for w in wanted)]
    for utterance in holders:
        if utterance.role == "user":
            return utterance, ""
    if holders:
        return None, "evidence is only in the assistant's words"
    return None, "evidence not found in the user's messages"


def _words(text: str) -> set[str]:
    return {u for u in _units(text) if not is_cjk(u) and u not in STOPWORDS}


def _characters(text: str) -> set[str]:
    return {u for u in _units(text) if is_cjk(u) and u not in STOPWORDS}


def _same_word(a: str, b: str) -> bool:
    short, long = sorted((a, b), key=len)
    return a == b or (
        len(short) >= 3 and long.startswith(short) and len(long) - len(short) <= _MAX_ENDING
    )


def unsupported(content: str, quote: str) -> str:
    """Why ``quote`` does not carry the fact ``content``, or "" when it does."""
    said = _words(quote)
    if any(_same_word(w, s) for w in _words(content) for s in said):
        return ""
    if _characters(content) & _characters(quote):
        return ""
    parts = fragments(quote)
    if len(parts) == 1 and sum(u not in STOPWORDS for u in parts[0]) >= MIN_UNSHARED_UNITS:
        return ""
    shown = " ".join(quote.split())[:80]
    if len(parts) > 1:
        return f"evidence {shown!r} is stitched from pieces that share no word with the fact"
    return f"evidence {shown!r} shares no word with the fact and is too short to support it alone"
