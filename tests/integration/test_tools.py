"""The recall and remember tools: LangChain's standard suite, scope, errors, artifacts."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import ToolMessage
from langchain_core.tools import BaseTool
from langchain_tests.unit_tests import ToolsUnitTests
from recallmem import Memory, MemoryConfig, MemoryToolkit, ScoredFact
from recallmem.testing import HashingEmbeddings


def _tools(home: Path) -> list[BaseTool]:
    memory = Memory(MemoryConfig(home=home), embeddings=HashingEmbeddings())
    return MemoryToolkit(memory=memory).get_tools()


class TestRecallToolStandard(ToolsUnitTests):
    @pytest.fixture(autouse=True)
    def _home(self, tmp_path: Path) -> None:
        self._tool = _tools(tmp_path)[0]

    @property
    def tool_constructor(self) -> BaseTool:
        return self._tool

    @property
    def tool_invoke_params_example(self) -> dict[str, Any]:
        return {"query": "preferred report language", "k": 3, "categories": ["preference"]}


class TestRememberToolStandard(ToolsUnitTests):
    @pytest.fixture(autouse=True)
    def _home(self, tmp_path: Path) -> None:
        self._tool = _tools(tmp_path)[1]

    @property
    def tool_constructor(self) -> BaseTool:
        return self._tool

    @property
    def tool_invoke_params_example(self) -> dict[str, Any]:
        return {
            "content": "Prefers reports in Chinese",
            "category": "preference",
            "confidence": 0.9,
        }


@pytest.fixture
def tools(memory: Memory) -> list[BaseTool]:
    return MemoryToolkit(memory=memory).get_tools()


def test_descriptions_come_from_the_prompt_file_and_carry_cues(tools: list[BaseTool]) -> None:
    recall, remember = tools
    assert recall.name == "recall" and remember.name == "remember"
    for cue in ("last time", "my usual", "上次", "我的", "之前", "还记得"):
        assert cue in recall.description
    schema = recall.tool_call_schema.model_json_schema()  # what the model sees
    assert set(schema["properties"]) == {"query", "k", "categories"}  # runtime is injected
    assert schema["properties"]["query"]["description"].startswith("What to look for")


def test_recall_returns_content_and_scored_facts_as_artifact(
    tools: list[BaseTool], memory: Memory
) -> None:
    recall, remember = tools
    config = {"configurable": {"user_id": "ada", "thread_id": "t1"}}
    assert remember.invoke({"content": "Prefers reports in Chinese", "category": "preference"},
                           config) == "Saved to memory: Prefers reports in Chinese [preference]"  # fmt: skip
    assert memory.list(user_id="ada")[0].thread_id == "t1"
    call = {"name": "recall", "args": {"query": "reports Chinese"}, "id": "c1", "type": "tool_call"}
    message = recall.invoke(call, config)
    assert isinstance(message, ToolMessage)
    assert "Prefers reports in Chinese" in message.content
    assert isinstance(message.artifact[0], ScoredFact)


def test_remembering_again_confirms(tools: list[BaseTool]) -> None:
    _, remember = tools
    config = {"configurable": {"user_id": "ada"}}
    remember.invoke({"content": "Likes tea", "category": "preference"}, config)
    again = remember.invoke({"content": "likes tea", "category": "preference"}, config)
    assert again.startswith("Already in memory, confirmed again")


def test_the_planner_may_give_search_keys_and_they_are_vetted(
    tools: list[BaseTool], memory: Memory
) -> None:
    _, remember = tools
    config = {"configurable": {"user_id": "ada"}}
    remember.invoke({"content": "Has a ginger cat named Biscuit", "category": "identity",
                     "questions": ["What is my cat called?", "Does Ada feed Biscuit?",
                                   "wifi password hunter2-oak"]}, config)  # fmt: skip
    (stored,) = memory.list(user_id="ada")
    assert stored.questions == ("What is my cat called?",)  # a name and a secret set aside
    assert "questions" in remember.get_input_schema().model_json_schema()["properties"]


def test_scope_from_runtime_context_object(tools: list[BaseTool]) -> None:
    recall, remember = tools

    class Runtime:
        def __init__(self) -> None:
            self.context = {"user_id": "ada", "agent_id": "writer"}

    config = {"configurable": {"__pregel_runtime": Runtime()}}
    remember.invoke(
        {"content": "Writer agent uses British spelling", "category": "preference"}, config
    )
    assert "British spelling" in recall.invoke({"query": "spelling"}, config)
    # A fact the model saves is the user's: another agent of the user finds it; another
    # user does not.
    coder = {"configurable": {"user_id": "ada", "agent_id": "coder"}}
    assert "British spelling" in recall.invoke({"query": "spelling"}, coder)
    bob = {"configurable": {"user_id": "bob", "agent_id": "writer"}}
    assert "British spelling" not in recall.invoke({"query": "spelling"}, bob)


def test_errors_reach_the_model_as_text(tools: list[BaseTool]) -> None:
    recall, remember = tools
    no_user = recall.invoke({"query": "anything"}, {"configurable": {}})
    assert "no user_id for this run" in no_user and "answer without memory" in no_user
    bad_category = remember.invoke(
        {"content": "x", "category": "hobby"}, {"configurable": {"user_id": "a"}}
    )
    assert "category" in bad_category and "identity" in bad_category


async def test_async_invoke(tools: list[BaseTool]) -> None:
    recall, remember = tools
    config = {"configurable": {"user_id": "ada"}}
    await remember.ainvoke({"content": "Rides a road bike", "category": "context"}, config)
    assert "road bike" in await recall.ainvoke({"query": "bike"}, config)


def test_recall_leaves_out_what_scores_below_the_floor(use_memory: Memory) -> None:
    recall, remember = MemoryToolkit(memory=use_memory).get_tools()
    config = {"configurable": {"user_id": "ada"}}
    remember.invoke({"content": "Prefers reports in Chinese", "category": "preference"}, config)
    # Nothing in memory is about this: the tool says so instead of offering a weak guess.
    unrelated = recall.invoke({"query": "what is my dog called"}, config)
    assert unrelated.startswith("No memories match")
    weak = use_memory.recall("what is my dog called", user_id="ada")
    assert weak and weak[0].score < 0.2  # the library keeps it for callers who want all
    assert "Prefers reports in Chinese" in recall.invoke({"query": "report language"}, config)


def test_the_floor_is_the_embedders_own_unless_configured(home: Path) -> None:
    config = {"configurable": {"user_id": "ada"}}
    for floor, expect_hit in ((None, True), (0.99, False)):
        memory = Memory(MemoryConfig(home=home, recall_floor=floor), embeddings=HashingEmbeddings())
        with memory:
            recall, remember = MemoryToolkit(memory=memory).get_tools()
            remember.invoke({"content": "Owns a road bike", "category": "context"}, config)
            # Hashing vectors were never measured: no floor unless one is configured.
            assert ("road bike" in recall.invoke({"query": "bike"}, config)) is expect_hit
