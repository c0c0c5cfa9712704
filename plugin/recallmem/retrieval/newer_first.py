"""Of two facts about one thing, the newer ranks first when it says the thing changed.

A change the extractor saw is a supersede: the old fact leaves recall. When that step was
missed (a change told in passing, in another language, in another thread, or a fact
written by hand), both facts stay active, and the older one, said in the very words a
question uses ("Drives a 2012 Civic"), often outranks its replacement ("Sold the Civic
and now rides an e-bike"). Recency weighs too little to undo that, and more of it would
bury every older fact a question asks about.

So after scoring, among the ``NEWER_FIRST_TOP`` best candidates, a fact that states a
change (``prompts/change_words.yaml``: "switched", "moved to", "sold", "改成", "搬到",
"不再", ...; or a correction; not a change only planned, "打算换成") is lifted just above
the candidate it replaces: the one said before it that is its nearest fact by meaning,
while it is that fact's nearest too (mutual nearest neighbours in the user's memory),
and not itself a correction when the change is one. A fixed cosine cannot say "about the
same thing": short Chinese facts on unrelated subjects meet at 0.4 in USE, while a
change reworded or told in the other language meets its old fact at 0.33. Nothing else
moves: facts that merely add to each other ("Has a cat named Pepper", later "Pepper
turned five") keep their order, and a changed fact the query is not near is not lifted
into the first places. The lift is a score part of its own (``ScoreParts.newer``), so a
hit's score still rebuilds from its parts. Measured in docs/decisions/0041-newer-first.md.

>>> import numpy as np
>>> scores = np.array([0.74, 0.40, 0.30])
>>> said = np.array([1.0, 2.0, 3.0])
>>> vectors = np.array([[1.0, 0.0], [0.8, 0.6], [0.0, 1.0]])
>>> lift = newer_first(scores, said, vectors, np.array([False, True, True]))
>>> [round(float(s), 3) for s in scores + lift]
[0.74, 0.741, 0.3]
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import lru_cache
from typing import Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, field_validator

from recallmem.prompts import compiled_patterns, load_data
from recallmem.retrieval.ranking import top_k

NEWER_FIRST_TOP = 10  # the candidates compared: the block's and the recall tool's few
_STEP = 1e-3  # how far above the older fact a lifted one lands


class WordPatterns(BaseModel):
    """Regular expressions in English and in Chinese."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    en: list[str] = Field(min_length=1)
    zh: list[str] = Field(min_length=1)

    _compiles = field_validator("en", "zh")(compiled_patterns)

    def pattern(self) -> re.Pattern[str]:
        """One case-insensitive pattern of them all."""
        return re.compile("|".join(f"(?:{p})" for p in [*self.en, *self.zh]), re.IGNORECASE)


class ChangeWordsSpec(WordPatterns):
    """``prompts/change_words.yaml``."""

    name: Literal["change_words"]
    version: str = Field(min_length=1)
    corrections: WordPatterns
    plans: WordPatterns


@lru_cache(maxsize=1)
def _patterns() -> tuple[re.Pattern[str], re.Pattern[str], re.Pattern[str]]:
    # The shipped file only: every Memory of a process ranks alike.
    spec = load_data("change_words", ChangeWordsSpec)
    return spec.pattern(), spec.corrections.pattern(), spec.plans.pattern()


def states_correction(text: str) -> bool:
    """Whether a fact's text says it corrects an earlier one.

    >>> states_correction("Correction: the trip is in April"), states_correction("更正：周四开会")
    (True, True)
    """
    return _patterns()[1].search(text) is not None


def states_change(text: str) -> bool:
    """Whether a fact's text says that something changed (a correction is a change; a
    change only planned is not one yet).

    >>> states_change("Sold the Civic and bikes to work"), states_change("钢琴课改到周日了")
    (True, True)
    >>> states_change("Pepper turned five"), states_change("打算明年把凯美瑞换成比亚迪汉")
    (False, False)
    """
    change, correction, plan = _patterns()
    if correction.search(text):
        return True
    return change.search(text) is not None and plan.search(text) is None


def change_flags(
    contents: Sequence[str], corrections: Sequence[bool]
) -> tuple[np.ndarray, np.ndarray]:
    """Per fact, whether it states a change and whether it is a correction (its category
    says so, ``corrections``, or its words do): :func:`newer_first`'s ``changed`` and
    ``corrected``.

    >>> change_flags(["Switched to Vim", "Has a cat", "其实是周五"], [False, False, True])
    (array([ True, False,  True]), array([False, False,  True]))
    """
    corrected = np.fromiter(
        (c or states_correction(t) for c, t in zip(corrections, contents, strict=True)),
        bool, len(contents),
    )  # fmt: skip
    changed = np.fromiter(
        (c or states_change(t) for c, t in zip(corrected, contents, strict=True)),
        bool, len(contents),
    )  # fmt: skip
    return changed, corrected


def newer_first(
    scores: np.ndarray,
    said: np.ndarray,
    vectors: np.ndarray,
    changed: np.ndarray,
    rows: np.ndarray | None = None,
    corrected: np.ndarray | None = None,
) -> np.ndarray:
    """The lift each candidate gets (0 for most): a changed fact among the
    ``NEWER_FIRST_TOP`` best ends just above the older candidate it replaces (its mutual
    nearest neighbour among the candidates), when that one outscored it.

    ``said``: when each was first said (POSIX seconds, NaN unknown: never lifted, never
    lifted over); ``changed``: :func:`states_change` per candidate; ``corrected``: which
    of them are corrections (one is never lifted over another); ``vectors``: unit rows,
    the candidates' own, or the user's whole matrix with ``rows`` naming the candidates'
    (no copy of the matrix is made).
    """
    lift = np.zeros(len(scores), dtype=np.float32)
    best = {int(i) for i in top_k(scores, NEWER_FIRST_TOP)}
    pairs = []
    for new in (i for i in best if changed[i] and np.isfinite(said[i])):
        old = _nearest(vectors, rows, new)
        if corrected is not None and corrected[new] and corrected[old]:
            continue
        if old in best and said[old] < said[new] and _nearest(vectors, rows, old) == new:
            pairs.append((new, old))
    # Oldest change first, so a chain (A, then B replacing it, then C replacing B) ends C, B, A.
    for new, old in sorted(pairs, key=lambda pair: said[pair[0]]):
        lift[new] = max(lift[new], scores[old] + lift[old] + _STEP - scores[new])
    return lift


def _nearest(vectors: np.ndarray, rows: np.ndarray | None, candidate: int) -> int:
    if rows is None:
        cosines = vectors @ vectors[candidate]
    else:
        cosines = (vectors @ vectors[rows[candidate]])[rows]
    cosines[candidate] = -np.inf
    return int(np.argmax(cosines))
