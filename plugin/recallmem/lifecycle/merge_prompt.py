"""The consolidation call: groups of facts shown to the model, and its proposals read back.

Each fact is shown as one quoted line (:func:`recallmem.text.quoting.quote_text`) with a
short id (``F1``) the model cites, its category, and whether it is pinned or a
correction; stored text is data to the model, never an instruction. The reply is read
by the same tolerant JSON reader as extraction's, and each proposal is checked for its
shape only: whether a merge is right is for :mod:`recallmem.lifecycle.merge_rules`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from langchain_core.language_models import BaseChatModel
from pydantic import BaseModel, ConfigDict, Field

from recallmem.extraction.chain import message_usage, refuse_cut_off
from recallmem.extraction.parser import find_json
from recallmem.prompts import ChatPromptSpec
from recallmem.secrets.detector import redact
from recallmem.text.quoting import quote_text
from recallmem.types import Category, Fact, TokenUsage


class Proposal(BaseModel):
    """Facts (by their shown ids) the model says are one, and the one fact's text."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    ids: tuple[str, ...]
    content: str
    reason: str = ""


class Unreadable(BaseModel):
    """A proposal whose shape was wrong, kept for the report."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    item: str = Field(description="The proposal as the model wrote it, cut to 200 characters.")
    reason: str


@dataclass(frozen=True)
class Shown:
    """The groups as the model sees them, and the stored fact each short id stands for."""

    text: str
    refs: dict[str, Fact]


@dataclass(frozen=True)
class Reply:
    """What one consolidation call returned."""

    proposals: list[Proposal]
    unreadable: list[Unreadable]
    usage: TokenUsage
    model: str | None


def _line(ref: str, fact: Fact) -> str:
    marks = [fact.category.value, *(["pinned"] if fact.pinned else [])]
    line = f"[{ref}] ({', '.join(marks)}) {quote_text(redact(fact.content))}"
    if fact.category is Category.CORRECTION or fact.source_error:
        wrong = fact.source_error or "?"
        line += f" — correction; wrong approach: {quote_text(redact(wrong))}"
    return line


def render_groups(groups: Sequence[Sequence[Fact]]) -> Shown:
    """The prompt's ``groups`` text, numbering facts F1, F2, ... across the groups."""
    refs: dict[str, Fact] = {}
    blocks = []
    for number, group in enumerate(groups, 1):
        lines = [f"Group {number}:"]
        for fact in group:
            ref = f"F{len(refs) + 1}"
            refs[ref] = fact
            lines.append(_line(ref, fact))
        blocks.append("\n".join(lines))
    return Shown(text="\n\n".join(blocks), refs=refs)


def _proposal(item: Any) -> Proposal:
    if not isinstance(item, dict):
        raise ValueError("a merge must be an object with ids and content")
    ids = item.get("ids")
    if not isinstance(ids, list) or not all(isinstance(i, str) for i in ids):
        raise ValueError("'ids' must be a list of the shown ids")
    content = item.get("content")
    if not isinstance(content, str) or not content.strip():
        raise ValueError("'content' must be the merged fact's text")
    reason = item.get("reason")
    return Proposal(
        ids=tuple(i.strip() for i in ids),
        content=content.strip(),
        reason=reason.strip() if isinstance(reason, str) else "",
    )


def read_reply(text: str) -> tuple[list[Proposal], list[Unreadable]]:
    """The proposals in a model reply; malformed ones are set apart with the reason.

    A reply with no JSON at all raises ``ExtractionError``; nothing is merged.
    """
    data = find_json(
        text,
        source="the consolidation model's reply",
        then="Nothing was merged; the next run asks again.",
    )
    items = data.get("merges", [])
    proposals: list[Proposal] = []
    unreadable: list[Unreadable] = []
    for item in items if isinstance(items, list) else [items]:
        try:
            proposals.append(_proposal(item))
        except ValueError as exc:
            unreadable.append(Unreadable(item=repr(item)[:200], reason=str(exc)))
    return proposals, unreadable


def ask(model: BaseChatModel, prompt: ChatPromptSpec, shown: Shown) -> Reply:
    """One model call with the shown groups; the proposals it makes."""
    message = model.invoke(prompt.render(groups=shown.text))
    refuse_cut_off(
        message,
        source="the consolidation model's reply",
        remedy="Raise the model's max output tokens, or show fewer facts per call "
        "(a lower consolidation_max_facts).",
        then="Nothing was merged; the next run asks again.",
    )
    proposals, unreadable = read_reply(message.text)
    usage, name = message_usage(message)
    return Reply(proposals=proposals, unreadable=unreadable, usage=usage, model=name)
