"""The tolerant parser reads messy model output; unreadable output is an error, not a drop."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st
from recallmem.errors import ExtractionError
from recallmem.extraction.parser import parse_extraction
from recallmem.limits import MAX_FACTS_PER_WINDOW
from recallmem.text.quoting import stored_text
from recallmem.types import Category

FACT = {"content": "Prefers reports in Chinese", "category": "preference", "confidence": 0.9,
        "evidence": "reports in Chinese", "message_ids": ["m1"]}  # fmt: skip
BODY = json.dumps({"facts": [FACT], "supersede": [], "confirmed": ["F2"], "todos_done": []})


@pytest.mark.parametrize(
    "reply",
    [
        BODY,
        f"Sure! Here is the JSON:\n{BODY}\nLet me know if you need more.",
        f"```json\n{BODY}\n```",
        f"```\n{BODY}\n```",
        f"<think>The user prefers Chinese. {{not json}}</think>\n{BODY}",
        f"reasoning without an opening tag</think>{BODY}",
        BODY.replace("]", ",]").replace("}", ",}"),  # trailing commas everywhere
    ],
)
def test_messy_replies_parse_to_the_same_result(reply: str) -> None:
    result = parse_extraction(reply)
    assert [f.content for f in result.facts] == ["Prefers reports in Chinese"]
    assert result.facts[0].category is Category.PREFERENCE
    assert result.confirmed == ("F2",)


def test_loose_values_are_normalised() -> None:
    result = parse_extraction(
        '{"facts": [{"content": "Writes Rust", "category": " Knowledge ", "confidence": "90%", '
        '"evidence": "I write Rust", "message_ids": "m1"}, {"content": "Likes tea", '
        '"category": "Preferences", "confidence": "high", "evidence": "tea"}], '
        '"profile": {"work_context": {"should_update": True, "summary": "Rust dev"}, "recent": "x"}}'
    )
    assert [(f.category.value, f.confidence) for f in result.facts] == [
        ("knowledge", 0.9),
        ("preference", 0.9),
    ]
    assert result.facts[0].message_ids == ("m1",)
    assert result.profile["work_context"].should_update and result.profile["recent"].summary == "x"


def test_unusable_items_are_set_aside_with_a_reason_and_the_rest_kept() -> None:
    result = parse_extraction(
        json.dumps({"facts": [FACT, {"content": "x", "category": "hobby", "confidence": 1},
                              {"content": "y", "category": "goal"}, "just text"],
                    "profile": {"mood": {"should_update": True, "summary": "happy"}}})
    )  # fmt: skip
    assert len(result.facts) == 1
    reasons = [r.reason for r in result.rejected]
    assert "unknown category 'hobby'" in reasons
    assert any("no confidence" in r for r in reasons)
    assert any("must be an object" in r for r in reasons)
    assert "unknown profile section" in reasons


def test_a_reply_is_read_for_its_first_facts_up_to_the_cap() -> None:
    flood = [{**FACT, "content": f"Prefers report {n}"} for n in range(MAX_FACTS_PER_WINDOW + 5)]
    result = parse_extraction(json.dumps({"facts": flood}))
    assert [f.content for f in result.facts] == [f["content"] for f in flood[:-5]]
    (capped,) = result.rejected
    assert capped.item == f"5 facts past the first {MAX_FACTS_PER_WINDOW}"
    assert f"at most {MAX_FACTS_PER_WINDOW} facts" in capped.reason
    exact = parse_extraction(json.dumps({"facts": flood[:MAX_FACTS_PER_WINDOW]}))
    assert len(exact.facts) == MAX_FACTS_PER_WINDOW and exact.rejected == ()


def test_a_bare_list_is_read_as_facts() -> None:
    assert len(parse_extraction(json.dumps([FACT])).facts) == 1


@pytest.mark.parametrize(
    "reply", ["I cannot help with that.", "", '{"facts": [', "<think>{}</think>"]
)
def test_no_json_object_is_an_extraction_error_that_keeps_the_window(reply: str) -> None:
    with pytest.raises(ExtractionError, match="stays queued"):
        parse_extraction(reply)


TEA = '{"content": "Likes tea", "category": "preference", "evidence": "tea", "confidence": %s}'


@pytest.mark.parametrize(
    ("reply", "why"),
    [
        ('{"facts": ' + "[" * 10_000 + "]" * 10_000 + "}", "nested too deeply"),
        ("[" * 10_000 + "]" * 10_000, "nested too deeply"),  # a bare list
        ('{"facts": [' + TEA % ("9" * 5000) + "]}", "integer of more than 4300 digits"),
    ],
)
def test_json_too_deep_or_with_a_huge_integer_is_an_extraction_error(reply: str, why: str) -> None:
    # Python's json raises RecursionError and ValueError for these: never let one escape.
    with pytest.raises(ExtractionError, match=why) as caught:
        parse_extraction(reply)
    assert "stays queued and will be retried" in str(caught.value)


def test_braces_and_quotes_inside_strings_do_not_confuse_the_scanner() -> None:
    fact = {**FACT, "content": 'Writes {"templates"} in Jinja }', "evidence": "{{ x }}"}
    result = parse_extraction("noise { not json } " + json.dumps({"facts": [fact]}))
    assert result.facts[0].content == 'Writes {"templates"} in Jinja }'


chatter = st.text(alphabet=st.characters(blacklist_characters="{}`<>"), max_size=40)
facts = st.lists(
    st.fixed_dictionaries(
        {
            # Text that is something once stored (text.quoting.stored_text).
            "content": st.text(min_size=1, max_size=30).filter(lambda s: stored_text(s).strip()),
            "category": st.sampled_from([c.value for c in Category]),
            "confidence": st.floats(0, 1),
            "evidence": st.text(max_size=30),
        }
    ),
    max_size=4,
)


@given(facts=facts, before=chatter, after=chatter, fenced=st.booleans())
def test_any_wrapped_reply_round_trips(
    facts: list[dict[str, object]], before: str, after: str, fenced: bool
) -> None:
    body = json.dumps({"facts": facts}, ensure_ascii=False)
    reply = f"{before}\n```json\n{body}\n```\n{after}" if fenced else f"{before} {body} {after}"
    parsed = parse_extraction(reply)
    assert [(f.content, f.category.value) for f in parsed.facts] == [
        (stored_text(str(f["content"])).strip(), f["category"]) for f in facts
    ]


@pytest.mark.parametrize(
    "contents",
    [
        ["Asked what </think> means"],  # the cut left '"}]}' and no object at all
        ["Uses </think> tags", "Writes Go"],  # the cut left the second fact, alone
        ["<think>x</think> as a literal"],
    ],
)
def test_thinking_tags_inside_a_fact_are_the_facts_text(contents: list[str]) -> None:
    # Found by the round trip above: a closer inside a JSON string is no end of thinking.
    body = json.dumps({"facts": [{**FACT, "content": c} for c in contents]})
    for reply in (body, f"<think>plan {{draft}}</think>\n{body}", f"plan</think> {body}"):
        assert [f.content for f in parse_extraction(reply).facts] == contents


def test_content_is_stripped_after_its_escapes_are_removed() -> None:
    # Found by the round trip above: the escape hid a carriage return from the first strip.
    fact = {**FACT, "content": "\x1b\r Writes Go "}
    assert parse_extraction(json.dumps({"facts": [fact]})).facts[0].content == "Writes Go"
