"""Where the real multilingual encoder is the point: the related facts the model is shown
must include the one a message in the other language changes, even in a crowded memory.
(With the hashing fake, which only sees shared words, it ranks 23rd of 25 and is not shown.)"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from conftest import cite, fact, reply
from langchain_core.messages import HumanMessage
from recallmem.config import MemoryConfig
from recallmem.memory import Memory
from recallmem.testing import FakeChatModel
from recallmem.types import Status

OTHER_FACTS = [
    "Prefers reports written in Chinese", "Works as a front-end developer", "Mostly writes TypeScript",
    "Reviews pull requests on Friday mornings", "Has a daughter born in June", "Drinks green tea",
    "Is learning to play the piano", "Decided to use PostgreSQL for billing", "Uses polars for data work",
    "Wants to move into product management", "Runs a blog on a cloud server", "Dislikes emoji in replies",
    "Has five years of Rust experience", "Has never used Kubernetes", "Reads long-form articles",
    "Is building an ESP32 watering system", "Plays badminton on Sundays", "Owns a grey cat called Max",
    "Prefers dark mode in every editor", "Takes the train to work", "Is allergic to peanuts",
    "Keeps notes in Obsidian", "Follows a vegetarian diet", "Speaks German at home",
]  # fmt: skip


def test_a_chinese_message_is_shown_the_english_fact_it_replaces(home: Path) -> None:
    def moved(messages: list[Any]) -> str:
        return reply(
            fact("搬到了里斯本居住", "identity", "我上个月搬到里斯本了"),
            supersede=[
                {
                    "id": cite(messages, "Lives in Berlin"),
                    "reason": "搬家",
                    "replacement": "搬到了里斯本居住",
                }
            ],
        )

    model = FakeChatModel(responses=[moved])
    with Memory(MemoryConfig(home=home), model=model) as memory:  # the default USE encoder
        memory.remember_many(
            [{"content": c, "category": "context"} for c in OTHER_FACTS], user_id="ada"
        )
        berlin = memory.remember("Lives in Berlin", user_id="ada", category="identity")
        report = memory.extract(
            [HumanMessage("我上个月搬到里斯本了，不住柏林了。")], user_id="ada", thread_id="t1"
        )
        shown = [line for line in model.requests[0][-1].text.splitlines() if line.startswith("[F")]
        assert len(shown) == 20 < len(OTHER_FACTS) + 1  # a crowded memory: not everything is shown
        assert shown[0].endswith(") Lives in Berlin")  # the nearest, across languages
        assert [c.fact.content for c in report.added] == ["搬到了里斯本居住"]
        assert memory.get(berlin.id).status is Status.SUPERSEDED
