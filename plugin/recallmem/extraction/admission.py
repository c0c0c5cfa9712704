"""Which facts a model proposes may be stored at all, and which stored fact one repeats.

The rules every model-proposed fact meets, whichever model proposes it: the extraction
model reading a window (:mod:`recallmem.extraction.hygiene`, which adds the rules about
the window's words) or an agent's model calling the ``remember`` tool
(:mod:`recallmem.extraction.proposal`). A proposal is refused when it

1. holds a secret, in its text, evidence, mistake, keywords or search keys: a model's proposal is
   refused, never redacted, whatever ``MemoryConfig.secrets`` says for library writes;
2. is something the scope rules exclude (a permission granted to the assistant, the
   assistant about itself: ``prompts/scope_rules.yaml``);
3. is longer than one fact's limit;
4. is less sure than ``min_confidence`` (0.7 by default).

A proposal that passes and says what a stored fact of the user says (the near-duplicate
rule of :mod:`recallmem.facts.near_duplicates`) confirms that fact instead of adding one.

>>> weak = CandidateFact(content="Prefers tea", category="preference", confidence=0.6)
>>> refusal(weak, Policy(), Rules.load())
Refusal(kind='confidence', reason='confidence 0.60 is below 0.70')
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from recallmem.config import MemoryConfig
from recallmem.extraction.parser import CandidateFact
from recallmem.extraction.scope_rules import ScopeRules, load_scope_rules
from recallmem.facts.near_duplicates import Match, classify
from recallmem.secrets.detector import SecretRules, find_secret, load_secret_rules
from recallmem.types import MAX_CONTENT_CHARS, Fact, Status

Neighbours = Sequence[tuple[Fact, float]]
RefusalKind = Literal["secret", "scope", "length", "confidence"]

_DEFAULT = MemoryConfig.model_fields  # one definition of each default: the config's


@dataclass(frozen=True)
class Policy:
    """The thresholds the rules apply (by default, the configuration's defaults)."""

    min_confidence: float = _DEFAULT["min_confidence"].default
    dedup_similarity: float = _DEFAULT["dedup_similarity"].default
    max_facts_per_scope: int = _DEFAULT["max_facts_per_scope"].default

    @classmethod
    def from_config(cls, config: MemoryConfig) -> Policy:
        """The policy a configuration asks for."""
        return cls(config.min_confidence, config.dedup_similarity, config.max_facts_per_scope)


@dataclass(frozen=True)
class Rules:
    """The pattern rules (data in ``prompts/``)."""

    secrets: SecretRules
    scope: ScopeRules

    @classmethod
    def load(cls, prompt_dir: Path | None = None) -> Rules:
        """The rules from ``prompts/secrets.yaml`` and ``prompts/scope_rules.yaml``."""
        return cls(load_secret_rules(prompt_dir), load_scope_rules(prompt_dir))


@dataclass(frozen=True)
class Refusal:
    """Why a proposal is not stored: which rule (``kind``) and in words (``reason``)."""

    kind: RefusalKind
    reason: str


def refusal(candidate: CandidateFact, policy: Policy, rules: Rules) -> Refusal | None:
    """The first of the rules above that ``candidate`` breaks, else None."""
    text = " ".join(
        filter(None, [candidate.content, candidate.evidence, candidate.source_error,
                      *candidate.keywords, *candidate.questions])
    )  # fmt: skip
    if found := find_secret(text, rules.secrets, count_redacted=True):
        return Refusal("secret", f"holds a secret ({found.kind}); secrets are never stored")
    if out_of_scope := rules.scope.violation(candidate.content):
        return Refusal("scope", out_of_scope)
    if len(candidate.content) > MAX_CONTENT_CHARS:
        return Refusal(
            "length", f"longer than {MAX_CONTENT_CHARS} characters; a fact is one sentence"
        )
    if candidate.confidence < policy.min_confidence:
        return Refusal(
            "confidence",
            f"confidence {candidate.confidence:.2f} is below {policy.min_confidence:.2f}",
        )
    return None


def duplicate_of(
    candidate: CandidateFact,
    neighbours: Neighbours,
    *,
    user_id: str,
    threshold: float,
    skip: Collection[str] = (),
) -> tuple[Fact, Match] | None:
    """The stored fact ``candidate`` repeats (closest first) and how, else None.

    ``neighbours`` are the stored facts nearest to it with their cosines; only the
    user's active facts count, of the same category unless the texts embed as one
    (cosine 0.999), and none in ``skip`` (facts the same plan already changes).
    """
    for fact, cosine in sorted(neighbours, key=lambda pair: -pair[1]):
        if fact.id in skip or fact.status is not Status.ACTIVE or fact.user_id != user_id:
            continue
        if fact.category is not candidate.category and cosine < 0.999:
            continue
        match = classify(candidate.content, fact.content, cosine=cosine, threshold=threshold)
        if match is not None:
            return fact, match
    return None
