"""The day-one / day-two scenario against a real OpenAI-compatible endpoint.

Runs only when ``RECALLMEM_LLM_MODEL`` and ``RECALLMEM_OPENAI_API_KEY`` (or
``RECALLMEM_OPENAI_BASE_URL``) are set; skipped otherwise. Real models vary, so it
asserts what the memory layer guarantees, not the model's wording.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from langchain_core.messages import AIMessage
from recallmem.agent.messages import kind_of
from recallmem.config import MemoryConfig
from recallmem.extraction.chain import model_from_config
from recallmem.memory import Memory
from recallmem.testing import FakeChatModel, HashingEmbeddings
from recallmem.text.tokens import get_counter

from .agent_helpers import Run


def _live_model() -> object:
    try:
        return model_from_config(MemoryConfig(home=Path("/nonexistent-live-probe")))
    except Exception as exc:  # a half-configured endpoint is a skip with the reason
        pytest.skip(f"live endpoint not usable: {exc}")


@pytest.mark.live
@pytest.mark.enable_socket
def test_day_one_day_two_against_a_real_model(tmp_path: Path, run: Callable[..., Run]) -> None:
    model = _live_model()
    if model is None:
        pytest.skip("set RECALLMEM_LLM_MODEL and RECALLMEM_OPENAI_API_KEY to run live tests")
    memory = Memory(MemoryConfig(home=tmp_path / "mem"), embeddings=HashingEmbeddings(),
                    model=model)  # type: ignore[arg-type]  # fmt: skip
    try:
        agent = run(memory, model, extraction="inline", max_injection_tokens=400)
        agent.say("I'm on the front-end team, TypeScript, reports in Chinese", thread="day-1")
        facts = " ".join(f.content for f in memory.list(user_id="ada")).lower()
        assert "typescript" in facts and "chinese" in facts

        spy = FakeChatModel(responses=["ok"])  # records what the agent model would be sent
        day_two = run(memory, spy, max_injection_tokens=400)
        day_two.say("写一份 Vue 相关技术报告", thread="day-2")
        block = spy.requests[0][0]
        assert kind_of(block) == "block" and "TypeScript" in block.text
        assert get_counter().count(block.text) <= 400

        messages = agent.say("上次那个方案是什么来着？", thread="day-3")
        asked = [c for m in messages if isinstance(m, AIMessage) for c in m.tool_calls]
        assert any(c["name"] == "recall" for c in asked) or any(
            kind_of(m) == "recall" for m in messages
        )
    finally:
        memory.close()
