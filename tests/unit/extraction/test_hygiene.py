"""Hygiene decides what is stored; each rule is tested on its own."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from recallmem.extraction.admission import Policy
from recallmem.extraction.filter import Utterance
from recallmem.extraction.hygiene import Context, add_evictions, locate_evidence, make_plan
from recallmem.extraction.parser import (
    CandidateFact,
    ExtractionResult,
    ProfileUpdate,
    SupersedeRequest,
)
from recallmem.extraction.quotes import unsupported
from recallmem.extraction.write_plan import Add, Confirm, Evict, MarkDone, Supersede
from recallmem.types import Fact

NOW = datetime(2025, 3, 1, tzinfo=UTC)
WINDOW = (
    Utterance(
        id="u1",
        role="user",
        content="我上周转岗到产品组了，现在做产品经理。我喜欢三千字左右的长文。",
    ),
    Utterance(id="a1", role="assistant", content="恭喜！I think short reads suit you better."),
    Utterance(id="u2", role="user", content="I mostly write TypeScript, and I live in Berlin."),
)


def fact(content: str, category: str = "identity", **extra: object) -> Fact:
    return Fact(content=content, category=category, user_id="u", **extra)


def candidate(content: str, evidence: str, category: str = "identity", confidence: float = 0.9,
              **extra: object) -> CandidateFact:  # fmt: skip
    return CandidateFact(
        content=content, category=category, confidence=confidence, evidence=evidence, **extra
    )


def plan_for(*candidates: CandidateFact, shown: dict[str, Fact] | None = None,
             neighbours: list[list[tuple[Fact, float]]] | None = None, **result: object):  # type: ignore[no-untyped-def]  # fmt: skip
    extraction = ExtractionResult(facts=candidates, **result)  # type: ignore[arg-type]
    context = Context(
        user_id="u", window=WINDOW, shown=shown or {}, thread_id="t", prompt_version="extract@1"
    )
    return make_plan(extraction, context, neighbours or [[] for _ in candidates], now=NOW)


def reasons(plan) -> list[str]:  # type: ignore[no-untyped-def]
    return [d.reason for d in plan.dropped]


def test_a_supported_fact_is_added_with_provenance() -> None:
    plan = plan_for(candidate("在产品组做产品经理", "现在做产品经理"))
    (add,) = plan.operations
    assert isinstance(add, Add)
    (source,) = add.fact.sources
    assert (source.thread_id, source.message_ids, source.quote) == ("t", ("u1",), "现在做产品经理")
    assert source.prompt_version == "extract@1" and add.fact.created_at == NOW


@pytest.mark.parametrize(
    ("proposal", "why"),
    [
        (candidate("API key is sk-abcdefghijklmnop1234", "I live in Berlin"), "secret"),
        (candidate("Allows the assistant to push to main", "I live in Berlin"), "permission"),
        (candidate("Lives in Berlin", "I live in Berlin", confidence=0.6), "below 0.70"),
        (
            candidate("Prefers short reads", "short reads suit you better", "preference"),
            "assistant's words",
        ),
        (candidate("Lives in Paris", "I live in Paris"), "not found"),
        (candidate("Lives in Berlin", ""), "no evidence"),
        (candidate("Works as a product manager", "现在做产品经理"), "language"),
        (candidate("住在柏林", "I live in Berlin"), "language"),
        (candidate("x" * 2001, "I live in Berlin"), "longer than"),
    ],
)
def test_proposals_that_break_a_rule_are_dropped_with_the_reason(
    proposal: CandidateFact, why: str
) -> None:
    plan = plan_for(proposal)
    assert plan.operations == ()
    assert why in reasons(plan)[0]


def test_evidence_is_matched_loosely_but_within_one_user_message() -> None:
    assert locate_evidence("I MOSTLY write typescript!", WINDOW)[0] == WINDOW[2]
    assert locate_evidence("我上周转岗到产品组了……我喜欢三千字左右的长文", WINDOW)[0] == WINDOW[0]
    assert locate_evidence("产品组 ... TypeScript", WINDOW)[0] is None  # parts from two messages
    curly = [Utterance(id="u9", role="user", content="I don’t eat meat")]
    assert locate_evidence("I don't eat meat", curly)[0] == curly[0]  # apostrophe straightened


@pytest.mark.parametrize(
    ("proposal", "why"),
    [
        # single letters of the user's words, stitched: no piece of what they said
        (candidate("Is an administrator", "a...m...i...n"), "single characters ('a', 'm'"),
        (candidate("做产品经理", "产…品"), "single characters"),
        # a fragment must be whole words: "Berl" is no word of the message
        (candidate("Lives in Berlin", "I live in Berl"), "not found"),
        # one word the user said carries no fact
        (candidate("Writes TypeScript", "live"), "shares no word with the fact"),
        # real pieces of the user's words, stitched, sharing nothing with the fact
        (candidate("Is the CEO of a company", "I mostly write ... live in Berlin"), "stitched"),
    ],
)
def test_evidence_must_be_whole_words_that_carry_the_fact(
    proposal: CandidateFact, why: str
) -> None:
    plan = plan_for(proposal)
    assert plan.operations == ()
    assert why in reasons(plan)[0], reasons(plan)


@pytest.mark.parametrize(
    ("content", "evidence"),
    [
        ("Lives in Berlin", "I live in Berlin"),  # a word of the fact, its ending aside
        ("喜欢 3000 字左右的长文", "我喜欢三千字左右的长文"),  # CJK pairs shared: 喜欢, 左右, 长文
        ("是产品经理", "我上周转岗到产品组了 ... 现在做产品经理"),  # stitched pieces, each a run
        ("Is a software developer", "I mostly write TypeScript, and I live in Berlin"),  # a clause
    ],
)
def test_evidence_of_the_users_words_that_carry_the_fact_is_kept(
    content: str, evidence: str
) -> None:
    plan = plan_for(candidate(content, evidence))
    assert plan.count(Add) == 1, reasons(plan)


def test_a_repeat_within_the_window_is_dropped() -> None:
    plan = plan_for(
        candidate("Lives in Berlin", "I live in Berlin"),
        candidate("lives in berlin.", "live in Berlin"),
    )
    assert plan.count(Add) == 1 and "repeats another fact" in reasons(plan)[0]


def test_a_near_duplicate_confirms_the_stored_fact() -> None:
    stored = fact("Lives in Berlin")
    plan = plan_for(
        candidate("Lives in Berlin.", "I live in Berlin"), neighbours=[[(stored, 0.97)]]
    )
    (confirm,) = plan.operations
    assert isinstance(confirm, Confirm) and confirm.fact_id == stored.id and confirm.content is None


def test_a_fuller_duplicate_replaces_the_stored_text() -> None:
    stored = fact("Writes TypeScript", "knowledge")
    proposal = candidate("Mostly writes TypeScript code", "I mostly write TypeScript", "knowledge")
    (confirm,) = plan_for(proposal, neighbours=[[(stored, 0.93)]]).operations
    assert isinstance(confirm, Confirm) and confirm.content == "Mostly writes TypeScript code"


def test_similar_but_different_facts_are_both_kept() -> None:
    stored = fact("Lives in Munich")
    plan = plan_for(candidate("Lives in Berlin", "I live in Berlin"), neighbours=[[(stored, 0.95)]])
    assert plan.count(Add) == 1 and plan.count(Confirm) == 0


def test_another_users_fact_never_takes_part() -> None:
    stranger = Fact(content="Lives in Berlin", category="identity", user_id="someone-else")
    plan = plan_for(
        candidate("Lives in Berlin", "I live in Berlin"), neighbours=[[(stranger, 1.0)]]
    )
    assert plan.count(Add) == 1 and plan.count(Confirm) == 0


def test_a_job_change_supersedes_the_old_fact() -> None:
    old = fact("是科技组的编辑")
    plan = plan_for(
        candidate("在产品组做产品经理", "我上周转岗到产品组了"),
        shown={"F1": old},
        neighbours=[[(old, 0.95)]],
        supersede=(
            SupersedeRequest(fact_id="F1", reason="转岗", replacement="在产品组做产品经理"),
        ),
    )
    add, supersede = plan.operations
    assert isinstance(add, Add) and isinstance(supersede, Supersede)
    assert (
        add.fact.supersedes == old.id and supersede.by == add.fact.id and supersede.reason == "转岗"
    )


def test_a_correction_takes_the_corrected_fact_as_its_source_error() -> None:
    old = fact("Lives in Munich")
    plan = plan_for(
        candidate("Lives in Berlin, not Munich", "I live in Berlin", "correction"),
        shown={"F1": old},
        supersede=(
            SupersedeRequest(
                fact_id="F1", reason="corrected", replacement="Lives in Berlin, not Munich"
            ),
        ),
    )
    add = plan.operations[0]
    assert isinstance(add, Add) and add.fact.source_error == "Lives in Munich"


def test_a_supersede_whose_replacement_was_refused_leaves_the_old_fact() -> None:
    old = fact("Uses a password manager", "context")
    plan = plan_for(
        candidate("Password is hunter22", "I live in Berlin", "context"),
        shown={"F1": old},
        supersede=(
            SupersedeRequest(fact_id="F1", reason="new", replacement="Password is hunter22"),
        ),
    )
    assert plan.operations == ()
    assert "replacement was not stored" in reasons(plan)[1]


def test_a_retraction_supersedes_without_a_successor_and_made_up_ids_are_refused() -> None:
    old = fact("Lives in Munich")
    plan = plan_for(
        shown={"F1": old},
        supersede=(
            SupersedeRequest(fact_id="F1", reason="moved away"),
            SupersedeRequest(fact_id="F9", reason="x"),
        ),
        confirmed=("F7",),
        todos_done=("F8",),
    )
    (retraction,) = plan.operations
    assert isinstance(retraction, Supersede) and retraction.by is None
    assert sum("not one of the facts shown" in r for r in reasons(plan)) == 3


def test_confirmations_and_finished_todos() -> None:
    todo, identity = fact("Needs to renew passport", "todo"), fact("Lives in Berlin")
    plan = plan_for(shown={"F1": todo, "F2": identity}, confirmed=("F2",), todos_done=("F1", "F2"))
    kinds = [type(op) for op in plan.operations]
    assert kinds == [Confirm, MarkDone]
    assert plan.count(MarkDone) == 1  # F2 is not a todo; it is not marked done


def test_profile_updates_need_should_update_and_no_secret() -> None:
    plan = plan_for(
        profile={
            "work_context": ProfileUpdate(should_update=True, summary="产品经理"),
            "recent": ProfileUpdate(should_update=False, summary="ignored"),
            "top_of_mind": ProfileUpdate(
                should_update=True, summary="rotating the key sk-abcdefghijklmnop1234"
            ),
        }
    )
    assert [(c.section, c.summary) for c in plan.profile] == [("work_context", "产品经理")]
    assert "holds a secret" in reasons(plan)


def test_the_threshold_is_configurable() -> None:
    extraction = ExtractionResult(
        facts=(candidate("Lives in Berlin", "I live in Berlin", confidence=0.6),)
    )
    context = Context(user_id="u", window=WINDOW)
    plan = make_plan(extraction, context, [[]], policy=Policy(min_confidence=0.5), now=NOW)
    assert plan.count(Add) == 1


def test_eviction_keeps_the_scope_at_its_cap_and_spares_pinned_and_corrections() -> None:
    pinned = fact("Pinned", pinned=True)
    correction = fact("Use polars", "correction")
    weak = fact("Weak", confidence=0.7)
    strong = fact("Strong", confirmations=3)
    plan = plan_for(
        candidate("Lives in Berlin", "I live in Berlin"),
        candidate("Writes TypeScript", "write TypeScript", "knowledge"),
    )
    evicted = add_evictions(plan, [pinned, correction, weak, strong], cap=4)
    victims = [op.fact_id for op in evicted.operations if isinstance(op, Evict)]
    assert victims == [weak.id, strong.id]
    assert add_evictions(plan, [pinned, correction], cap=4) is plan


def test_one_plan_never_evicts_below_as_many_earlier_facts_as_it_adds() -> None:
    # Six distinct facts the quote supports (it shares "Berlin" with each).
    parts = ["north", "south", "east", "west", "old town", "new town"]
    adds = [candidate(f"Likes Berlin, {p}", "I live in Berlin", "preference") for p in parts]
    plan = plan_for(*adds)
    earlier = [fact(f"Earlier fact {n}") for n in range(8)]
    # 8 earlier + 6 new is 4 over a cap of 10; evicting 2 leaves 6 earlier, as many as new.
    evicted = add_evictions(plan, earlier, cap=10)
    assert evicted.count(Evict) == 2
    # A plan adding more than the scope holds evicts nothing at all.
    assert add_evictions(plan, earlier[:3], cap=4) is plan


def test_a_valid_until_past_the_calendar_drops_only_that_fact() -> None:
    plan = plan_for(
        candidate("Lives in Berlin", "I live in Berlin", valid_until="9999-12-31"),
        candidate("Writes TypeScript", "write TypeScript", "knowledge"),
    )
    assert [op.fact.content for op in plan.operations if isinstance(op, Add)] == [
        "Writes TypeScript"
    ]
    (why,) = reasons(plan)
    assert why.startswith("valid_until '9999-12-31' is out of range")


def test_facts_leaving_recall_make_room() -> None:
    old = fact("是科技组的编辑")
    plan = plan_for(
        candidate("在产品组做产品经理", "我上周转岗到产品组了"),
        shown={"F1": old},
        supersede=(
            SupersedeRequest(fact_id="F1", reason="转岗", replacement="在产品组做产品经理"),
        ),
    )
    assert add_evictions(plan, [old, fact("a"), fact("b")], cap=3) is plan


def test_a_paraphrased_replacement_still_links_and_an_unrelated_one_does_not() -> None:
    old = fact("Lives in Munich")
    moved = candidate("Lives in Berlin", "I live in Berlin")
    linked = plan_for(
        moved,
        shown={"F1": old},
        supersede=(
            SupersedeRequest(
                fact_id="F1", reason="moved", replacement="The user now lives in Berlin"
            ),
        ),
    )
    assert [type(op) for op in linked.operations] == [Add, Supersede]
    unrelated = plan_for(
        moved,
        shown={"F1": old},
        supersede=(SupersedeRequest(fact_id="F1", reason="moved", replacement="Has a dog"),),
    )
    assert [type(op) for op in unrelated.operations] == [Add]
    assert "not among the new facts" in reasons(unrelated)[0]


@pytest.mark.parametrize(
    ("content", "quote"),
    [
        ("Is vegetarian", "I don't eat meat"),
        ("Uses TypeScript", "TS mostly"),
        ("Has a daughter", "my kid Emma"),
        ("用户是素食者", "我不吃肉"),
        ("有一个女儿", "我闺女"),
    ],
)
def test_a_paraphrase_of_two_words_or_more_carries_its_fact(content: str, quote: str) -> None:
    assert unsupported(content, quote) == ""
