"""The product driving a model over HTTP exactly as a user's configuration does.

``RECALLMEM_LLM_MODEL``, ``RECALLMEM_OPENAI_API_KEY`` and ``RECALLMEM_OPENAI_BASE_URL``
point at :class:`~recallmem.testing.ReplayServer` on 127.0.0.1, so LangChain's
``ChatOpenAI`` sends every request through the real wire (chat completions, tool
calls, forced structured output, streaming) and gets recorded replies back: through
the library (extraction), the middleware (block, cue, recall tool, forced recall after
a hedge) and ``recallmem serve`` with its chat stream.

MACHINERY TESTS: the replies in ``tests/data/recorded/machinery/`` were written for
these tests (each says so in its ``note``), not by a model; they show the wire works,
not how a model behaves. When a prompt change makes their requests new, rerun with
``RECALLMEM_RECORD_MACHINERY=1`` to file the same scripted replies for the new requests
(and delete the unused files).
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest
import time_machine
from langchain.agents import create_agent
from recallmem import Memory, MemoryConfig, MemoryMiddleware
from recallmem.replay.recordings import Reply, ToolCall
from recallmem.testing import HashingEmbeddings, ReplayServer

MACHINERY = Path(__file__).resolve().parents[1] / "data" / "recorded" / "machinery"
AT = datetime(2026, 12, 1, 9, 0, tzinfo=UTC)  # every turn runs at this instant
TOKEN = "tok-wire-0123456789abcdef"
SAID = "I write TypeScript at work, and please keep my reports in Chinese."
HEDGE = "I don't have access to previous conversations, so I can't tell which editor you use."


def _text(body: Mapping[str, Any], last: bool = False) -> str:
    messages = body["messages"][-1:] if last else body["messages"]
    return json.dumps([m.get("content") for m in messages], ensure_ascii=False)


def scripted(body: Mapping[str, Any]) -> Reply:
    """The replies these tests were written with (record mode only)."""
    tools = {t["function"]["name"] for t in body.get("tools") or []}
    last = body["messages"][-1]
    if "record_extraction" in tools:
        facts = []
        if "I write TypeScript at work" in _text(body):
            facts = [{"content": "Writes TypeScript at work", "category": "knowledge",
                      "confidence": 0.95, "evidence": "I write TypeScript at work",
                      "message_ids": ["m1"], "keywords": ["TypeScript", "工作"]}]  # fmt: skip
        return Reply(tool_calls=(ToolCall(name="record_extraction", arguments={"facts": facts}),))
    if last["role"] == "tool":
        return Reply(content="好的，这份周报我会用中文写。")
    if 'trigger=\\"hedge\\"' in _text(body, last=True):
        return Reply(content="You use Neovim with a Lua config.")
    if "editor" in _text(body):
        return Reply(content=HEDGE)
    if "weekly report" in _text(body):
        query = {"query": "report language 报告 语言"}
        return Reply(tool_calls=(ToolCall(name="recall", arguments=query),))
    return Reply(content="Noted.")


@pytest.fixture
def replay(tmp_path: Path) -> Iterator[ReplayServer]:
    with ReplayServer(MACHINERY, requests_dir=tmp_path / "unrecorded") as server:
        if os.environ.get("RECALLMEM_RECORD_MACHINERY") == "1":
            server.answerer.fill = scripted
        yield server
    assert server.answerer.missed == [], "requests without a recording (see the error above)"


@pytest.fixture
def configured(replay: ReplayServer, monkeypatch: pytest.MonkeyPatch) -> ReplayServer:
    monkeypatch.setenv("RECALLMEM_LLM_MODEL", "replay-model")
    monkeypatch.setenv("RECALLMEM_OPENAI_API_KEY", "sk-any")
    monkeypatch.setenv("RECALLMEM_OPENAI_BASE_URL", replay.base_url)
    return replay


def test_extraction_calls_the_configured_endpoint_and_stores_its_reply(
    configured: ReplayServer, home: Path
) -> None:
    with Memory(MemoryConfig(home=home), embeddings=HashingEmbeddings()) as memory:
        memory.observe([{"role": "user", "content": SAID, "id": "m1",
                         "said_at": "2026-11-30T10:00:00+08:00"}],
                       user_id="ada", thread_id="t1", timezone="Asia/Shanghai")  # fmt: skip
        (report,) = memory.flush()
        assert report.error is None
        (added,) = report.added
    assert added.fact.content == "Writes TypeScript at work"
    assert added.fact.keywords == ("TypeScript", "工作")
    # The answering model's name travels back over the wire into the fact's provenance.
    assert added.fact.sources[0].extractor == "machinery-fixture"
    assert len(configured.answerer.answered) == 1


def _agent(home: Path) -> tuple[Memory, Any]:
    memory = Memory(MemoryConfig(home=home), embeddings=HashingEmbeddings())
    # A minute apart: facts stored at one instant tie, and their random ids would then
    # order them, so the recorded request would match one run in two.
    for minutes, content in ((2, "Prefers reports written in Chinese"),
                             (1, "Uses Neovim with a Lua config")):  # fmt: skip
        with time_machine.travel(AT - timedelta(minutes=minutes), tick=False):
            memory.remember(content, user_id="ada", category="preference")
    return memory, create_agent(model=memory.model, middleware=[MemoryMiddleware(memory=memory)])


def test_the_agent_calls_recall_over_the_wire_and_streams_its_answer(
    configured: ReplayServer, home: Path
) -> None:
    with time_machine.travel(AT, tick=False):
        memory, agent = _agent(home)
        pieces = [
            chunk.content
            for chunk, _ in agent.stream(
                {"messages": [{"role": "user", "content": "Write my weekly report, as usual"}]},
                context={"user_id": "ada", "thread_id": "t-report"},
                stream_mode="messages",
            )
            if getattr(chunk, "type", "") == "AIMessageChunk" and chunk.content
        ]
        memory.close(timeout=0)
    assert "".join(pieces) == "好的，这份周报我会用中文写。"
    assert len(pieces) >= 1
    assert len(configured.answerer.answered) == 2  # the recall call, then the answer


def test_a_hedging_reply_is_followed_by_a_forced_recall_over_the_wire(
    configured: ReplayServer, home: Path
) -> None:
    with time_machine.travel(AT, tick=False):
        memory, agent = _agent(home)
        result = agent.invoke(
            {"messages": [{"role": "user", "content": "Which editor do I use these days?"}]},
            context={"user_id": "ada", "thread_id": "t-editor"},
        )
        memory.close(timeout=0)
    assert result["messages"][-1].content == "You use Neovim with a Lua config."
    notes = [m.content for m in result["messages"] if 'trigger="hedge"' in str(m.content)]
    assert len(notes) == 1 and "Uses Neovim with a Lua config" in notes[0]


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


_SERVE_AT = f"""
import sys, time_machine
time_machine.travel({AT.isoformat()!r}, tick=True).start()
from recallmem.cli import main
sys.exit(main(sys.argv[1:]))
"""


def test_recallmem_serve_chats_through_the_configured_endpoint(
    replay: ReplayServer, tmp_path: Path
) -> None:
    port = _free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("RECALLMEM_")}
    env |= {"RECALLMEM_HOME": str(tmp_path / "home"), "RECALLMEM_EMBEDDER": "use",
            "RECALLMEM_LLM_MODEL": "replay-model", "RECALLMEM_OPENAI_API_KEY": "sk-any",
            "RECALLMEM_OPENAI_BASE_URL": replay.base_url,
            "RECALLMEM_API_TOKENS": json.dumps([{"token": TOKEN, "user_id": "ada"}])}  # fmt: skip
    log = (tmp_path / "serve.log").open("wb")
    service = subprocess.Popen([sys.executable, "-c", _SERVE_AT, "serve", "--port", str(port)],
                               env=env, stdout=log, stderr=log)  # fmt: skip
    url, auth = f"http://127.0.0.1:{port}", {"Authorization": f"Bearer {TOKEN}"}
    try:
        deadline = time.monotonic() + 120
        while True:
            assert service.poll() is None, (tmp_path / "serve.log").read_text()
            try:
                if httpx.get(f"{url}/v1/ready", timeout=5).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            assert time.monotonic() < deadline, "recallmem serve did not become ready"
            time.sleep(0.3)
        for content in ("Prefers reports written in Chinese", "Uses Neovim with a Lua config"):
            stored = httpx.post(f"{url}/v1/users/ada/facts", headers=auth, timeout=30,
                                json={"content": content, "category": "preference"})  # fmt: skip
            assert stored.status_code == 201, stored.text
        body = {"message": "Write my weekly report, as usual", "thread_id": "t-serve"}
        reply = httpx.post(f"{url}/v1/chat/stream", headers=auth, json=body, timeout=120)
    finally:
        service.terminate()
        service.wait(timeout=60)
        log.close()
    assert reply.status_code == 200, reply.text
    events = [
        (fields["event"], json.loads(fields["data"]))
        for block in reply.text.strip().split("\n\n")
        for fields in [dict(line.split(": ", 1) for line in block.splitlines())]
    ]
    assert [d["text"] for e, d in events if e == "message"] == ["好的，这份周报我会用中文写。"]
    recalls = [d for e, d in events if e == "memory" and d.get("kind") == "recall"]
    assert any(r["trigger"] == "tool" and r["hits"] for r in recalls)
    assert events[-1] == ("done", {"thread_id": "t-serve", "ok": True})
