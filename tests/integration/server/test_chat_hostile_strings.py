"""The chat service shows the model hostile stored facts as data: one line each, no tags."""

from __future__ import annotations

import re
from pathlib import Path

import yaml
from langchain_core.messages import AIMessage
from recallmem.memory import Memory
from recallmem.server.app import create_app
from recallmem.testing import FakeChatModel
from serverkit import ADA, client_for, token_settings

CORPUS = Path(__file__).resolve().parents[2] / "data" / "hostile_strings.yaml"
CASES: list[dict[str, str]] = yaml.safe_load(CORPUS.read_text(encoding="utf-8"))


def test_every_hostile_fact_reaches_the_chat_model_as_one_line(memory: Memory) -> None:
    for n, case in enumerate(CASES):
        memory.remember(f"{case['text']} (tea note {n})", user_id="ada", category="preference")
    call = {"name": "recall", "args": {"query": "green tea", "k": 20}, "id": "call-1"}
    model = FakeChatModel(responses=[AIMessage(content="", tool_calls=[call]), "Green tea."])
    client = client_for(create_app(memory, token_settings(), model=model), ADA)
    body = {"message": "Which tea do I like, as I told you last time?", "thread_id": "t"}
    response = client.post("/v1/chat/stream", json=body)
    assert response.status_code == 200, response.text
    assert model.calls == 2
    seen = [m for request in model.requests for m in request if not isinstance(m, AIMessage)]
    shown = "\n".join(m.text for m in seen)
    assert "tea note" in shown and shown.count("tea note") >= 20
    lines = shown.split("\n")
    assert lines == shown.splitlines()
    for case in CASES:
        assert not any(line.strip().startswith(case["tail"]) for line in lines), case["name"]
    for message in seen:
        opened = len(re.findall(r"<\s*memory\b", message.text, re.IGNORECASE))
        closed = len(re.findall(r"<\s*/\s*memory\s*>", message.text, re.IGNORECASE))
        assert opened == closed <= 1
    notes = [line for line in lines if "tea note" in line]
    assert all(re.match(r"(- |\d+\. )\[preference\] ", line) for line in notes), notes
