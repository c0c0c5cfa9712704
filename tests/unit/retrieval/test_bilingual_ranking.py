"""Ranking on small hand-checked bilingual memories, with the real offline encoder.

The cases of the background articles: a word shared with the wrong fact must not
outrank the meaning, and a fact written in the other language must not be penalised
for sharing no words with the question.
"""

from __future__ import annotations

import pytest
from recallmem import Memory

MEMORY = [
    ("The coffee machine the user bought last week leaks water", "context"),
    ("喜欢喝美式咖啡，不加糖", "preference"),
    ("Likes dark mode in every editor", "preference"),
    ("喜欢篇幅较长、有深度的文章", "preference"),
    ("Works as a front-end engineer using TypeScript and Vue", "identity"),
    ("希望技术报告用中文写", "preference"),
]


@pytest.fixture
def bilingual(use_memory: Memory) -> Memory:
    use_memory.remember_many([{"content": c, "category": k} for c, k in MEMORY], user_id="ada")
    return use_memory


def _top(memory: Memory, query: str) -> str:
    return memory.recall(query, user_id="ada", k=1)[0].fact.content


def test_a_shared_word_does_not_outrank_the_meaning_across_languages(bilingual: Memory) -> None:
    # Shares "咖啡" with the coffee preference, but asks about the machine (stored in English).
    assert _top(bilingual, "我上周买的咖啡机出了什么问题？") == MEMORY[0][0]


def test_a_common_word_does_not_outrank_the_meaning(bilingual: Memory) -> None:
    # Shares "like" with the dark-mode fact; the answer is the Chinese one about articles.
    assert _top(bilingual, "How long do I like the articles I read to be?") == MEMORY[3][0]


def test_a_fact_in_the_other_language_gets_evidence_through_translation(
    bilingual: Memory,
) -> None:
    hit = bilingual.recall("coffee machine", user_id="ada", k=1)[0]
    assert hit.fact.content == MEMORY[0][0] and hit.parts.lexical > 0
    chinese = bilingual.recall("报告 语言", user_id="ada", k=1)[0]
    assert chinese.fact.content == MEMORY[5][0]
    english_question = bilingual.recall("Which language should my reports be in?", user_id="ada")
    assert english_question[0].fact.content == MEMORY[5][0]
    assert english_question[0].parts.lexical > 0  # 报告 is "report" in the dictionary


def test_every_hit_can_be_rebuilt_from_its_parts_and_weights(bilingual: Memory) -> None:
    for hit in bilingual.recall("我喜欢什么样的咖啡", user_id="ada", k=6):
        assert hit.weights is not None
        rebuilt = sum(
            getattr(hit.weights, name) * getattr(hit.parts, name)
            for name in type(hit.weights).model_fields  # the numeric parts (key names a key)
        )
        assert rebuilt == pytest.approx(hit.score, abs=1e-3)
