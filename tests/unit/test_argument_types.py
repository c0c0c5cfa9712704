"""Wrong-type arguments get an InvalidInputError (a ValueError) that names the argument."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from recallmem import Memory
from recallmem.errors import ImportRejectedError, InvalidInputError

Call = Callable[[Memory], Any]

CALLS: list[tuple[str, Call, str]] = [
    ("list limit as text", lambda m: m.list(user_id="ada", limit="5"), "limit must be an integer"),
    ("list offset negative", lambda m: m.list(user_id="ada", offset=-1), "offset must be"),
    ("list text as a dict", lambda m: m.list(user_id="ada", text={"$ne": 1}), "text must be a string"),
    ("list agent as a list", lambda m: m.list(user_id="ada", agent_id=["a"]), "agent_id must be"),
    ("recall min_score as text", lambda m: m.recall("tea", user_id="ada", min_score="0.5"),
     "min_score must be a number"),
    ("recall k as text", lambda m: m.recall("tea", user_id="ada", k="3"), "k must be an integer"),
    ("observe agent as a dict",
     lambda m: m.observe([{"role": "user", "content": "I like tea"}], user_id="ada",
                         thread_id="t1", agent_id={"x": 1}), "agent_id must be a string"),
    ("remember thread as a list",
     lambda m: m.remember("Likes tea", user_id="ada", category="preference", thread_id=["a"]),
     "thread_id must be a string"),
    ("remember pinned as text",
     lambda m: m.remember("Likes tea", user_id="ada", category="preference", pinned="no"),
     "pinned must be True or False"),
    ("remember content as a number",
     lambda m: m.remember(123, user_id="ada", category="preference"), "content must be a string"),
    ("remember zero-width content",
     lambda m: m.remember("\u200b\u200d\ufeff \u2060", user_id="ada", category="preference"),
     "content is empty"),
    ("set_profile with a string", lambda m: m.set_profile("x"), "profile must be a recallmem.Profile"),
    ("get with a number", lambda m: m.get(123), "fact_id must be a non-empty string"),
    ("recall categories as a number", lambda m: m.recall("tea", user_id="ada", categories=5),
     "categories must be a list"),
    ("recall agent as a list", lambda m: m.recall("tea", user_id="ada", agent_id=[1]),
     "agent_id must be"),
    ("recall include_inactive as text",
     lambda m: m.recall("tea", user_id="ada", include_inactive="no"), "include_inactive must be"),
    ("forget purge as text", lambda m: m.forget(user_id="ada", purge="no"),
     "purge must be True or False"),
    ("forget thread as a list", lambda m: m.forget(user_id="ada", thread_id=[1]),
     "thread_id must be"),
    ("remember_many items as a number", lambda m: m.remember_many(5, user_id="ada"),
     "items must be a list"),
    ("export agent as a list", lambda m: m.export(user_id="ada", agent_id=[1]), "agent_id must be"),
    ("get_profile agent as a list", lambda m: m.get_profile(user_id="ada", agent_id=[1]),
     "agent_id must be"),
]  # fmt: skip


@pytest.mark.parametrize(("name", "call", "message"), CALLS, ids=[c[0] for c in CALLS])
def test_a_wrong_type_is_a_clear_value_error(
    memory: Memory, name: str, call: Call, message: str
) -> None:
    memory.remember("Likes green tea", user_id="ada", category="preference")
    with pytest.raises(InvalidInputError, match=message) as caught:
        call(memory)
    assert isinstance(caught.value, ValueError)
    assert [f.content for f in memory.list(user_id="ada")] == ["Likes green tea"]


def test_update_checks_types_too(memory: Memory) -> None:
    fact = memory.remember("Likes green tea", user_id="ada", category="preference")
    with pytest.raises(InvalidInputError, match="content must be a string"):
        memory.update(fact.id, content=42)  # type: ignore[arg-type]
    with pytest.raises(InvalidInputError, match="reason must be a string"):
        memory.update(fact.id, content="Likes oolong", reason=["x"])  # type: ignore[arg-type]
    assert memory.get(fact.id).content == "Likes green tea"


@pytest.mark.parametrize("version", [True, "1", 1.5, None])
def test_an_import_with_a_wrong_version_is_refused(memory: Memory, version: object) -> None:
    memory.remember("Likes green tea", user_id="ada", category="preference")
    export = memory.export(user_id="ada")
    memory.forget(user_id="ada", purge=True)
    with pytest.raises(ImportRejectedError, match="unsupported export version"):
        memory.import_({**export, "version": version})
    assert memory.list(user_id="ada") == []


def test_an_import_row_with_zero_width_content_is_refused(memory: Memory) -> None:
    memory.remember("Likes green tea", user_id="ada", category="preference")
    export = memory.export(user_id="ada")
    export["facts"][0]["content"] = "\u200b\u200b"
    with pytest.raises(ImportRejectedError, match="content is blank"):
        memory.import_(export)
