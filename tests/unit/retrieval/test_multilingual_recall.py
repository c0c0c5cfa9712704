"""Recall by meaning with the real offline encoder: Chinese, English and across them."""

from __future__ import annotations

import pytest
from recallmem import Memory

FACTS = [
    ("我在前端组工作，主要写 TypeScript", "identity"),
    ("报告请用中文写", "preference"),
    ("I have a golden retriever named Biscuit", "context"),
    ("My ESP32 project waters the balcony plants", "goal"),
    ("I'm allergic to peanuts", "identity"),
    ("周末喜欢去爬山", "preference"),
]


@pytest.fixture
def seeded(use_memory: Memory) -> Memory:
    use_memory.remember_many([{"content": c, "category": k} for c, k in FACTS], user_id="ada")
    return use_memory


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("用户做哪方面的开发？", "我在前端组工作，主要写 TypeScript"),  # zh -> zh paraphrase
        ("她周末有什么爱好", "周末喜欢去爬山"),
        ("What is the name of my dog?", "I have a golden retriever named Biscuit"),  # en -> en
        ("any food allergies?", "I'm allergic to peanuts"),
        ("Which language should reports be written in?", "报告请用中文写"),  # en -> zh
        ("我的狗叫什么名字", "I have a golden retriever named Biscuit"),  # zh -> en
        ("我的单片机浇花项目", "My ESP32 project waters the balcony plants"),
    ],
)
def test_paraphrase_recall_top1(seeded: Memory, query: str, expected: str) -> None:
    hits = seeded.recall(query, user_id="ada", k=3)
    assert hits[0].fact.content == expected, [h.fact.content for h in hits]


def test_recall_for_an_unrelated_user_is_empty(seeded: Memory) -> None:
    assert seeded.recall("TypeScript 前端", user_id="someone-else") == []
