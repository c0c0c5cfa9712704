"""The keying call: stored facts shown to the model, and the keys it writes read back.

One call keys up to ``limits.KEYING_FACTS_PER_CALL`` facts of one user
(``prompts/keys.yaml``). Each fact is shown as one quoted line
(:func:`recallmem.text.quoting.quote_text`, after the secret detector's redaction) with
a short id (``F1``) the model cites and its category; stored text is data to the model,
never an instruction. The reply is read by extraction's tolerant JSON reader; what
each key may say is for :mod:`recallmem.extraction.search_keys`.

>>> from recallmem.types import Fact
>>> shown = render_facts([Fact(content="Allergic to <shellfish>", category="identity",
...                            user_id="ada")])
>>> shown.text
'[F1] (identity) Allergic to &lt;shellfish&gt;'
>>> read_keys('{"keys": [{"id": "F1", "questions": ["What am I allergic to?"]}]}', shown)[0]
{'F1': ['What am I allergic to?']}
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from langchain_core.language_models import BaseChatModel

from recallmem.extraction.chain import message_usage, refuse_cut_off
from recallmem.extraction.reply_json import find_json
from recallmem.prompts import ChatPromptSpec
from recallmem.secrets.detector import redact
from recallmem.text.quoting import quote_text
from recallmem.types import Fact, TokenUsage

_THEN = "No fact was keyed; the next run asks again."


@dataclass(frozen=True)
class ShownFacts:
    """The facts as the model sees them, and the stored fact each short id stands for."""

    text: str
    refs: dict[str, Fact]


@dataclass(frozen=True)
class KeysReply:
    """What one keying call returned: raw keys per shown id, what could not be read."""

    keys: dict[str, Any]
    unreadable: list[str]
    usage: TokenUsage
    model: str | None


def render_facts(facts: Sequence[Fact]) -> ShownFacts:
    """The prompt's ``facts`` text, numbering the facts F1, F2, ..."""
    refs = {f"F{n}": fact for n, fact in enumerate(facts, 1)}
    lines = [
        f"[{ref}] ({fact.category.value}) {quote_text(redact(fact.content))}"
        for ref, fact in refs.items()
    ]
    return ShownFacts(text="\n".join(lines), refs=refs)


def read_keys(text: str, shown: ShownFacts) -> tuple[dict[str, Any], list[str]]:
    """Each shown id's keys as the model wrote them (to be vetted), and the entries
    that could not be read, with the reason. A reply with no JSON at all raises
    ``ExtractionError``: nothing is keyed."""
    data = find_json(text, source="the keying model's reply", then=_THEN)
    entries = data.get("keys", [])
    keys: dict[str, Any] = {}
    unreadable: list[str] = []
    for entry in entries if isinstance(entries, list) else [entries]:
        ref = entry.get("id") if isinstance(entry, Mapping) else None
        ref = str(ref).strip().strip("[]") if ref is not None else ""
        if ref not in shown.refs:
            unreadable.append(f"{repr(entry)[:200]}: not one of the ids shown")
        elif ref in keys:
            unreadable.append(f"{ref}: keyed twice; the first is kept")
        else:
            keys[ref] = entry.get("questions")
    return keys, unreadable


def ask_keys(model: BaseChatModel, prompt: ChatPromptSpec, shown: ShownFacts) -> KeysReply:
    """One model call with the shown facts; the keys it wrote for them."""
    message = model.invoke(prompt.render(facts=shown.text))
    refuse_cut_off(
        message,
        source="the keying model's reply",
        remedy="Raise the model's max output tokens.",
        then=_THEN,
    )
    keys, unreadable = read_keys(message.text, shown)
    usage, name = message_usage(message)
    return KeysReply(keys=keys, unreadable=unreadable, usage=usage, model=name)
