"""Hygiene for consolidation: which proposed merges are stored, and the fact each becomes.

Pure. A proposal (from the model, or from the near-duplicate rule when there is no
model) names shown facts and the merged text; it is accepted only if every rule holds,
else refused with the rule's reason. The merged fact is new (its own id), keeps every
part's sources and history, and names its parts in ``merged_from``; the parts are
superseded by it, never deleted (:func:`merge_plan`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from datetime import datetime
from functools import lru_cache

from pydantic import BaseModel, ConfigDict, Field

from recallmem.extraction.write_plan import Add, Plan, Supersede
from recallmem.facts.near_duplicates import MAX_SOURCES
from recallmem.lifecycle.merge_prompt import Proposal
from recallmem.limits import MAX_CONTENT_CHARS, MAX_KEYWORDS, MAX_QUESTIONS
from recallmem.prompts import load_data
from recallmem.retrieval.lexical import stem
from recallmem.secrets.detector import find_secret
from recallmem.text.words import content_units
from recallmem.types import Category, Fact, Revision, Source


class FrameWords(BaseModel):
    """``prompts/consolidation_words.yaml``: words that frame a fact, not its subject."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str
    version: str
    generic: frozenset[str] = Field(min_length=1)


@lru_cache(maxsize=1)
def frame_words() -> frozenset[str]:
    """The shipped frame words, case-folded and stemmed."""
    words = load_data("consolidation_words", FrameWords).generic
    return frozenset(stem(w.casefold()) for w in words)


def key_terms(text: str) -> frozenset[str]:
    """What a text is about: its stemmed content units, less the words that only frame it.

    >>> sorted(key_terms("Reviews pull requests on Fridays"))
    ['friday', 'pull', 'request', 'review']
    """
    return frozenset(stem(u) for u in content_units(text)) - frame_words()


class Refusal(BaseModel):
    """A proposed merge that was not stored, and which rule refused it."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    ids: tuple[str, ...]
    content: str
    reason: str


class Accepted(BaseModel):
    """A proposal that passed every rule, with the stored facts it names."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    parts: tuple[Fact, ...]
    content: str
    reason: str


Rule = Callable[[Sequence[Fact], str], str | None]
CONSOLIDATED = "consolidated: "  # a merged fact's history: "consolidated: <part id>"


def one_scope(parts: Sequence[Fact], content: str) -> str | None:
    """Facts of different agents' scopes (or an agent's and the shared ones) stay apart."""
    scopes = {f.agent_id for f in parts}
    return None if len(scopes) == 1 else "the facts are in different scopes (agents)"


def one_category(parts: Sequence[Fact], content: str) -> str | None:
    """Never across categories: a preference and a skill about Python are two facts."""
    names = sorted({f.category.value for f in parts})
    return None if len(names) == 1 else f"the facts are of different categories: {names}"


def nothing_protected(parts: Sequence[Fact], content: str) -> str | None:
    """A pinned fact or a correction is never folded away."""
    if any(f.pinned for f in parts):
        return "a pinned fact is never merged away"
    if any(f.category is Category.CORRECTION or f.source_error for f in parts):
        return "a correction is never merged away"
    return None


def storable_text(parts: Sequence[Fact], content: str) -> str | None:
    """The merged text fits a fact and holds no secret."""
    if len(content) > MAX_CONTENT_CHARS:
        return f"the merged text is longer than {MAX_CONTENT_CHARS} characters"
    if (finding := find_secret(content, count_redacted=True)) is not None:
        return f"the merged text holds a secret ({finding.kind})"
    return None


def one_subject(parts: Sequence[Fact], content: str) -> str | None:
    """Parts share what they are about, not only a frame ("likes tea", "likes coffee")."""
    terms = [key_terms(f.content) for f in parts]
    reached, frontier = {0}, [0]
    while frontier:
        i = frontier.pop()
        for j in range(len(terms)):
            if j not in reached and terms[i] & terms[j]:
                reached.add(j)
                frontier.append(j)
    return None if len(reached) == len(terms) else "the facts share no subject"


def not_alternatives(parts: Sequence[Fact], content: str) -> str | None:
    """Two facts that differ by one term each are two values of one slot, not supplements.

    "Prefers reports in Chinese" and "... in English"; a todo merges only when one part
    says all the others do (two tasks are done apart).
    """
    terms = [key_terms(f.content) for f in parts]
    for n, a in enumerate(terms):
        for b in terms[n + 1 :]:
            if a & b and len(a - b) == 1 and len(b - a) == 1:
                return f"the facts are alternatives ({sorted(a - b)[0]} / {sorted(b - a)[0]})"
    if parts[0].category is Category.TODO and not any(all(t <= w for t in terms) for w in terms):
        return "two different todos are done apart; only a todo that says all others do merges"
    return None


def keeps_every_part(parts: Sequence[Fact], content: str) -> str | None:
    """The merged text keeps every key term of every part (nothing is lost)."""
    merged = key_terms(content)
    missing = sorted({t for f in parts for t in key_terms(f.content) - merged})
    return None if not missing else f"the merged text drops {missing[:5]}"


def invents_nothing(parts: Sequence[Fact], content: str) -> str | None:
    """The merged text says nothing no part said."""
    said = frozenset().union(*(key_terms(f.content) for f in parts))
    invented = sorted(key_terms(content) - said)
    return None if not invented else f"the merged text adds {invented[:5]}, which no part says"


RULES: tuple[Rule, ...] = (
    one_scope,
    one_category,
    nothing_protected,
    storable_text,
    one_subject,
    not_alternatives,
    keeps_every_part,
    invents_nothing,
)


def _known_parts(
    proposal: Proposal, refs: Mapping[str, Fact], used: set[str]
) -> tuple[list[Fact], str | None]:
    ids = list(dict.fromkeys(proposal.ids))
    if len(ids) < 2:
        return [], "a merge needs at least two different facts"
    if unknown := [i for i in ids if i not in refs]:
        return [], f"ids {unknown} were not shown"
    parts = [refs[i] for i in ids]
    if taken := [i for i, f in zip(ids, parts, strict=True) if f.id in used]:
        return [], f"ids {taken} are already in another merge of this run"
    return parts, None


def vet(
    proposals: Sequence[Proposal], refs: Mapping[str, Fact], rules: Sequence[Rule] = ()
) -> tuple[list[Accepted], list[Refusal]]:
    """Split proposals into accepted merges and refusals; each fact joins one merge at most."""
    accepted: list[Accepted] = []
    refused: list[Refusal] = []
    used: set[str] = set()
    for proposal in proposals:
        parts, problem = _known_parts(proposal, refs, used)
        for rule in rules:
            if problem is not None:
                break
            problem = rule(parts, proposal.content)
        if problem is not None:
            refused.append(Refusal(ids=proposal.ids, content=proposal.content, reason=problem))
            continue
        used.update(f.id for f in parts)
        accepted.append(Accepted(parts=tuple(parts), content=proposal.content,
                                 reason=proposal.reason or "consolidated"))  # fmt: skip
    return accepted, refused


def _sources(parts: Sequence[Fact]) -> tuple[Source, ...]:
    everything = sorted({s for f in parts for s in f.sources}, key=lambda s: s.at)
    if len(everything) <= MAX_SOURCES:
        return tuple(everything)
    # Each part keeps its latest evidence; the rest are the newest (the parts keep all).
    latest = {max(f.sources, key=lambda s: s.at) for f in parts if f.sources}
    rest = [s for s in everything if s not in latest][-(MAX_SOURCES - len(latest)) :]
    return tuple(sorted({*latest, *rest}, key=lambda s: s.at))


def merged_fact(merge: Accepted, *, at: datetime, source: Source) -> Fact:
    """The one fact a merge becomes: every part's evidence and history, and its parts' ids."""
    parts = merge.parts
    threads = {f.thread_id for f in parts}
    history = [r for f in parts for r in f.history] + [
        Revision(content=f.content, category=f.category, at=at, reason=f"{CONSOLIDATED}{f.id}")
        for f in parts
    ]
    confirmed = [f.last_confirmed_at for f in parts if f.last_confirmed_at]
    accessed = [f.last_accessed_at for f in parts if f.last_accessed_at]
    return Fact(
        content=merge.content,
        category=parts[0].category,
        confidence=max(f.confidence for f in parts),
        user_id=parts[0].user_id,
        agent_id=parts[0].agent_id,
        thread_id=threads.pop() if len(threads) == 1 else None,
        sources=(*_sources(parts), source),
        confirmations=sum(f.confirmations for f in parts),
        history=tuple(sorted(history, key=lambda r: r.at)),
        created_at=min(f.created_at for f in parts),
        updated_at=at,
        last_confirmed_at=max(confirmed) if confirmed else None,
        last_accessed_at=max(accessed) if accessed else None,
        merged_from=tuple(f.id for f in parts),
        # The parts' search words, in order, as many as a fact holds.
        keywords=tuple(dict.fromkeys(k for f in parts for k in f.keywords))[:MAX_KEYWORDS],
        # Each part's search keys ask for something the merged fact says; a fact of parts
        # without any is keyed by the keying step, which a maintenance run does next.
        **_merged_keys(parts),
    )


def _merged_keys(parts: Sequence[Fact]) -> dict[str, object]:
    keys = tuple(dict.fromkeys(q for f in parts for q in f.questions))[:MAX_QUESTIONS]
    return {"questions": keys, "keyed_by": "consolidation"} if keys else {}


def merge_plan(merges: Sequence[Accepted], *, user_id: str, at: datetime, source: Source) -> Plan:
    """The plan that stores each merged fact and supersedes its parts by it."""
    operations: list[Add | Supersede] = []
    for merge in merges:
        fact = merged_fact(merge, at=at, source=source)
        operations.append(Add(fact=fact, reason=merge.reason))
        operations += [
            Supersede(fact_id=part.id, by=fact.id, reason=f"consolidated into {fact.id}")
            for part in merge.parts
        ]
    return Plan(user_id=user_id, at=at, operations=tuple(operations))
