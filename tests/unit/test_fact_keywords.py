"""A fact's search keywords: checked once, parsed leniently, screened for secrets, stored
only when present, and matched lexically beside the content."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import numpy as np
import pytest
from pydantic import ValidationError
from recallmem.errors import InvalidInputError, SecretRefusedError
from recallmem.extraction.filter import Utterance
from recallmem.extraction.hygiene import Context, make_plan
from recallmem.extraction.parser import ExtractionOutput, parse_extraction
from recallmem.extraction.write_plan import Add, Confirm, Plan, apply_plan
from recallmem.facts.near_duplicates import confirm, enrich
from recallmem.limits import MAX_KEYWORD_CHARS, MAX_KEYWORDS, check_keywords
from recallmem.retrieval.evidence import coverage
from recallmem.retrieval.lexical import LexicalIndex
from recallmem.retrieval.lexicon import default_lexicon
from recallmem.secrets.detector import screen_fact
from recallmem.store.chroma.codec import decode, encode
from recallmem.types import Fact

NOW = datetime(2026, 12, 1, tzinfo=UTC)
MACHINE = "Bought a Breville espresso maker last week; it drips water"


def fact(content: str = MACHINE, **extra: object) -> Fact:
    return Fact(content=content, category="context", user_id="u", **extra)  # type: ignore[arg-type]


# -- the one rule ---------------------------------------------------------------------------


def test_keywords_are_stripped_deduplicated_and_bounded() -> None:
    assert check_keywords(None) == ()
    assert check_keywords([" 咖啡机 ", "漏水", "咖啡机", "Coffee  machine", "coffee machine"]) == (
        "咖啡机",
        "漏水",
        "Coffee machine",
    )
    assert fact(keywords=["咖啡机", "漏水"]).keywords == ("咖啡机", "漏水")
    assert fact().keywords == ()


@pytest.mark.parametrize(
    ("value", "says"),
    [
        ("咖啡机", "must be a list"),
        (["咖啡机", "  "], "non-blank"),
        ([42], "non-blank string"),
        (["x" * (MAX_KEYWORD_CHARS + 1)], f"at most {MAX_KEYWORD_CHARS}"),
        ([f"w{n}" for n in range(MAX_KEYWORDS + 1)], f"at most {MAX_KEYWORDS}"),
    ],
)
def test_bad_keywords_are_refused_with_the_reason(value: object, says: str) -> None:
    with pytest.raises(InvalidInputError, match=says):
        check_keywords(value)
    with pytest.raises(ValidationError, match=says):
        fact(keywords=value)


# -- the extractor's reply --------------------------------------------------------------------


def _reply(**extra: object) -> str:
    item = {"content": MACHINE, "category": "context", "confidence": 0.9, **extra}
    return json.dumps({"facts": [item]}, ensure_ascii=False)


def test_the_parser_reads_keywords_and_accepts_their_absence() -> None:
    assert parse_extraction(_reply()).facts[0].keywords == ()
    assert parse_extraction(_reply(keywords=None)).facts[0].keywords == ()
    parsed = parse_extraction(_reply(keywords=["咖啡机", " 漏水 ", "咖啡机"]))
    assert parsed.facts[0].keywords == ("咖啡机", "漏水") and not parsed.rejected
    # One string, as some models write a list, in either language's punctuation.
    assert parse_extraction(_reply(keywords="咖啡机，漏水、espresso")).facts[0].keywords == (
        "咖啡机",
        "漏水",
        "espresso",
    )


def test_unusable_keywords_are_set_aside_and_the_fact_is_kept() -> None:
    long_one = "每周五上午都要留出整整两个小时的时间来仔细审查同事们提交的所有拉取请求和代码改动"
    many = [f"词{n}" for n in range(MAX_KEYWORDS + 2)]
    parsed = parse_extraction(_reply(keywords=["咖啡机", {"word": "x"}, long_one, "", True]))
    assert parsed.facts[0].content == MACHINE and parsed.facts[0].keywords == ("咖啡机",)
    reasons = [r.reason for r in parsed.rejected]
    assert reasons == ["not a word", f"longer than {MAX_KEYWORD_CHARS} characters; a keyword "
                       "is a word or two", "not a word"]  # fmt: skip
    capped = parse_extraction(_reply(keywords=many))
    assert capped.facts[0].keywords == tuple(many[:MAX_KEYWORDS])
    assert [r.item for r in capped.rejected] == [f"keyword {w}" for w in many[MAX_KEYWORDS:]]


def test_the_structured_output_schema_offers_keywords() -> None:
    schema = ExtractionOutput.model_json_schema()
    field = schema["$defs"]["CandidateFact"]["properties"]["keywords"]
    assert field["maxItems"] == MAX_KEYWORDS and field["items"]["type"] == "string"
    assert "keywords" not in schema["$defs"]["CandidateFact"].get("required", [])


# -- secrets ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "keywords",
    [
        ["wifi", "AKIAZ3XQ7RMP2KD9WLTB"],  # a key by its shape
        ["card", "4111 1111 1111 1111"],  # a number by its checksum
        ["密码是 hunter2-oak"],  # a labelled value in one keyword
        ["wifi", "password", "hunter2-oak"],  # the label and its value in two keywords
    ],
)
def test_a_keyword_never_smuggles_a_secret(keywords: list[str]) -> None:
    tagged = fact("Has a home wifi network", keywords=keywords)
    with pytest.raises(SecretRefusedError, match=r"keywords\[\d\] holds a secret"):
        screen_fact(tagged, "refuse")
    kept = screen_fact(tagged, "redact").keywords
    assert len(kept) == len(keywords) - 1 and "hunter2-oak" not in " ".join(kept)


def test_clean_keywords_pass_the_screen_untouched() -> None:
    tagged = fact(keywords=["咖啡机", "漏水", "password manager"])
    assert screen_fact(tagged, "refuse") is tagged


WINDOW = (Utterance(id="m1", role="user", content="Our wifi is OakHouse, password [REDACTED]"),)


def _plan(**extra: object) -> Plan:
    result = parse_extraction(_reply(evidence="Our wifi is OakHouse", **extra).replace(
        MACHINE, "The home wifi network is called OakHouse"))  # fmt: skip
    context = Context(user_id="u", window=WINDOW)
    return make_plan(result, context, [[]], now=NOW)


def test_extraction_drops_a_fact_whose_keywords_hold_a_secret() -> None:
    assert _plan(keywords=["家里 wifi", "密码", "hunter2-oak"]).operations == ()
    assert "secret" in _plan(keywords=["密码", "hunter2-oak"]).dropped[0].reason
    assert _plan(keywords=["[REDACTED]"]).operations == ()  # naming a redacted secret
    (add,) = _plan(keywords=["家里 wifi", "OakHouse"]).operations
    assert isinstance(add, Add) and add.fact.keywords == ("家里 wifi", "OakHouse")


# -- confirming and enriching -----------------------------------------------------------------


def test_a_confirmation_fills_in_keywords_and_a_fuller_text_brings_its_own() -> None:
    bare, tagged = fact(), fact(keywords=["咖啡机"])
    assert confirm(bare, tagged, NOW).keywords == ("咖啡机",)
    assert confirm(tagged, fact(keywords=["漏水"]), NOW).keywords == ("咖啡机",)
    fuller = fact(f"{MACHINE} onto the counter", keywords=["咖啡机", "漏水"])
    assert enrich(tagged, fuller, NOW).keywords == ("咖啡机", "漏水")
    assert enrich(tagged, fact(f"{MACHINE} again"), NOW).keywords == ("咖啡机",)
    plan = Plan(user_id="u", at=NOW, operations=(
        Confirm(fact_id=bare.id, confidence=0.9, reason="said again", keywords=("漏水",)),))  # fmt: skip
    assert apply_plan(plan, {bare.id: bare})[0].keywords == ("漏水",)


# -- storage ----------------------------------------------------------------------------------


def test_records_carry_keywords_only_when_a_fact_has_some() -> None:
    bare, tagged = fact(), fact(keywords=["咖啡机", "漏水"])
    assert "keywords" not in json.loads(str(encode(bare)["record"]))  # as before the field
    assert decode(bare.id, None, encode(bare)) == bare
    assert decode(tagged.id, None, encode(tagged)).keywords == ("咖啡机", "漏水")


def test_a_record_written_before_keywords_existed_decodes_without_any() -> None:
    old = json.loads(fact().model_dump_json(exclude={"keywords"}))
    schema_1 = {key: value for key, value in old.items() if key != "content"}
    decoded = decode("f1", MACHINE, {"user_id": "u", "record": json.dumps(schema_1)})
    assert decoded.keywords == () and decoded.content == MACHINE


# -- the lexical index ------------------------------------------------------------------------


FACTS = [MACHINE, "喜欢喝美式咖啡，不加糖", "The washing machine makes a loud noise"]
KEYWORDS = [("咖啡机", "漏水"), (), ()]


def test_keywords_are_direct_matches_for_the_evidence() -> None:
    plain = coverage(LexicalIndex(FACTS), "咖啡机漏水", default_lexicon())
    tagged = coverage(LexicalIndex(FACTS, keywords=KEYWORDS), "咖啡机漏水", default_lexicon())
    assert plain[0] < 0.5 and tagged[0] == pytest.approx(1.0)
    assert tagged[1:] == pytest.approx(plain[1:])  # other facts' evidence is unchanged
    english = coverage(LexicalIndex(["用户对青霉素过敏"], keywords=[("penicillin", "allergy")]),
                       "penicillin allergy", None)  # fmt: skip
    assert english[0] == pytest.approx(1.0)  # without a dictionary: the keywords alone match
    assert coverage(LexicalIndex(["用户对青霉素过敏"]), "penicillin allergy", None)[0] == 0


def test_keywords_neither_join_each_other_nor_lengthen_the_fact() -> None:
    index = LexicalIndex(["Owns a kettle"], keywords=[("咖啡", "机器")])
    assert not index.rows_with(["啡机"])[0]  # no bigram across two keywords
    assert index.length_norm(1.0) == pytest.approx(LexicalIndex(["Owns a kettle"]).length_norm(1.0))
    # A keyword repeating the text changes no score.
    same = LexicalIndex(FACTS, keywords=[("espresso", "water"), (), ()]).scores("espresso water")
    assert np.allclose(same, LexicalIndex(FACTS).scores("espresso water"))
