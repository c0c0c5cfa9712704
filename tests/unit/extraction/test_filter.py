"""The message filter: what of a conversation is worth extracting from."""

from __future__ import annotations

from pathlib import Path

import pytest
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage
from recallmem.errors import InvalidInputError, PromptError
from recallmem.extraction.filter import filter_messages, load_filter_rules, message_id


def test_keeps_user_words_and_final_replies_only() -> None:
    kept = filter_messages(
        [
            SystemMessage("You are helpful.", id="s"),
            HumanMessage("I'm a front-end developer", id="u1"),
            AIMessage(
                "Let me check.", tool_calls=[{"name": "recall", "args": {}, "id": "c"}], id="a1"
            ),
            ToolMessage('[{"content": "Prefers tea"}]', tool_call_id="c", id="t1"),
            AIMessage("Nice, front-end it is.", id="a2"),
        ]
    )
    assert [(u.id, u.role, u.content) for u in kept] == [
        ("u1", "user", "I'm a front-end developer"),
        ("a2", "assistant", "Nice, front-end it is."),
    ]


@pytest.mark.parametrize(
    "text",
    ["ok", "OK, thanks!", "thank you", "好的", "好的，谢谢～", "谢谢！", "收到", "👍", "got it"],
)
def test_acknowledgements_are_dropped(text: str) -> None:
    assert filter_messages([HumanMessage(text)]) == []


@pytest.mark.parametrize(
    "text", ["ok so I write TypeScript", "好的，我是后端工程师", "yes, I live in Berlin"]
)
def test_a_message_with_content_beyond_an_acknowledgement_is_kept(text: str) -> None:
    assert [u.content for u in filter_messages([HumanMessage(text)])] == [text]


def test_injected_memory_blocks_are_never_re_extracted() -> None:
    kept = filter_messages(
        [
            HumanMessage("<memory>\n- Prefers tea\n- Lives in Berlin\n</memory>"),
            HumanMessage('<memory version="1">Prefers tea</memory>\nI switched to coffee.'),
        ]
    )
    assert [u.content for u in kept] == ["I switched to coffee."]


def test_upload_narration_is_removed_in_both_languages() -> None:
    kept = filter_messages(
        [
            HumanMessage(
                "[User uploaded file: Q3-report.pdf]\nSummarise it, I'm the finance lead."
            ),
            HumanMessage("用户上传了文件 季度报告.pdf\n帮我看看，我是财务负责人。"),
            HumanMessage("<uploaded_files>\n- a.png\n</uploaded_files>"),
        ]
    )
    assert [u.content for u in kept] == [
        "Summarise it, I'm the finance lead.",
        "帮我看看，我是财务负责人。",
    ]


def test_secrets_are_redacted_before_anything_is_kept() -> None:
    (kept,) = filter_messages(
        [HumanMessage("my key is sk-proj-abcdefghijklmnop1234, 密码是 hunter22")]
    )
    assert "sk-proj" not in kept.content and "hunter22" not in kept.content
    assert kept.content.count("[REDACTED]") == 2


def test_dicts_are_accepted_and_ids_are_stable() -> None:
    messages = [
        {"role": "user", "content": "I use Vim"},
        {"role": "assistant", "content": "Vim it is."},
    ]
    first, second = filter_messages(messages), filter_messages(messages)
    assert [u.id for u in first] == [u.id for u in second]
    assert first[0].id == message_id("user", "I use Vim", None) != first[1].id


def test_multimodal_content_keeps_its_text() -> None:
    message = HumanMessage(
        [
            {"type": "text", "text": "I shoot on Fuji"},
            {"type": "image_url", "image_url": {"url": "x"}},
        ]
    )
    assert [u.content for u in filter_messages([message])] == ["I shoot on Fuji"]


def test_bad_input_says_what_to_pass() -> None:
    with pytest.raises(InvalidInputError, match="list of messages"):
        filter_messages(HumanMessage("hi"))  # type: ignore[arg-type]
    with pytest.raises(InvalidInputError, match="'role'"):
        filter_messages([{"role": "narrator", "content": "x"}])


def test_a_malformed_override_file_is_an_error_at_load(tmp_path: Path) -> None:
    (tmp_path / "filter.yaml").write_text(
        "name: filter\nversion: '1'\nacknowledgements: {en: [ok], zh: [好]}\n"
        "injected_blocks: [memory]\nnarration: {en: ['(unclosed'], zh: ['x']}\n",
        encoding="utf-8",
    )
    with pytest.raises(PromptError, match="does not compile"):
        load_filter_rules(tmp_path)


def test_messages_the_middleware_added_are_never_extracted() -> None:
    note = HumanMessage(
        "The user may be pointing at something from earlier: consider calling recall.",
        id="do-not-render-recallmem-hint-1",
        additional_kwargs={"recallmem": {"hidden": True, "kind": "hint"}},
    )
    assert filter_messages([note, HumanMessage("I use Vim", id="u")])[0].id == "u"
    assert len(filter_messages([note])) == 0
