"""Every shipped prompt file loads through its strict model and renders."""

from __future__ import annotations

from collections.abc import Callable
from datetime import date
from importlib import resources
from pathlib import Path
from typing import Any

import pytest
import yaml
from recallmem.agent.tools import format_hits
from recallmem.errors import PromptError
from recallmem.extraction.filter import filter_messages, load_filter_rules
from recallmem.extraction.scope_rules import load_scope_rules
from recallmem.prompts import load_data, load_prompt, load_tool_texts, shipped_prompt_names
from recallmem.retrieval.block_spec import load_memory_block_spec
from recallmem.retrieval.injection import build_block
from recallmem.retrieval.time_words import TimeWords, TimeWordsSpec
from recallmem.secrets.detector import find_secret, load_secret_rules
from recallmem.signals.detector import SignalKind, load_signals
from recallmem.signals.prototypes import load_prototype_stage
from recallmem.text.words import FunctionWordsSpec, content_units
from recallmem.types import Fact, Profile, ProfileSection, ScoredFact, ScoreParts


def _render_extract() -> None:
    spec = load_prompt("extract")
    messages = spec.render(**{name: f"<{name}>" for name in spec.variables})
    assert messages[0][0] == "system"
    rendered = "\n".join(text for _, text in messages)
    for name in spec.variables:
        assert f"<{name}>" in rendered
    spec.to_chat_prompt().invoke(dict.fromkeys(spec.variables, "x"))


def _render_memory_block() -> None:
    fact = Fact(content="Prefers reports in Chinese", category="preference", user_id="u")
    fix = Fact(content="Use pnpm", category="correction", user_id="u", source_error="npm")
    block = build_block(
        Profile(user_id="u", work_context=ProfileSection(summary="Front-end team")),
        [fix],
        [ScoredFact(fact=fact, score=0.9, parts=ScoreParts())],
        today=date(2026, 11, 30),
        max_tokens=500,
        spec=load_memory_block_spec(),
    )
    for text in (
        "Front-end team",
        "Use pnpm",
        "avoid: npm",
        "Prefers reports in Chinese",
        "2026-11-30",
    ):
        assert text in block.text


def _tools() -> None:
    texts = load_tool_texts()
    assert set(texts.tools) == {"recall", "remember", "forget", "list"}
    fact = Fact(content="Prefers reports in Chinese", category="preference", user_id="u")
    hit = ScoredFact(fact=fact, score=0.9, parts=ScoreParts())
    assert "report language" in format_hits([], "report language", texts)
    assert "Prefers reports in Chinese" in format_hits([hit], "report language", texts)


def _signals() -> None:
    signals = load_signals()
    assert signals.detect("recall_cue", "按上次那个方案来") is not None
    assert signals.detect("recall_cue", "Write a quicksort in Rust") is None


def _prototypes() -> None:
    stage = load_prototype_stage()
    assert set(stage.spec.detectors) <= {kind.value for kind in SignalKind}


def _filter() -> None:
    kept = filter_messages(
        [{"role": "user", "content": "I use Vim"}, {"role": "assistant", "content": "ok"}],
        load_filter_rules(),
    )
    assert [(u.role, u.content) for u in kept] == [("user", "I use Vim")]


def _secrets() -> None:
    rules = load_secret_rules()
    assert find_secret("my key is AKIAIOSFODNN7EXAMPLE", rules) is not None
    assert find_secret("I use Vim", rules) is None


def _scope_rules() -> None:
    rules = load_scope_rules()
    assert rules.violation("Prefers reports in Chinese") is None
    assert "permission" in (rules.violation("The assistant may deploy without asking") or "")


def _time_words() -> None:
    words = TimeWords.compile(load_data("time_words", TimeWordsSpec))
    assert words.month_of["october"] == words.month_of["oct"] == 10
    assert words.in_month.search("camping in june") is not None
    assert [r.unit for r in words.relative if r.pattern.search("上个月")] == ["month"]


def _function_words() -> None:
    spec = load_data("function_words", FunctionWordsSpec)
    assert {"the", "on", "的"} <= spec.stopwords.all() and "no" in spec.negations.all()
    assert content_units("The user is on the team") == {"team"}


def _consolidate() -> None:
    spec = load_prompt("consolidate")
    assert "<groups>" in spec.render(groups="<groups>")[-1][1]


def _consolidation_words() -> None:
    from recallmem.lifecycle.merge_rules import key_terms

    assert key_terms("Likes tea") == {"tea"}


def _keys() -> None:
    spec = load_prompt("keys")
    assert "<facts>" in spec.render(facts="[F1] (identity) Has a cat")[-1][1]


def _change_words() -> None:
    from recallmem.retrieval.newer_first import states_change

    assert states_change("Switched to day shifts") and not states_change("Has a cat")


LOADERS: dict[str, Callable[[], object]] = {
    "extract": _render_extract,
    "memory_block": _render_memory_block,
    "tools": _tools,
    "signals": _signals,
    "signals_prototypes": _prototypes,
    "filter": _filter,
    "secrets": _secrets,
    "scope_rules": _scope_rules,
    "time_words": _time_words,
    "function_words": _function_words,
    "consolidate": _consolidate,
    "consolidation_words": _consolidation_words,
    "keys": _keys,
    "change_words": _change_words,
}


def test_every_shipped_prompt_has_a_loader_here() -> None:
    assert set(shipped_prompt_names()) == set(LOADERS)


@pytest.mark.parametrize("name", sorted(LOADERS))
def test_prompt_loads_and_renders(name: str) -> None:
    LOADERS[name]()


def test_override_directory_wins(tmp_path: Path) -> None:
    tools = _shipped("tools") | {"version": "9"}
    (tmp_path / "tools.yaml").write_text(yaml.safe_dump(tools), encoding="utf-8")
    assert load_tool_texts(tmp_path).version == "9"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            "name: x\nversion: '1'\nvariables: [a]\nmessages: [{role: human, content: 'hi {b}'}]\n",
            "not declared",
        ),
        (
            "name: x\nversion: '1'\nvariables: [a, c]\nmessages: [{role: human, content: 'hi {a}'}]\n",
            "never used",
        ),
        ("name: x\nversion: '1'\nvariables: []\nmessages: []\nsurprise: 1\n", "Extra inputs"),
        ("name: [unclosed\n", "not valid YAML"),
    ],
)
def test_malformed_prompts_fail_at_load(tmp_path: Path, text: str, message: str) -> None:
    (tmp_path / "custom.yaml").write_text(text, encoding="utf-8")
    with pytest.raises(PromptError, match=message):
        load_prompt("custom", tmp_path)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"recall_hit": None}, r"responses\.recall_hit\n  Field required"),
        ({"recall_emtpy": "x"}, r"responses\.recall_emtpy\n  Extra inputs"),
        ({"recall_empty": "none for {who}"}, "recall_empty uses unknown placeholders"),
        ({"recall_hit": "{n}. {fact}"}, "recall_hit uses unknown placeholders"),
    ],
)
def test_tool_responses_are_checked_when_they_load(
    tmp_path: Path, change: dict[str, str | None], message: str
) -> None:
    tools = _shipped("tools")
    responses = {k: v for k, v in (tools["responses"] | change).items() if v is not None}
    tools["responses"] = responses
    (tmp_path / "tools.yaml").write_text(yaml.safe_dump(tools), encoding="utf-8")
    with pytest.raises(PromptError, match=message):
        load_tool_texts(tmp_path)


def _shipped(name: str) -> dict[str, Any]:
    text = resources.files("recallmem._prompts").joinpath(f"{name}.yaml").read_text("utf-8")
    data: dict[str, Any] = yaml.safe_load(text)
    return data


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("stopwords", {"en": ["the", "a", "the"], "zh": ["的"]}, r"listed twice: \['the'\]"),
        ("stopwords", {"en": ["as well"], "zh": ["的"]}, "'as well' is not one unit"),
        ("stopwords", {"en": ["The"], "zh": ["的"]}, "'The' is not one unit"),
        ("negations", {"en": ["not"], "zh": ["没有"]}, "'没有' is not one unit"),
        ("negations", {"en": [False], "zh": ["不"]}, "valid string"),  # YAML's unquoted no
    ],
)
def test_function_words_are_checked_when_they_load(
    tmp_path: Path, field: str, value: object, message: str
) -> None:
    data = _shipped("function_words") | {field: value}
    (tmp_path / "function_words.yaml").write_text(yaml.safe_dump(data), encoding="utf-8")
    with pytest.raises(PromptError, match=message):
        load_data("function_words", FunctionWordsSpec, tmp_path)


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("months", [["january"]] * 11, "at least 12 items"),
        ("months", [["may"], *[[f"m{n}"] for n in range(10)], ["may"]], r"listed twice: \['may'\]"),
        ("before_a_year", ["In"], "must be one lower-case word"),
        ("relative", [{"unit": "day", "offset": -1, "patterns": ["(yesterday"]}], "does not compile"),
        ("relative", [{"unit": "fortnight", "offset": -1, "patterns": ["x"]}], "unit"),
    ],
)  # fmt: skip
def test_time_words_are_checked_when_they_load(
    tmp_path: Path, field: str, value: object, message: str
) -> None:
    data = _shipped("time_words") | {field: value}
    (tmp_path / "time_words.yaml").write_text(yaml.safe_dump(data), encoding="utf-8")
    with pytest.raises(PromptError, match=message):
        load_data("time_words", TimeWordsSpec, tmp_path)
