"""The inspector's first screen: the users there are (paged, searchable), a link that
opens one user, hits below the recall floor marked, and a pin marker any font shows."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
from recallmem.config import MemoryConfig
from recallmem.memory import Memory
from recallmem.server.app import create_app
from recallmem.server.settings import ServerSettings
from recallmem.testing import HashingEmbeddings
from serverkit import ADA, ADMIN, LiveServer, client_for, token_settings

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"


@pytest.fixture
def floored(tmp_path: Path) -> Memory:
    """A memory whose recall floor leaves weak hits out, with three users."""
    memory = Memory(MemoryConfig(home=tmp_path, recall_floor=0.3), embeddings=HashingEmbeddings())
    memory.remember("Writes TypeScript at work", user_id="ada", category="knowledge", pinned=True)
    memory.remember("Drinks green tea", user_id="ada", category="preference")
    memory.remember("Plays the cello", user_id="bob", category="identity")
    memory.remember("Grows tomatoes", user_id="bobby", category="identity")
    return memory


def test_the_users_route_pages_searches_and_keeps_user_tokens_to_themselves(
    floored: Memory,
) -> None:
    app = create_app(floored, token_settings())
    admin = client_for(app, ADMIN)
    assert admin.get("/v1/users").json()["items"] == ["ada", "bob", "bobby"]
    page = admin.get("/v1/users?text=BOB&limit=1").json()
    assert (page["items"], page["total"], page["next_offset"]) == (["bob"], 2, 1)
    assert admin.get("/v1/users?text=BOB&limit=1&offset=1").json()["items"] == ["bobby"]
    assert client_for(app, ADA).get("/v1/users").json()["items"] == ["ada"]
    assert client_for(app, ADA).get("/v1/users?text=bob").json()["items"] == []
    assert client_for(app, None).get("/v1/users").status_code == 401


def test_search_reports_the_floor_and_the_hit_rate_counts_what_reached_the_model(
    floored: Memory,
) -> None:
    ada = client_for(create_app(floored, token_settings()), ADA)
    result = ada.post("/v1/users/me/search", json={"query": "TypeScript at work", "k": 5}).json()
    assert result["floor"] == 0.3
    scores = [hit["score"] for hit in result["hits"]]
    assert scores[0] >= 0.3 > scores[-1]  # one hit above the floor, one below
    weak = ada.post("/v1/users/me/search", json={"query": "xylophone", "k": 5}).json()
    assert weak["hits"] and all(hit["score"] < 0.3 for hit in weak["hits"])
    recall = ada.get("/v1/users/me/metrics").json()["recall"]
    assert (recall["count"], recall["with_hits"]) == (2, 1)


def test_the_page_lists_users_opens_a_linked_one_and_marks_weak_hits(floored: Memory) -> None:
    if not shutil.which(CHROMIUM):
        pytest.skip("Debian's chromium is not installed (scripts/test.sh installs it as root)")
    from playwright.sync_api import expect, sync_playwright

    with LiveServer(create_app(floored, ServerSettings())) as url, sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, headless=True)
        page = browser.new_page()
        page.set_default_timeout(15_000)
        errors: list[str] = []
        page.on("pageerror", lambda exc: errors.append(str(exc)))

        page.goto(url + "/")  # no user yet: the users there are
        expect(page.locator("#users-list a")).to_have_text(["ada", "bob", "bobby"])
        page.fill("#users-text", "bob")
        page.click("#users-form button[type=submit]")
        expect(page.locator("#users-list a")).to_have_text(["bob", "bobby"])
        page.click("#users-list a >> text=bobby")
        expect(page.locator("#status")).to_have_text("Memory of bobby")
        assert page.url.endswith("/?user=bobby")

        page.goto(url + "/?user=ada")  # a link opens that user
        expect(page.locator("#status")).to_have_text("Memory of ada")
        pinned = page.locator("#facts .fact", has_text="Writes TypeScript").locator(".pin")
        expect(pinned).to_have_text("pinned")  # text, not an emoji a font may lack

        page.click("[data-tab=retrieval]")
        page.fill("#query", "TypeScript at work")
        page.click("#search-form button[type=submit]")
        expect(page.locator("#search-info")).to_contain_text(
            re.compile(r"1 at or above the recall floor 0\.30")
        )
        expect(page.locator("#hits tbody tr.below-floor")).to_have_count(1)
        expect(page.locator("#hits tbody tr.below-floor")).to_contain_text("below floor")
        browser.close()
    assert errors == [], f"the page raised: {errors}"
    floored.close()
