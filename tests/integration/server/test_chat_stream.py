"""``POST /v1/chat/stream`` with the scripted fake model: events, memory, disconnects."""

from __future__ import annotations

import json
import threading
import time
from typing import Any

import httpx
import pytest
from langchain_core.messages import AIMessage, BaseMessage
from recallmem.memory import Memory
from recallmem.server.app import create_app
from recallmem.testing import FakeChatModel
from serverkit import ADA, ADMIN, LiveServer, client_for, token_settings

Event = tuple[str, dict[str, Any]]


def parse_sse(text: str) -> list[Event]:
    events: list[Event] = []
    for block in text.strip().split("\n\n"):
        fields = dict(line.split(": ", 1) for line in block.splitlines())
        events.append((fields["event"], json.loads(fields["data"])))
    return events


def recall_call(query: str) -> AIMessage:
    return AIMessage(
        content="", tool_calls=[{"name": "recall", "args": {"query": query}, "id": "call-1"}]
    )


@pytest.fixture
def seeded(memory: Memory) -> Memory:
    memory.remember("Prefers reports in Chinese", user_id="ada", category="preference")
    memory.remember(
        "Works on the front-end team with TypeScript", user_id="ada", category="context"
    )
    memory.remember("Bob prefers reports in French", user_id="bob", category="preference")
    return memory


def chat(
    memory: Memory, model: FakeChatModel, body: dict[str, Any], token: str = ADA
) -> list[Event]:
    client = client_for(create_app(memory, token_settings(), model=model), token)
    response = client.post("/v1/chat/stream", json=body)
    assert response.status_code == 200, response.text
    assert response.headers["content-type"].startswith("text/event-stream")
    return parse_sse(response.text)


def test_a_turn_streams_memory_events_apart_from_the_text(seeded: Memory) -> None:
    model = FakeChatModel(
        responses=[recall_call("report language"), "好的，我会用中文写这份报告。"]
    )
    events = chat(
        seeded, model, {"message": "Write my weekly report, as usual", "thread_id": "t-1"}
    )

    kinds = [(name, data.get("kind")) for name, data in events]
    assert kinds[0] == ("memory", "injection")
    assert ("memory", "recall") in kinds
    assert kinds[-2:] == [("memory", "queued"), ("done", None)]
    messages = [data for name, data in events if name == "message"]
    assert [m["text"] for m in messages] == ["好的，我会用中文写这份报告。"]

    injection = events[0][1]
    assert injection["hits"] >= 1 and injection["tokens"] > 0
    recalls = {data["trigger"]: data for name, data in events if data.get("kind") == "recall"}
    assert set(recalls) == {"cue", "tool"}  # "as usual" is a recall cue; the planner also asked
    recall = recalls["tool"]
    assert recall["hits"][0]["content"] == "Prefers reports in Chinese"
    assert set(recall["hits"][0]["parts"]) == {
        "dense",
        "lexical",
        "recency",
        "confidence",
        "time",
        "newer",
        "key",
    }
    assert events[-1][1] == {"thread_id": "t-1", "ok": True}

    # The model saw the memory block; nothing of another user reached it or the client.
    sent = "\n".join(m.text for m in model.requests[0])
    assert "Prefers reports in Chinese" in sent
    everything = json.dumps(events, ensure_ascii=False) + sent
    assert "French" not in everything


def test_control_data_never_arrives_as_chat_text(seeded: Memory) -> None:
    model = FakeChatModel(responses=[recall_call("team"), "You are on the front-end team."])
    events = chat(seeded, model, {"message": "Which team am I on, as I told you last time?"})
    for name, data in events:
        if name == "message":
            assert "<memory" not in data["text"] and "do-not-render" not in str(data["id"])
    assert all(name in {"memory", "message", "done"} for name, _ in events)


def test_the_turn_is_queued_for_extraction(seeded: Memory) -> None:
    model = FakeChatModel(responses=["Noted: the ESP32 readings fluctuate."])
    body = {
        "message": "Remember that my ESP32 waters the basil at 7:00",
        "history": [
            {"role": "user", "content": "I built a watering rig"},
            {"role": "assistant", "content": "Nice, tell me more."},
        ],
        "thread_id": "garden",
    }
    events = chat(seeded, model, body)
    queued = next(data for name, data in events if data.get("kind") == "queued")
    assert queued["thread_id"] == "garden" and queued["pending"] >= 2
    # The agent's middleware queued the turn first; the note said "0 new message(s) queued".
    assert queued["note"].startswith(f"{queued['pending']} message(s) of this thread queued;")
    pending = {p.thread_id: p for p in seeded.queue.pending(user_id="ada")}
    said = [m.content for m in pending["garden"].messages]
    assert "Remember that my ESP32 waters the basil at 7:00" in said
    assert "Noted: the ESP32 readings fluctuate." in said


def test_a_resent_turn_is_not_queued_twice(seeded: Memory) -> None:
    model = FakeChatModel(responses=["Sure."], cycle=True)
    body = {"message": "I switched to the product team", "thread_id": "t-job"}
    chat(seeded, model, body)
    first = len(
        next(p for p in seeded.queue.pending(user_id="ada") if p.thread_id == "t-job").messages
    )
    chat(seeded, model, body)
    again = len(
        next(p for p in seeded.queue.pending(user_id="ada") if p.thread_id == "t-job").messages
    )
    assert again == first


def test_a_hedge_is_caught_and_only_the_retry_is_shown(seeded: Memory) -> None:
    model = FakeChatModel(responses=[
        "I don't have access to previous conversations, so I'm not sure which language you prefer.",
        "You prefer reports in Chinese.",
    ])  # fmt: skip
    events = chat(seeded, model, {"message": "Write the report in the right language please."})
    assert [d["text"] for n, d in events if n == "message"] == ["You prefer reports in Chinese."]
    hedge = [d for n, d in events if d.get("kind") == "recall" and d.get("trigger") == "hedge"]
    assert len(hedge) == 1 and hedge[0]["forced"] is True
    assert model.calls == 2


def test_a_model_failure_ends_with_an_error_event_and_still_queues(seeded: Memory) -> None:
    model = FakeChatModel(responses=[RuntimeError("provider timed out")])
    events = chat(seeded, model, {"message": "Plan my week", "thread_id": "t-err"})
    names = [name for name, _ in events]
    assert names[-3:] == ["error", "memory", "done"]
    assert "provider timed out" in events[-3][1]["detail"]
    assert events[-1][1]["ok"] is False
    assert any(p.thread_id == "t-err" for p in seeded.queue.pending(user_id="ada"))


def test_admin_chats_as_the_named_user(seeded: Memory) -> None:
    model = FakeChatModel(responses=["Hello Ada."])
    events = chat(seeded, model, {"message": "hi", "user_id": "ada", "thread_id": "t-adm"}, ADMIN)
    assert events[-1][0] == "done"
    assert any(p.thread_id == "t-adm" for p in seeded.queue.pending(user_id="ada"))
    client = client_for(create_app(seeded, token_settings(), model=model), ADMIN)
    assert client.post("/v1/chat/stream", json={"message": "hi"}).status_code == 400


def test_chat_retrievals_count_toward_the_hit_rate(seeded: Memory) -> None:
    model = FakeChatModel(responses=[recall_call("reports"), "Chinese."])
    app = create_app(seeded, token_settings(), model=model)
    client = client_for(app, ADA)
    client.post("/v1/chat/stream", json={"message": "What language for reports?"})
    recall = client.get("/v1/users/me/metrics").json()["recall"]
    assert recall["count"] >= 2 and recall["with_hits"] >= 2


def test_a_client_that_hangs_up_mid_stream_still_has_its_turn_queued(
    seeded: Memory, live_server: type[LiveServer]
) -> None:
    release = threading.Event()

    def slow_answer(messages: list[BaseMessage]) -> str:
        release.wait(timeout=15)
        return "This answer comes too late."

    model = FakeChatModel(responses=[recall_call("weekly report"), slow_answer])
    app = create_app(seeded, token_settings(), model=model)
    body = {"message": "Draft the weekly report like last time", "thread_id": "t-gone"}
    try:
        with live_server(app) as url, httpx.Client(base_url=url, timeout=15) as client:
            with client.stream(
                "POST", "/v1/chat/stream", json=body, headers={"Authorization": f"Bearer {ADA}"}
            ) as response:
                for line in response.iter_lines():
                    if '"kind": "recall"' in line:
                        break  # hang up while the model is still answering
            deadline = time.monotonic() + 15
            while not any(p.thread_id == "t-gone" for p in seeded.queue.pending(user_id="ada")):
                assert time.monotonic() < deadline, "the turn was never queued"
                time.sleep(0.05)
    finally:
        release.set()
    pending = next(p for p in seeded.queue.pending(user_id="ada") if p.thread_id == "t-gone")
    assert [m.content for m in pending.messages] == ["Draft the weekly report like last time"]
