"""The replay machinery: request keys, recordings, answers, the in-process model.

MACHINERY TESTS: every recording here is written by the test itself (a reply we chose),
to check that requests are keyed, filed and answered as an API would; none of them
says anything about how a model behaves.
"""

from __future__ import annotations

import json
from pathlib import Path

import openai
import pytest
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from pydantic import BaseModel
from recallmem.errors import InvalidInputError
from recallmem.replay.answer import Answerer
from recallmem.replay.readable import request_markdown
from recallmem.replay.recordings import Recordings, Reply, ToolCall
from recallmem.replay.wire_request import canonical_request, request_key
from recallmem.testing import ReplayChatModel


class Weather(BaseModel):
    """The weather in a city."""

    city: str


def test_the_key_ignores_how_a_request_is_sent_and_renumbers_tool_call_ids() -> None:
    def conversation(call_id: str) -> list[dict[str, object]]:
        return [
            {"role": "user", "content": "weather?"},
            {"role": "assistant", "content": None, "tool_calls": [
                {"id": call_id, "type": "function", "function": {"name": "w", "arguments": "{}"}}]},
            {"role": "tool", "tool_call_id": call_id, "content": "sunny"},
        ]  # fmt: skip

    a = {"model": "x", "stream": True, "messages": conversation("call_abc")}
    b = {"model": "y", "temperature": 0.3, "messages": conversation("call_xyz")}
    assert request_key(a) == request_key(b)
    assert canonical_request(a)["messages"][2]["tool_call_id"] == "call_1"
    changed = {"messages": [{"role": "user", "content": "weather? "}]}
    assert request_key(changed) != request_key({"messages": conversation("c")[:1]})


def test_markdown_shows_the_request_verbatim_even_text_with_fences() -> None:
    body = {"messages": [{"role": "user", "content": "look:\n```py\nx = 1\n```"}],
            "tools": [{"type": "function", "function": {"name": "recall"}}]}  # fmt: skip
    text = request_markdown(body, "k")
    assert "````text\nlook:\n```py\nx = 1\n```\n````" in text
    assert '"name": "recall"' in text


def test_a_reply_no_api_could_give_is_refused(tmp_path: Path) -> None:
    body = {"messages": [{"role": "user", "content": "hi"}],
            "tools": [{"type": "function", "function": {"name": "recall"}}],
            "tool_choice": {"type": "function", "function": {"name": "recall"}}}  # fmt: skip
    recordings = Recordings(tmp_path)
    with pytest.raises(InvalidInputError, match="obliges a call of 'recall'"):
        recordings.save(body, Reply(content="hello"), model="m", kind="agent")
    with pytest.raises(InvalidInputError, match="calls 'forget', which the request does not offer"):
        recordings.save(body, Reply(tool_calls=(ToolCall(name="forget"),)), model="m", kind="agent")
    assert recordings.keys() == set()


def test_a_reply_written_beside_its_request_is_filed(tmp_path: Path) -> None:
    answerer = Answerer(Recordings(tmp_path / "recorded"), tmp_path / "requests")
    body = {"messages": [{"role": "user", "content": "hi"}]}
    missed = answerer.answer(json.dumps(body).encode())
    assert missed.status == 404
    (key,) = answerer.missed
    request_file = answerer.written[key]
    assert str(request_file) in json.loads(missed.body)["error"]["message"]
    assert request_file.with_suffix(".md").is_file()
    request_file.with_name(f"{request_file.stem}.reply.json").write_text(
        json.dumps({"model": "a-model", "content": "hello"}), encoding="utf-8"
    )
    # The API's own shape of a tool call is read too.
    assert ToolCall.model_validate(
        {"id": "x", "type": "function", "function": {"name": "f", "arguments": '{"a": 1}'}}
    ) == ToolCall(name="f", arguments={"a": 1})
    filed = Recordings(tmp_path / "recorded").file_reply(request_file)
    assert filed == tmp_path / "recorded" / "chat" / f"{request_key(body)}.json"
    answered = Answerer(Recordings(tmp_path / "recorded")).answer(json.dumps(body).encode())
    completion = json.loads(answered.body)
    assert completion["choices"][0]["message"]["content"] == "hello"
    assert completion["model"] == "a-model"


def test_a_missing_recording_fails_loudly_naming_the_file_to_record(tmp_path: Path) -> None:
    model = ReplayChatModel(recordings=tmp_path / "recorded", requests_dir=tmp_path / "todo")
    with pytest.raises(openai.NotFoundError, match=r"no recording for request [0-9a-f]{20}.*todo"):
        model.invoke("anything new")
    assert len(model.answerer.missed) == 1


def _record_first_request(
    tmp_path: Path, model: ReplayChatModel, call: object, reply: Reply
) -> None:
    with pytest.raises(openai.NotFoundError):
        call()
    (key,) = model.answerer.missed
    body = json.loads(model.answerer.written[key].read_text(encoding="utf-8"))
    Recordings(tmp_path / "recorded").save(body, reply, model="test-fixture", kind="chat",
                                           note="machinery test")  # fmt: skip


def test_tool_calls_and_their_results_replay_in_process(tmp_path: Path) -> None:
    def model() -> ReplayChatModel:
        return ReplayChatModel(recordings=tmp_path / "recorded", requests_dir=tmp_path / "todo")

    first = model().bind_tools([Weather])
    _record_first_request(tmp_path, first.bound, lambda: first.invoke("Weather in Lisbon?"),  # type: ignore[attr-defined]
                          Reply(tool_calls=(ToolCall(name="Weather", arguments={"city": "Lisbon"}),)))  # fmt: skip
    bound = model().bind_tools([Weather])
    asked = bound.invoke("Weather in Lisbon?")
    assert asked.tool_calls[0]["args"] == {"city": "Lisbon"}

    # The follow-up carries the call's id; ids are renumbered, so any id matches.
    follow = [HumanMessage("Weather in Lisbon?"), AIMessage("", tool_calls=asked.tool_calls),
              ToolMessage("sunny", tool_call_id=asked.tool_calls[0]["id"])]  # fmt: skip
    again = model().bind_tools([Weather])
    _record_first_request(tmp_path, again.bound, lambda: again.invoke(follow),  # type: ignore[attr-defined]
                          Reply(content="It is sunny in Lisbon."))  # fmt: skip
    follow[1] = AIMessage("", tool_calls=[{**asked.tool_calls[0], "id": "call_other"}])
    follow[2] = ToolMessage("sunny", tool_call_id="call_other")
    assert model().bind_tools([Weather]).invoke(follow).content == "It is sunny in Lisbon."


async def test_structured_output_and_streaming_replay(tmp_path: Path) -> None:
    model = ReplayChatModel(recordings=tmp_path / "recorded", requests_dir=tmp_path / "todo")
    structured = model.with_structured_output(Weather, method="function_calling")
    _record_first_request(tmp_path, model, lambda: structured.invoke("Where is it sunny?"),
                          Reply(tool_calls=(ToolCall(name="Weather", arguments={"city": "Faro"}),)))  # fmt: skip
    fresh = ReplayChatModel(recordings=tmp_path / "recorded")
    result = await fresh.with_structured_output(Weather, method="function_calling").ainvoke(
        "Where is it sunny?"
    )
    assert result == Weather(city="Faro")

    streamer = ReplayChatModel(recordings=tmp_path / "recorded", requests_dir=tmp_path / "todo",
                               streaming=True)  # fmt: skip
    text = "A long answer that arrives in several pieces over the stream."
    _record_first_request(tmp_path, streamer, lambda: streamer.invoke("Tell me"),
                          Reply(content=text))  # fmt: skip
    fresh = ReplayChatModel(recordings=tmp_path / "recorded", streaming=True)
    pieces = [c.content async for c in fresh.astream("Tell me")]
    assert "".join(map(str, pieces)) == text and len([p for p in pieces if p]) > 1
