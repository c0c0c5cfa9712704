"""The CLI takes any unique id prefix, says when there is nothing, and hints in CLI terms."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from recallmem import Memory, MemoryConfig
from recallmem.cli import main
from recallmem.errors import AmbiguousIdError, FactNotFoundError
from recallmem.integrations.lookup import resolve_fact_id
from recallmem.testing import HashingEmbeddings
from recallmem.types import Fact, Status


def run(home: Path, *argv: str) -> tuple[int, str]:
    out = io.StringIO()
    return main(["--home", str(home), *argv], out=out), out.getvalue()


def facts_sharing_a_first_character(memory: Memory, user_id: str) -> list[Fact]:
    """Seventeen facts: by pigeonhole, two ids start with the same hex digit."""
    facts = memory.remember_many(
        [{"content": f"Fact number {n} about topic {n * 7}", "category": "context"}
         for n in range(17)],
        user_id=user_id,
    )  # fmt: skip
    by_first: dict[str, list[Fact]] = {}
    for fact in facts:
        by_first.setdefault(fact.id[0], []).append(fact)
    return max(by_first.values(), key=len)


def test_forget_takes_the_printed_prefix_without_user(home: Path) -> None:
    _, out = run(home, "remember", "Drinks green tea", "--user", "ada", "--category", "preference")
    fact_id = out.split()[0]
    code, out = run(home, "forget", fact_id[:12])
    assert (code, out) == (0, "forgot 1 fact(s)\n")
    _, out = run(home, "list", "--user", "ada", "--status", "deleted")
    assert fact_id[:12] in out
    # Forgetting it again changes nothing, and says so (it said "forgot 1 fact(s)").
    assert run(home, "forget", fact_id[:12]) == (
        0,
        f"fact {fact_id[:12]} was already forgotten; nothing changed (--purge erases it)\n",
    )
    assert run(home, "forget", fact_id[:12], "--purge") == (0, "purged 1 fact(s)\n")


def test_an_ambiguous_prefix_lists_the_candidates_and_changes_nothing(
    home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with Memory(MemoryConfig(home=home)) as memory:
        clash = facts_sharing_a_first_character(memory, "ada")
    code, _ = run(home, "forget", clash[0].id[0], "--user", "ada")
    err = capsys.readouterr().err
    assert code == 2 and f"id prefix {clash[0].id[0]!r} matches {len(clash)} facts" in err
    assert all(f.id in err for f in clash) and "give more characters" in err
    _, out = run(home, "list", "--user", "ada", "--limit", "100")
    assert len(out.splitlines()) == 18  # header and all 17, none forgotten


def test_not_found_hints_name_cli_commands_and_say_whose(
    home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _ = run(home, "forget", "abc123", "--user", "ada")
    err = capsys.readouterr().err
    assert code == 2
    assert "user 'ada' has no fact with id 'abc123'" in err
    assert "recallmem list --user ada --status all" in err and "memory." not in err
    code, _ = run(home, "retry", "42")
    err = capsys.readouterr().err
    assert code == 2 and "recallmem dead-letters" in err and "()" not in err
    code, _ = run(home, "list", "--user", "")
    assert code == 2 and "give --user USER" in capsys.readouterr().err


def test_empty_results_say_so(home: Path) -> None:
    assert run(home, "recall", "tea", "--user", "ada") == (
        0,
        "no facts of user 'ada' match 'tea'\n",
    )
    assert run(home, "list", "--user", "ada", "--category", "goal", "--text", "run") == (
        0,
        "user 'ada' has no active facts (category goal, containing 'run')\n",
    )
    assert run(home, "list", "--user", "ada", "--status", "all") == (
        0,
        "user 'ada' has no facts\n",
    )
    assert run(home, "pending") == (0, "nothing is waiting for extraction\n")
    assert run(home, "dead-letters", "--user", "ada") == (
        0,
        "no dead letters for user 'ada': every window was extracted or is pending\n",
    )


def test_resolve_fact_id_stays_within_the_user(memory: Memory) -> None:
    ada = memory.remember("Drinks green tea", user_id="ada", category="preference")
    memory.forget(ada.id)
    assert resolve_fact_id(memory, ada.id[:6], user_id="ada") == ada.id  # any status
    assert resolve_fact_id(memory, ada.id[:6]) == ada.id  # every user's, without one
    assert resolve_fact_id(memory, ada.id, user_id="ada") == ada.id
    with pytest.raises(FactNotFoundError) as missing:
        resolve_fact_id(memory, ada.id[:6], user_id="bob")
    assert (missing.value.fact_id, missing.value.user_id) == (ada.id[:6], "bob")
    assert memory.get(ada.id).status is Status.DELETED


def test_resolve_fact_id_refuses_an_ambiguous_prefix(memory: Memory) -> None:
    clash = facts_sharing_a_first_character(memory, "ada")
    with pytest.raises(AmbiguousIdError) as ambiguous:
        resolve_fact_id(memory, clash[0].id[0], user_id="ada")
    assert len(ambiguous.value.candidates) == len(clash)
    with pytest.raises(AmbiguousIdError):
        resolve_fact_id(memory, clash[0].id[0])
    with pytest.raises(ValueError, match="empty"):
        resolve_fact_id(memory, "  ", user_id="ada")


def test_resolve_without_user_searches_every_user(tmp_path: Path) -> None:
    with Memory(MemoryConfig(home=tmp_path), embeddings=HashingEmbeddings()) as memory:
        bob = memory.remember("Plays the cello", user_id="bob", category="behavior")
        assert resolve_fact_id(memory, bob.id[:12]) == bob.id
