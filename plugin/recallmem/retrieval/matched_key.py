"""Which of a hit's search keys the query matched, for the hit's score parts.

A fact's keys are embedded with its content into one vector (``facts.fact_vectors``), so
the dense part cannot say which key brought it near; the words can. The key named is the
one sharing the most of the query's meaningful words (``text.words.content_units``: words,
and CJK characters, without function words), if any shares one.

>>> matched_key("我的猫叫什么", ("What is my cat called?", "我的猫叫什么名字？"))
'我的猫叫什么名字？'
>>> matched_key("weekend plans", ("What is my cat called?",)) is None
True
"""

from __future__ import annotations

from collections.abc import Sequence

from recallmem.text.words import content_units


def matched_key(query: str, keys: Sequence[str]) -> str | None:
    """The key sharing most of the query's meaningful words (the first of a tie), or None."""
    wanted = content_units(query)
    shared = [len(wanted & content_units(key)) for key in keys]
    if not shared or max(shared) == 0:
        return None
    return keys[shared.index(max(shared))]
