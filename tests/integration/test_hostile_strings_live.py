"""The hostile-string corpus through the real tools and the extractor prompt a model is sent."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
import yaml
from langchain_core.messages import HumanMessage
from recallmem import Memory, MemoryConfig, MemoryToolkit
from recallmem.testing import FakeChatModel, HashingEmbeddings

CORPUS = Path(__file__).resolve().parents[1] / "data" / "hostile_strings.yaml"
CASES: list[dict[str, str]] = yaml.safe_load(CORPUS.read_text(encoding="utf-8"))
IDS = [case["name"] for case in CASES]
EMPTY = '{"facts": [], "supersede": [], "confirmed": [], "todos_done": [], "profile": {}}'


def lines_of(text: str, case: dict[str, str]) -> list[str]:
    """``text``'s lines, after checking that the attack starts none of them."""
    lines = text.removesuffix("\n").split("\n")
    assert lines == text.splitlines(), f"{case['name']}: a line break other than \\n"
    assert not any(line.strip().startswith(case["tail"]) for line in lines), text
    return lines


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_remember_and_recall_tools_answer_one_line_per_fact(
    memory: Memory, case: dict[str, str]
) -> None:
    recall, remember = MemoryToolkit(memory=memory).get_tools()
    config: Any = {"configurable": {"user_id": "ada"}}
    saved = remember.invoke({"content": case["text"][:500], "category": "preference"}, config)
    assert len(lines_of(saved, case)) == 1 and saved.startswith("Saved to memory: ")
    memory.remember("Prefers reports in Chinese", user_id="ada", category="preference")
    found = recall.invoke({"query": case["text"][:1000], "k": 5}, config)
    lines = lines_of(found, case)
    assert len(lines) == 3 and all(re.match(r"[12]\. \[preference\] ", x) for x in lines[1:])


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_the_extractor_is_sent_each_message_and_fact_on_one_line(
    home: Path, case: dict[str, str]
) -> None:
    model = FakeChatModel(responses=[EMPTY])
    with Memory(MemoryConfig(home=home), embeddings=HashingEmbeddings(), model=model) as memory:
        memory.remember(case["text"], user_id="ada", category="preference")
        memory.extract(
            [HumanMessage(case["text"]), HumanMessage("I like oolong too")],
            user_id="ada",
            thread_id="t1",
        )
    human = model.requests[0][-1].text
    lines_of(human, case)
    assert len(re.findall(r"<\s*/\s*conversation\s*>", human, re.IGNORECASE)) == 1
    assert len(re.findall(r"<\s*conversation\b", human, re.IGNORECASE)) == 1
    window = human.split("<conversation>\n")[1].split("\n</conversation>")[0].split("\n")
    assert [line.split(":")[0] for line in window] == ["[m1] user", "[m2] user"]
    facts = human.split("(refer to them by id):\n")[1].split("\n\n")[0].split("\n")
    assert len(facts) == 1 and facts[0].startswith("[F1] (preference, 0.90) ")
