"""A fact's search keys (``Fact.questions``): checked once, read leniently from a model,
vetted like the fact's own text, screened for secrets, stored only when present, carried
by confirmations and dropped by an edit of the text they were about."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest
from pydantic import ValidationError
from recallmem.embedders import embed_matrix
from recallmem.errors import InvalidInputError, SecretRefusedError
from recallmem.extraction.filter import Utterance
from recallmem.extraction.hygiene import Context, make_plan
from recallmem.extraction.parser import ExtractionOutput, parse_extraction
from recallmem.extraction.scope_rules import load_scope_rules
from recallmem.extraction.search_keys import foreign_detail, vet_questions
from recallmem.extraction.write_plan import Add, Confirm, Plan, apply_plan
from recallmem.facts.fact_vectors import fact_vectors, vector_texts
from recallmem.facts.near_duplicates import confirm, enrich, merge_batch
from recallmem.facts.validation import edit_fact, new_fact
from recallmem.limits import MAX_QUESTION_CHARS, MAX_QUESTIONS, check_questions
from recallmem.secrets.detector import load_secret_rules, screen_fact
from recallmem.store.chroma.codec import decode, encode
from recallmem.testing import HashingEmbeddings
from recallmem.types import Fact

NOW = datetime(2026, 12, 1, tzinfo=UTC)
CAT = "Has a ginger cat named Biscuit"
KEYS = ("What is my cat called?", "我的猫叫什么名字？", "养了一只叫 Biscuit 的橘猫")


def fact(content: str = CAT, **extra: object) -> Fact:
    return Fact(content=content, category="identity", user_id="u", **extra)  # type: ignore[arg-type]


# -- the one rule ---------------------------------------------------------------------------


def test_questions_are_one_line_each_deduplicated_and_bounded() -> None:
    assert check_questions(None) == ()
    assert check_questions([" What is my\ncat called? ", "what is my cat called?", "猫叫什么"]) == (
        "What is my cat called?",
        "猫叫什么",
    )
    assert fact(questions=list(KEYS)).questions == KEYS


@pytest.mark.parametrize(
    ("value", "says"),
    [
        ("What is my cat called?", "must be a list"),
        (["  "], "non-blank"),
        ([7], "non-blank string"),
        (["x" * (MAX_QUESTION_CHARS + 1)], f"at most {MAX_QUESTION_CHARS}"),
        ([f"question {n}?" for n in range(MAX_QUESTIONS + 1)], f"at most {MAX_QUESTIONS}"),
    ],
)
def test_bad_questions_are_refused_with_the_reason(value: object, says: str) -> None:
    with pytest.raises(InvalidInputError, match=says):
        check_questions(value)
    with pytest.raises(ValidationError, match=says):
        fact(questions=value)


# -- written by a person or a program --------------------------------------------------------


def test_questions_given_with_a_fact_are_the_writers_and_none_leaves_it_to_the_keying() -> None:
    given = new_fact({"content": CAT, "category": "identity", "questions": list(KEYS)},
                     user_id="u", agent_id=None, thread_id=None, now=NOW)  # fmt: skip
    assert given.questions == KEYS and given.keyed_by == "given"
    for empty in (None, []):
        bare = new_fact({"content": CAT, "category": "identity", "questions": empty},
                        user_id="u", agent_id=None, thread_id=None, now=NOW)  # fmt: skip
        assert bare.questions == () and bare.keyed_by is None


def test_an_edit_of_the_text_drops_keys_unless_it_gives_new_ones() -> None:
    keyed = fact(questions=KEYS, keyed_by="keys@1 gpt-x")
    moved = edit_fact(keyed, now=NOW, content="Has a ginger cat named Pudding")
    assert moved.questions == () and moved.keyed_by is None  # the keying step keys it again
    assert edit_fact(keyed, now=NOW, pinned=True).questions == KEYS  # the text is the same
    renamed = edit_fact(keyed, now=NOW, content="Has a cat named Pudding", questions=["猫叫什么？"])
    assert renamed.questions == ("猫叫什么？",) and renamed.keyed_by == "given"
    cleared = edit_fact(keyed, now=NOW, questions=[])
    assert cleared.questions == () and cleared.keyed_by == "given"  # never keyed again


@pytest.mark.parametrize(
    "questions",
    [["What is my wifi password?", "密码是 hunter2-oak"], ["wifi", "password", "hunter2-oak"]],
)
def test_a_question_never_smuggles_a_secret(questions: list[str]) -> None:
    keyed = fact("Has a home wifi network", questions=questions)
    with pytest.raises(SecretRefusedError, match=r"questions\[\d\] holds a secret"):
        screen_fact(keyed, "refuse")
    assert "hunter2-oak" not in " ".join(screen_fact(keyed, "redact").questions)
    with pytest.raises(SecretRefusedError):
        edit_fact(fact(), now=NOW, questions=questions)


# -- written by a model ------------------------------------------------------------------------


def _vet(keys: list[object], content: str = CAT) -> tuple[tuple[str, ...], list[str]]:
    vetted = vet_questions(keys, content, load_secret_rules(), load_scope_rules())
    return vetted.kept, [r.reason for r in vetted.rejected]


def test_a_models_keys_say_nothing_their_fact_does_not() -> None:
    assert foreign_detail("Is Biscuit 3 years old?", CAT) == "3"
    assert foreign_detail("Does Ada feed Biscuit?", CAT) == "Ada"  # another fact's name
    assert foreign_detail("Which sensor does my ESP32 use?", "Building a plant waterer") == "ESP32"
    assert foreign_detail("How is Tom's health?", "Father-in-law Tom is in remission") is None
    assert foreign_detail("8月3日的航班？", "Flight to Lisbon on August 3") is None
    assert foreign_detail("Alarm at 8:15?", "早上闹钟定在8点15") is None
    assert foreign_detail("目标 HbA1c 是多少？", "医生说糖化血红蛋白要降到7以下") is None
    assert foreign_detail("What is my cat's name?", CAT) is None
    # A Chinese fact's names come back in pinyin; its numerals may come back as digits.
    assert foreign_detail("How old is Wang Jianguo?", "用户叫王建国，今年六十三岁") is None
    assert foreign_detail("Taught for over 30 years", "教了三十多年书") is None
    kept, reasons = _vet([*KEYS, "Does Ada feed Biscuit?"])
    assert kept == KEYS and reasons == ["names 'Ada', which the fact does not say"]


CHINESE = ["猫叫什么？", "我的猫", "橘猫的名字", "我养的宠物", "猫咪叫啥"]


def test_a_models_unusable_keys_are_set_aside_with_the_reason() -> None:
    kept, reasons = _vet(
        [CAT, "What is my cat called?", "what is my cat called ?", {"q": 1}, "x" * 201,
         "密码是 hunter2-oak", "Allows the assistant to delete files", *CHINESE]
    )  # fmt: skip
    assert kept == ("What is my cat called?", *CHINESE[:3])
    assert reasons[:4] == [
        "not a line of text",
        f"longer than {MAX_QUESTION_CHARS} characters; a key is one short line",
        "holds a secret; secrets are never stored",
        "a permission granted to the assistant, not a fact about the user",
    ]
    assert (
        reasons[4:] == [f"more than {MAX_QUESTIONS} keys; the first {MAX_QUESTIONS} are kept"] * 2
    )


def _reply(**extra: object) -> str:
    item = {"content": CAT, "category": "identity", "confidence": 0.95,
            "evidence": "my ginger cat Biscuit", **extra}  # fmt: skip
    return json.dumps({"facts": [item]}, ensure_ascii=False)


WINDOW = (Utterance(id="m1", role="user", content="my ginger cat Biscuit knocked over a vase"),)


def _plan(reply: str, neighbours: list[tuple[Fact, float]] | None = None) -> Plan:
    context = Context(user_id="u", window=WINDOW, extractor="gpt-x", prompt_version="extract@5")
    return make_plan(parse_extraction(reply), context, [neighbours or []], now=NOW)


def test_extraction_stores_the_vetted_keys_with_who_wrote_them() -> None:
    (add,) = _plan(_reply(questions=[*KEYS, "Does Ada feed Biscuit?"])).operations
    assert isinstance(add, Add) and add.fact.questions == KEYS
    assert add.fact.keyed_by == "extract@5 gpt-x"
    assert "Ada" in _plan(_reply(questions=["Does Ada feed Biscuit?"])).dropped[0].content
    bare = _plan(_reply()).operations[0]
    assert isinstance(bare, Add) and bare.fact.questions == () and bare.fact.keyed_by is None


def test_extraction_drops_a_fact_whose_keys_hold_a_secret() -> None:
    plan = _plan(_reply(questions=["What is my cat called?", "密码是 hunter2-oak"]))
    assert plan.operations == () and "secret" in plan.dropped[0].reason


def test_the_parser_reads_lines_and_caps_them() -> None:
    many = [f"question {n}?" for n in range(MAX_QUESTIONS + 2)]
    parsed = parse_extraction(_reply(questions=many))
    assert parsed.facts[0].questions == tuple(many[:MAX_QUESTIONS])
    assert len(parsed.rejected) == 2
    assert parse_extraction(_reply(questions="猫叫什么？\nWhat is my cat called?")).facts[
        0
    ].questions == ("猫叫什么？", "What is my cat called?")
    field = ExtractionOutput.model_json_schema()["$defs"]["CandidateFact"]["properties"]
    assert field["questions"]["maxItems"] == MAX_QUESTIONS


# -- confirmations, enrichment and vectors ------------------------------------------------------


def test_a_confirmation_keys_an_unkeyed_fact_only_with_keys_of_the_same_text() -> None:
    bare, keyed = fact(), fact(questions=KEYS, keyed_by="extract@5 gpt-x")
    assert confirm(bare, keyed, NOW).questions == KEYS
    assert confirm(keyed, fact(questions=["猫叫什么？"]), NOW).questions == KEYS
    assert confirm(bare, fact("Has a cat", questions=KEYS), NOW).questions == ()  # another text
    cleared = fact(keyed_by="given")  # a person cleared them: they stay cleared
    assert confirm(cleared, keyed, NOW).questions == ()
    fuller = fact(f"{CAT}, who is five", questions=["How old is my cat?"])
    assert enrich(keyed, fuller, NOW).questions == ("How old is my cat?",)
    assert enrich(keyed, fact(f"{CAT}, who is five"), NOW).questions == ()
    plan = Plan(user_id="u", at=NOW, operations=(Confirm(
        fact_id=bare.id, confidence=0.9, reason="said again", questions=KEYS, keyed_by="x"),))  # fmt: skip
    assert apply_plan(plan, {bare.id: bare})[0].questions == KEYS


def test_a_batch_writes_each_fact_with_the_vector_of_its_own_content_and_keys() -> None:
    stored = fact(questions=KEYS, keyed_by="given")
    again = fact(questions=["猫叫什么？"], keyed_by="given")  # same text, other keys
    fresh = fact("Drinks oolong tea", questions=["What tea do I drink?"], keyed_by="given")
    candidates = [again, fresh]
    vectors = fact_vectors(lambda texts: embed_matrix(HashingEmbeddings(), texts), candidates)
    merged = merge_batch(candidates, vectors, [[(stored, 0.99)], []], threshold=0.7, now=NOW)
    assert merged.results[0].id == stored.id and merged.results[0].questions == KEYS
    assert [f.id for f, _ in merged.embedded] == [fresh.id]  # the stored keys keep their vector
    assert [f.id for f in merged.records] == [stored.id]


# -- storage ---------------------------------------------------------------------------------------


def test_records_carry_keys_only_when_a_fact_has_some() -> None:
    bare, keyed = fact(), fact(questions=KEYS, keyed_by="given")
    record = json.loads(str(encode(bare)["record"]))
    assert "questions" not in record and "keyed_by" not in record  # as before the fields
    assert decode(keyed.id, None, encode(keyed)) == keyed
    assert vector_texts(keyed) == (CAT, *KEYS)
