"""``POST /v1/chat/stream`` takes the user's timezone: a due date said in the turn is theirs."""

from __future__ import annotations

import json
from datetime import UTC, datetime

from recallmem.extraction.pipeline import ExtractionPipeline
from recallmem.memory import Memory
from recallmem.server.app import create_app
from recallmem.testing import FakeChatModel
from serverkit import ADA, client_for, token_settings

SAID = "I have to file the tax return by 2031-01-01"


def extraction_model() -> FakeChatModel:
    due = {"content": "File the tax return", "category": "todo", "confidence": 0.95,
           "evidence": SAID, "valid_until": "2031-01-01"}  # fmt: skip
    return FakeChatModel(responses=[json.dumps({"facts": [due]})])


def test_a_chat_turns_due_date_ends_at_midnight_in_the_users_zone(memory: Memory) -> None:
    client = client_for(create_app(memory, token_settings(), model=FakeChatModel(
        responses=["Noted."])), ADA)  # fmt: skip
    body = {"message": SAID, "thread_id": "taxes", "timezone": "Asia/Shanghai"}
    assert client.post("/v1/chat/stream", json=body).status_code == 200
    extractor = ExtractionPipeline(memory.repository, extraction_model(), memory.config,
                                   background=False)  # fmt: skip
    (report,) = extractor.flush(timeout=10)
    extractor.close(timeout=0)
    assert report.added[0].fact.valid_until == datetime(2031, 1, 1, 16, tzinfo=UTC)


def test_an_unknown_timezone_is_refused_with_what_to_send(memory: Memory) -> None:
    client = client_for(create_app(memory, token_settings(), model=FakeChatModel(
        responses=["Noted."])), ADA)  # fmt: skip
    body = {"message": SAID, "thread_id": "taxes", "timezone": "Mars/Olympus"}
    response = client.post("/v1/chat/stream", json=body)
    assert response.status_code == 422
    assert "unknown timezone 'Mars/Olympus'" in response.text and "IANA" in response.text
    assert memory.queue.pending(user_id="ada") == []
