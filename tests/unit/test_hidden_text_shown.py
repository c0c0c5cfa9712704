"""A stored fact carrying hidden text: the model reads only what a person would see.

A fact can hold a payload spelled in variation selectors (one a byte, invisible, and
decodable by a model primed to): stored as given (it is the user's text), it must reach
neither the memory block nor the recall tool's result. Emoji sequences stay whole.
"""

from __future__ import annotations

from datetime import date
from typing import Any

from recallmem import Memory, MemoryToolkit
from recallmem.retrieval.injection import build_block

from tests.hidden_text import PAYLOAD, smuggle, unsmuggle

CONFIG: Any = {"configurable": {"user_id": "ada"}}
FAMILY = "\U0001f468\u200d\U0001f469\u200d\U0001f467"


def shown(memory: Memory, query: str) -> tuple[str, str]:
    """The memory block and the recall tool's result for ``query``."""
    hits = memory.recall(query, user_id="ada")
    block = build_block(None, [], hits, today=date(2026, 12, 2), max_tokens=2000).text
    recall, _ = MemoryToolkit(memory=memory).get_tools()
    return block, recall.invoke({"query": query}, CONFIG)


def test_a_selector_payload_reaches_neither_the_store_nor_the_block_nor_the_recall_tool(
    memory: Memory,
) -> None:
    memory.remember("Likes tea \U0001f375" + smuggle(PAYLOAD), user_id="ada",
                    category="preference")  # fmt: skip
    assert memory.list(user_id="ada")[0].content == "Likes tea \U0001f375"  # stored clean
    block, answer = shown(memory, "tea")
    assert "- [preference] Likes tea \U0001f375\n" in block
    assert "Likes tea \U0001f375" in answer
    for text in (block, answer):
        assert unsmuggle(text) == b"", text
        assert "SYSTEM" not in text


def test_emoji_sequences_and_one_presentation_selector_are_shown_whole(memory: Memory) -> None:
    content = f"Family photo {FAMILY} on the fridge, loves \u2764\ufe0f"
    memory.remember(content, user_id="ada", category="context")
    block, answer = shown(memory, "family photo")
    assert f"- [context] {content}\n" in block
    assert content in answer
