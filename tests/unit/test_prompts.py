"""Every shipped prompt file loads through its strict model and renders."""

from __future__ import annotations

from collections.abc import Callable
from datetime import date
from pathlib import Path

import pytest
from recallmem.agent.tools import format_hits
from recallmem.errors import PromptError
from recallmem.extraction.filter import filter_messages, load_filter_rules
from recallmem.extraction.scope_rules import load_scope_rules
from recallmem.prompts import load_prompt, load_tool_texts, shipped_prompt_names
from recallmem.retrieval.injection import build_block, load_memory_block_spec
from recallmem.secrets import find_secret, load_secret_rules
from recallmem.signal_prototypes import load_prototype_stage
from recallmem.signals import SignalKind, load_signals
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
    assert set(texts.tools) == {"recall", "remember"}
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


def _consolidate() -> None:
    spec = load_prompt("consolidate")
    assert "<groups>" in spec.render(groups="<groups>")[-1][1]


def _consolidation_words() -> None:
    from recallmem.lifecycle.merge_rules import key_terms

    assert key_terms("Likes tea") == {"tea"}


LOADERS: dict[str, Callable[[], object]] = {
    "extract": _render_extract,
    "memory_block": _render_memory_block,
    "tools": _tools,
    "signals": _signals,
    "signals_prototypes": _prototypes,
    "filter": _filter,
    "secrets": _secrets,
    "scope_rules": _scope_rules,
    "consolidate": _consolidate,
    "consolidation_words": _consolidation_words,
}


def test_every_shipped_prompt_has_a_loader_here() -> None:
    assert set(shipped_prompt_names()) == set(LOADERS)


@pytest.mark.parametrize("name", sorted(LOADERS))
def test_prompt_loads_and_renders(name: str) -> None:
    LOADERS[name]()


def test_override_directory_wins(tmp_path: Path) -> None:
    (tmp_path / "tools.yaml").write_text(
        "name: tools\nversion: '9'\ntools:\n  recall:\n    description: Look things up in memory, always.\n"
        "    args: {query: q}\nresponses: {recall_header: h, recall_empty: 'none for {query}',"
        " remembered: '{content}', confirmed: '{content} [{category}]',"
        " error: '{problem} {next_step}'}\n",
        encoding="utf-8",
    )
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
    ("responses", "message"),
    [
        ("{recall_header: h}", "lacks"),
        ("{recall_header: h, recall_empty: '{query}', remembered: '{content}', confirmed: c, "
         "error: '{problem}', recall_emtpy: x}", "unknown responses"),
        ("{recall_header: h, recall_empty: '{who}', remembered: r, confirmed: c, error: e}",
         "unknown placeholders"),
    ],
)  # fmt: skip
def test_tool_responses_are_checked_when_they_load(
    tmp_path: Path, responses: str, message: str
) -> None:
    (tmp_path / "tools.yaml").write_text(
        "name: tools\nversion: '9'\ntools:\n  recall:\n    description: Look things up in memory, always.\n"
        f"    args: {{query: q}}\nresponses: {responses}\n",
        encoding="utf-8",
    )
    with pytest.raises(PromptError, match=message):
        load_tool_texts(tmp_path)
