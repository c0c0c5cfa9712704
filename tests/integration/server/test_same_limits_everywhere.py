"""The library, the CLI, the HTTP API and the inspector accept and refuse the same inputs.

Each case runs through all four side by side: the library call, the command line (on
its own home, with the default embedder), the API (an admin token, so the user in the
path is the only variable) and the inspector's form fields as served.
"""

from __future__ import annotations

import html.parser
import io
import re
from collections.abc import Callable
from pathlib import Path
from urllib.parse import quote

import pytest
from fastapi.testclient import TestClient
from recallmem import limits
from recallmem.cli import main
from recallmem.errors import InvalidInputError
from recallmem.memory import Memory
from recallmem.server.app import create_app
from serverkit import ADMIN, client_for, token_settings

USER_IDS = ["ada", "a" * 200, "a" * 201, "a b", "a/b", " ", "ada\t", "ada\x1c", "用户-7",
            "ada\ufeff", "ad\u200ba", "a\u00adb", "ada\U000e0041", "ada\u202e", "ada\x00",
            "ada\x1b", "ada\x7f", "ada\x9b", ".", "..", "...", ".ada", "..ada"]  # fmt: skip
KS = [0, 1, 100, 101]
QUERIES = ["q" * 1000, "q" * 1001, "   "]
LIMITS = [0, 1, 1000, 1001]
CONTENTS = ["c" * 2000, "c" * 2001]


class Fields(html.parser.HTMLParser):
    """The attributes of each form field of the inspector's page, by id."""

    def __init__(self) -> None:
        super().__init__()
        self.fields: dict[str, dict[str, str]] = {}

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = {k: v or "" for k, v in attrs}
        if tag in ("input", "textarea") and "id" in found:
            self.fields[found["id"]] = found


@pytest.fixture
def api(memory: Memory) -> TestClient:
    return client_for(create_app(memory, token_settings()), ADMIN)


@pytest.fixture
def form(api: TestClient) -> dict[str, dict[str, str]]:
    page = api.get("/")
    assert page.status_code == 200
    parser = Fields()
    parser.feed(page.text)
    return parser.fields


def accepts(call: Callable[[], object]) -> bool:
    try:
        call()
    except InvalidInputError:
        return False
    return True


def cli(home: Path, *argv: str) -> bool:
    code = main(["--home", str(home), *argv], out=io.StringIO())
    assert code in (0, 2), f"{argv}: exit {code}"
    return code == 0


def api_accepts(status: int) -> bool:
    assert status < 500, status
    return status < 400


def field_accepts(field: dict[str, str], value: str) -> bool:
    if len(value) > int(field.get("maxlength", 10**9)):
        return False
    pattern = field.get("pattern")
    return pattern is None or re.fullmatch(pattern, value) is not None


def number_accepts(field: dict[str, str], value: int) -> bool:
    return int(field["min"]) <= value <= int(field["max"])


@pytest.mark.parametrize("user", USER_IDS)
def test_user_ids(user: str, memory: Memory, api: TestClient, form: dict, tmp_path: Path) -> None:
    library = accepts(lambda: memory.remember("Writes Go", user_id=user, category="knowledge"))
    command = cli(tmp_path, "remember", "Writes Go", "--user", user, "--category", "knowledge")
    path = f"/v1/users/{quote(user, safe='')}/facts"
    http = api_accepts(
        api.post(path, json={"content": "Writes Go", "category": "knowledge"}).status_code
    )
    inspector = field_accepts(form["user"], user) and bool(user.strip())
    assert library == command == http == inspector, (library, command, http, inspector)
    assert library == bool(re.fullmatch(limits.USER_ID_PATTERN, user))


@pytest.mark.parametrize("k", KS)
def test_k(k: int, memory: Memory, api: TestClient, form: dict, tmp_path: Path) -> None:
    library = accepts(lambda: memory.recall("go", user_id="ada", k=k))
    command = cli(tmp_path, "recall", "go", "--user", "ada", "-k", str(k))
    http = api_accepts(api.post("/v1/users/ada/search", json={"query": "go", "k": k}).status_code)
    inspector = number_accepts(form["k"], k)
    assert library == command == http == inspector == (1 <= k <= limits.MAX_K)


@pytest.mark.parametrize("query", QUERIES, ids=len)
def test_queries(query: str, memory: Memory, api: TestClient, form: dict, tmp_path: Path) -> None:
    library = accepts(lambda: memory.recall(query, user_id="ada"))
    command = cli(tmp_path, "recall", query, "--user", "ada")
    http = api_accepts(api.post("/v1/users/ada/search", json={"query": query}).status_code)
    inspector = field_accepts(form["query"], query) and bool(query.strip())
    assert library == command == http == inspector


@pytest.mark.parametrize("limit", LIMITS)
def test_page_sizes(limit: int, memory: Memory, api: TestClient, tmp_path: Path) -> None:
    library = accepts(lambda: memory.list(user_id="ada", limit=limit))
    command = cli(tmp_path, "list", "--user", "ada", "--limit", str(limit))
    http = api_accepts(api.get(f"/v1/users/ada/facts?limit={limit}").status_code)
    assert library == command == http == (1 <= limit <= limits.MAX_PAGE)


@pytest.mark.parametrize("content", CONTENTS, ids=len)
def test_contents(
    content: str, memory: Memory, api: TestClient, form: dict, tmp_path: Path
) -> None:
    library = accepts(lambda: memory.remember(content, user_id="ada", category="context"))
    command = cli(tmp_path, "remember", content, "--user", "ada", "--category", "context")
    body = {"content": content, "category": "context"}
    http = api_accepts(api.post("/v1/users/ada/facts", json=body).status_code)
    inspector = field_accepts(form["add-content"], content)
    assert library == command == http == inspector


def test_defaults_have_one_definition(memory: Memory, form: dict) -> None:
    from recallmem.agent.middleware import MemoryMiddleware
    from recallmem.extraction.admission import Policy

    assert memory.config.recall_k == limits.DEFAULT_K == int(form["k"]["value"])
    assert (
        MemoryMiddleware(memory=memory, register_tools=False).injector.recall_k == limits.DEFAULT_K
    )
    assert Policy().dedup_similarity == memory.config.dedup_similarity == limits.DEDUP_SIMILARITY
