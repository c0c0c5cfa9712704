"""How the middleware marks its own messages and reads a turn; the events it emits."""

from __future__ import annotations

import json
import logging

import pytest
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from recallmem.agent.messages import (
    DO_NOT_RENDER,
    block_message,
    current_turn,
    first_user_message,
    hidden_message,
    is_hidden,
    last_reply,
    recall_ran,
    remembered_below,
    visible,
)
from recallmem.events import ExtractionEvent, RetrievalEvent, emit


def call(name: str, call_id: str, **args: object) -> AIMessage:
    return AIMessage(content="", tool_calls=[{"name": name, "args": args, "id": call_id}])


def test_hidden_messages_are_marked_for_interfaces_but_carry_only_text() -> None:
    note = hidden_message("<memory>x</memory>", "hint", meta={"trigger": "cue"})
    assert note.id is not None and note.id.startswith(DO_NOT_RENDER)
    assert note.additional_kwargs["recallmem"] == {"hidden": True, "kind": "hint", "trigger": "cue"}
    assert is_hidden(note) and not is_hidden(HumanMessage("hi"))
    # The marker survives a round trip through serialisation (checkpoints).
    assert is_hidden(HumanMessage.model_validate(note.model_dump()))


def test_current_turn_starts_at_the_latest_real_user_message() -> None:
    first, second = HumanMessage("one"), HumanMessage("two")
    note = hidden_message("note", "recall")
    reply = AIMessage("answer")
    user, turn = current_turn([first, AIMessage("a"), second, note, reply])
    assert user is second and turn == [note, reply]
    assert first_user_message([hidden_message("b", "block"), first, second]) is first
    assert current_turn([note]) == (None, [])
    assert visible([first, note, reply]) == [first, reply]


def test_a_recall_counts_whether_the_planner_or_the_middleware_did_it() -> None:
    assert recall_ran([call("recall", "c1", query="x")])
    assert recall_ran([hidden_message("facts", "recall")])
    assert not recall_ran([call("remember", "c2", content="x", category="preference")])
    assert not recall_ran([hidden_message("block", "block"), AIMessage("hm")])


def test_the_block_and_the_final_reply_are_found() -> None:
    block = hidden_message("b", "block")
    assert block_message([HumanMessage("q"), block]) is block
    assert block_message([HumanMessage("q")]) is None
    assert last_reply([AIMessage("final")]) == AIMessage("final")
    assert last_reply([call("recall", "c1", query="x")]) is None


def test_low_confidence_saves_are_those_that_succeeded() -> None:
    turn = [
        call("remember", "a", content="Likes dark mode", category="preference", confidence=0.75),
        ToolMessage("Saved", tool_call_id="a"),
        call("remember", "b", content="Uses Vim", category="preference"),
        ToolMessage("Saved", tool_call_id="b"),
        call("remember", "c", content="Failed one", category="preference", confidence=0.6),
        ToolMessage("Invalid", tool_call_id="c", status="error"),
    ]
    assert remembered_below(turn, 0.85) == ["Likes dark mode"]


def test_events_are_structured_log_records(caplog: pytest.LogCaptureFixture) -> None:
    event = RetrievalEvent(user_id="u", thread_id="t", agent_id=None, query="q" * 500, hits=0,
                           top_score=None, injected=False, trigger="hedge", forced=True)  # fmt: skip
    with caplog.at_level(logging.INFO, logger="recallmem.events"):
        emit(event)  # outside a run: logged only, no error
    [record] = caplog.records
    assert record.event == "memory_retrieval"  # type: ignore[attr-defined]
    logged = json.loads(record.getMessage().split(" ", 1)[1])
    assert logged["trigger"] == "hedge" and logged["forced"] is True
    assert len(logged["query"]) == 200


def test_extraction_event_counts_a_report() -> None:
    class Usage:
        input_tokens, output_tokens = 120, 30

    class Report:
        user_id, thread_id, agent_id, model, error = "u", "t", None, "fake", None
        added, confirmed, superseded, dropped = [1, 2], [3], [], [4]
        usage = Usage()

    event = ExtractionEvent.from_report(Report())
    assert (event.added, event.confirmed, event.superseded, event.dropped) == (2, 1, 0, 1)
    assert (event.input_tokens, event.output_tokens) == (120, 30)
