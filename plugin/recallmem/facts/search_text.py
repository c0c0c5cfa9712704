"""The text a fact's vector is made from: its content, then its search keys.

A fact is found by meaning through one vector. Embedded with its keys (the questions it
answers, in both languages, and a paraphrase in the other language: ``Fact.questions``)
that vector also sits near the ways the fact is asked for, in either language; measured
against the other ways of using keys in docs/decisions/0040-search-keys.md. Every path
that embeds a fact for storage (a new fact, an edit, an import without vectors, a
rebuild) embeds this text, so a vector always matches its fact's content and keys, and
a change of either re-embeds the fact.

>>> from recallmem.types import Fact
>>> fact = Fact(content="Allergic to shellfish", category="identity", user_id="ada")
>>> search_text(fact)
'Allergic to shellfish'
>>> search_text(fact.model_copy(update={"questions": ("What am I allergic to?", "我对什么过敏？")}))
'Allergic to shellfish\\nWhat am I allergic to?\\n我对什么过敏？'
"""

from __future__ import annotations

from recallmem.types import Fact


def search_text(fact: Fact) -> str:
    """The content, then each search key on a line of its own."""
    return "\n".join((fact.content, *fact.questions))
