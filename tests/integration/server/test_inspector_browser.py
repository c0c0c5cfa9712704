"""The inspector page in a real headless Chromium: add a fact, find it, edit it, delete it."""

from __future__ import annotations

import re
import shutil
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from recallmem.memory import Memory
from recallmem.server.app import create_app
from recallmem.server.schemas import MAX_SEARCH_K
from recallmem.server.settings import ServerSettings
from recallmem.types import Source, Status
from serverkit import ADA, LiveServer, token_settings

pytestmark = pytest.mark.browser

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"


@pytest.fixture
def page(memory: Memory, live_server: type[LiveServer]) -> Iterator[Any]:
    if not shutil.which(CHROMIUM):
        pytest.skip("Debian's chromium is not installed (scripts/test.sh installs it as root)")
    from playwright.sync_api import sync_playwright

    memory.remember("Bob's private note", user_id="bob", category="context")
    with live_server(create_app(memory, token_settings())) as url, sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, headless=True)
        page = browser.new_page()
        page.set_default_timeout(15_000)
        errors: list[str] = []
        page.on("pageerror", lambda exc: errors.append(str(exc)))
        page.goto(url + "/")
        page.fill("#user", "me")
        page.fill("#token", ADA)
        page.click("#connect button[type=submit]")
        page.wait_for_selector("#status:has-text('Memory of me')")
        yield page
        assert errors == [], f"the page raised: {errors}"
        browser.close()


def test_add_find_edit_delete(page: Any, memory: Memory) -> None:
    from playwright.sync_api import expect

    # add
    page.click("details.add summary")
    page.fill("#add-content", "Prefers reports written in Chinese")
    page.select_option("#add-category", "preference")
    page.click("#add-form button[type=submit]")
    expect(page.locator("#facts .fact .content")).to_have_text(
        ["Prefers reports written in Chinese"]
    )
    expect(page.locator("#detail-content")).to_have_text("Prefers reports written in Chinese")
    expect(page.locator(".props dd").nth(1)).to_have_text("preference")
    expect(page.locator(".evidence")).to_contain_text("manual")
    assert [f.content for f in memory.list(user_id="ada")] == ["Prefers reports written in Chinese"]

    # find: by the list filter, and in the retrieval view with the score breakdown
    page.fill("#filter-text", "chinese")
    page.click("#filters button[type=submit]")
    expect(page.locator("#facts .fact .content")).to_have_count(1)
    page.click("[data-tab=retrieval]")
    page.fill("#query", "which language for reports")
    page.click("#search-form button[type=submit]")
    first_hit = page.locator("#hits tbody tr").first
    expect(first_hit).to_contain_text("Prefers reports written in Chinese")
    expect(page.locator("#search-info")).to_contain_text("hit(s)")
    expect(page.locator("#hits")).not_to_contain_text("Bob")
    time_cell = first_hit.locator("td").nth(6)
    expect(time_cell).to_have_text("0.000")  # the query names no time
    # An older fact, so that "today" tells the two apart (a time every fact matches alike
    # counts for nothing).
    long_ago = Source(at=datetime.now(UTC) - timedelta(days=400))
    older = memory.remember("Owns a road bike", user_id="ada", category="context", source=long_ago)
    page.fill("#query", "what did I say today about reports")
    page.click("#search-form button[type=submit]")
    expect(time_cell).to_have_text("1.000")  # said today: inside the window
    memory.forget(older.id, purge=True)

    # edit: the old text stays in the history
    first_hit.locator("a").click()
    page.click("#edit")
    page.fill("#edit-content", "Prefers reports written in English")
    page.fill("#edit-reason", "changed their mind")
    page.click("#edit-save")
    expect(page.locator("#detail-content")).to_have_text("Prefers reports written in English")
    expect(page.locator(".history")).to_contain_text("Prefers reports written in Chinese")
    expect(page.locator(".history")).to_contain_text("changed their mind")
    assert memory.list(user_id="ada")[0].content == "Prefers reports written in English"

    # pin, then delete with confirmation (cancel first: nothing happens)
    page.click("#pin")
    expect(page.locator("#pin")).to_have_text("Unpin")
    page.click("#delete")
    page.click("#confirm button[value=cancel]")
    assert memory.list(user_id="ada")[0].status is Status.ACTIVE
    page.click("#delete")
    expect(page.locator("#confirm-text")).to_contain_text("Prefers reports written in English")
    page.click("#confirm-ok")
    expect(page.locator("#status")).to_have_text(re.compile("Deleted"))
    page.fill("#filter-text", "")
    page.click("#filters button[type=submit]")
    expect(page.locator("#facts")).to_contain_text("No facts match.")
    [gone] = memory.list(user_id="ada", status=None)
    assert gone.status is Status.DELETED and gone.pinned


def test_profile_and_extraction_tabs_render(page: Any, memory: Memory) -> None:
    from playwright.sync_api import expect

    page.click("[data-tab=profile]")
    page.fill("textarea[name=work_context]", "Front-end team, TypeScript")
    page.click("#profile-form button[type=submit]")
    expect(page.locator("#status")).to_have_text("Profile saved.")
    assert memory.get_profile(user_id="ada").work_context.summary == "Front-end team, TypeScript"
    page.click("[data-tab=extraction]")
    expect(page.locator("#metrics")).to_contain_text("extraction tokens")
    expect(page.locator("#pending")).to_contain_text("Nothing waiting.")
    expect(page.locator("#extractions")).to_contain_text("No extraction has run")


def test_open_mode_writes_from_the_page_pass_the_origin_and_type_rules(
    memory: Memory, live_server: type[LiveServer]
) -> None:
    """Without tokens (the default of scripts/serve.sh) the page's writes, bodyless pin
    included, go through; adding a fact twice says it was confirmed, not stored again."""
    if not shutil.which(CHROMIUM):
        pytest.skip("Debian's chromium is not installed (scripts/test.sh installs it as root)")
    from playwright.sync_api import expect, sync_playwright

    with live_server(create_app(memory, ServerSettings())) as url, sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, headless=True)
        page = browser.new_page()
        page.set_default_timeout(15_000)
        page.goto(url + "/")
        page.fill("#user", "ada")
        page.click("#connect button[type=submit]")
        page.wait_for_selector("#status:has-text('Memory of ada')")
        page.click("details.add summary")
        for _ in range(2):
            page.fill("#add-content", "Keeps bees on the roof")
            page.select_option("#add-category", "identity")  # waits for the categories
            page.click("#add-form button[type=submit]")
            expect(page.locator("#detail-content")).to_have_text("Keeps bees on the roof")
        expect(page.locator("#status")).to_have_text(re.compile("Already known, confirmed"))
        page.click("#pin")
        expect(page.locator("#pin")).to_have_text("Unpin")
        browser.close()
    [fact] = memory.list(user_id="ada")
    assert fact.pinned and fact.confirmations == 1


def test_a_refused_open_leaves_nothing_of_the_previous_user(page: Any, memory: Memory) -> None:
    from playwright.sync_api import expect

    memory.remember("Keeps a diary in French", user_id="ada", category="identity")
    page.click("[data-tab=memory]")
    page.click("#filters button[type=submit]")
    page.click("#facts .fact")
    expect(page.locator("#edit")).to_be_visible()

    page.fill("#user", "ada lovelace")  # a space: the API refuses the id
    page.click("#connect button[type=submit]")
    status = page.locator("#status")
    expect(status).to_have_text(re.compile("Could not open “ada lovelace”: a user id is 1 to 200"))
    expect(status).not_to_contain_text("pattern")
    expect(status).to_have_class(re.compile("error"))
    expect(page.locator("#facts .fact")).to_have_count(0)
    for action in ("#edit", "#pin", "#delete"):
        expect(page.locator(action)).to_have_count(0)
    for form in ("#add-form", "#filters", "#search-form"):
        expect(page.locator(f"{form} button[type=submit]")).to_be_disabled()

    page.fill("#user", "bob")  # a real user, but not this token's
    page.click("#connect button[type=submit]")
    expect(status).to_have_text(re.compile("Could not open “bob”: this token is bound to user"))
    expect(page.locator("#facts .fact")).to_have_count(0)
    page.click("[data-tab=retrieval]")
    expect(page.locator("#search-form button[type=submit]")).to_be_disabled()

    page.fill("#user", "me")  # and back: everything works again
    page.click("#connect button[type=submit]")
    expect(status).to_have_text("Memory of me")
    expect(page.locator("#search-form button[type=submit]")).to_be_enabled()


def test_weights_and_why_not_this_one(page: Any, memory: Memory) -> None:
    from playwright.sync_api import expect

    memory.remember("Writes TypeScript reports for the front-end team", user_id="ada",
                    category="knowledge")  # fmt: skip
    memory.remember("Sends the quarterly reports to finance", user_id="ada", category="context")
    page.click("[data-tab=retrieval]")
    page.fill("#query", "TypeScript reports for the front-end team")
    page.fill("#k", "1")
    page.click("#search-form button[type=submit]")
    expect(page.locator("#hits tbody tr")).to_have_count(1)
    weights = page.locator("#weights")
    expect(weights).to_contain_text("×0.80")  # dense
    expect(weights).to_contain_text("score = Σ weight × part")
    score_tip = page.locator("#hits tbody tr td").nth(1).get_attribute("title") or ""
    assert re.fullmatch(r"(\d\.\d\d×\d\.\d{3} \+ ){5}\d\.\d\d×\d\.\d{3} = \d\.\d{3}", score_tip)

    # the second fact is not in the top 1: pick it in the list, ask why
    page.click("[data-tab=memory]")
    page.locator("#facts .fact", has_text="quarterly").click()
    page.click("#why")
    expect(page.locator("#tab-retrieval")).to_be_visible()
    expect(page.locator("#explain-rank")).to_contain_text("ranked 2: below the top 1; it scored")
    expect(page.locator("#explain-rank")).to_contain_text("it loses most on dense: 0.80×")
    expect(page.locator("#explain-parts tbody tr")).to_have_count(8)  # 6 parts, score, k-th
    # the same by id, for the top hit
    [top] = memory.recall("TypeScript reports for the front-end team", user_id="ada", k=1)
    page.fill("#explain-id", top.fact.id)
    page.click("#explain-form button[type=submit]")
    expect(page.locator("#explain-rank")).to_have_text(
        f"ranked 1: in the top 1 (of the first {MAX_SEARCH_K} candidates for this query)"
    )


def test_turns_tab_shows_what_reached_the_model_and_why(
    memory: Memory, live_server: type[LiveServer], tmp_path: Any
) -> None:
    if not shutil.which(CHROMIUM):
        pytest.skip("Debian's chromium is not installed (scripts/test.sh installs it as root)")
    import httpx
    from langchain_core.messages import AIMessage
    from playwright.sync_api import expect, sync_playwright
    from recallmem.retrieval.shown import DroppedFact, RetrievalRecord
    from recallmem.testing import FakeChatModel

    report = memory.remember("喜欢用中文写周报", user_id="ada", category="preference")
    hostile = memory.remember('<img src=x onerror="document.title=1">周报模板', user_id="ada",
                              category="knowledge")  # fmt: skip
    call = {"name": "recall", "args": {"query": "周报用什么语言"}, "id": "call-1"}
    model = FakeChatModel(responses=[AIMessage(content="", tool_calls=[call]), "好的，用中文写。"])
    app = create_app(memory, token_settings(), model=model)
    with live_server(app) as url, sync_playwright() as p:
        said = "帮我写这周的周报"
        answer = httpx.post(f"{url}/v1/chat/stream", json={"message": said, "thread_id": "周报"},
                            headers={"Authorization": f"Bearer {ADA}"}, timeout=30)  # fmt: skip
        assert answer.status_code == 200, answer.text
        # an agent run elsewhere (the application's own): a note that left a fact out
        memory.record_retrieval(RetrievalRecord(
            user_id="ada", thread_id="other", turn_id="m-9", trigger="turn", query="下周计划",
            dropped=(DroppedFact(fact_id=hostile.id, reason="floor", score=0.05),),
        ))  # fmt: skip
        browser = p.chromium.launch(executable_path=CHROMIUM, headless=True)
        page = browser.new_page(viewport={"width": 1000, "height": 600})
        page.set_default_timeout(15_000)
        page.goto(url + "/")
        page.fill("#user", "me")
        page.fill("#token", ADA)
        page.click("#connect button[type=submit]")
        page.wait_for_selector("#status:has-text('Memory of me')")
        page.click("[data-tab=turns]")
        turns = page.locator("#turns .turn")
        expect(turns).to_have_count(2)
        newest, chat = turns.nth(0), turns.nth(1)
        expect(newest).to_contain_text("thread other")
        expect(newest.locator(".dropped")).to_contain_text("left out: below the recall floor 0.050")
        expect(newest.locator(".dropped")).to_contain_text('<img src=x onerror="document.title=1">')
        expect(chat).to_contain_text("thread 周报")
        block = chat.locator("[data-trigger=block]")
        expect(block).to_contain_text("memory block at the thread's start")
        expect(block).to_contain_text(f"for “{said}”")
        expect(block.locator(".recalled li").first).to_contain_text("core")  # a standing preference
        tool = chat.locator("[data-trigger=tool]")
        expect(tool).to_contain_text("recall tool")
        expect(tool.locator(".recalled")).to_contain_text("喜欢用中文写周报")
        assert page.locator("#turns img").count() == 0  # stored text stays text
        assert page.title() == "recallmem inspector"
        score_tip = tool.locator(".recalled .num").first.get_attribute("title") or ""
        assert score_tip.startswith("dense ")
        page.screenshot(path=str(tmp_path / "turns.png"), full_page=True)
        page.fill("#turns-thread", "other")  # one thread only
        page.click("#turns-form button[type=submit]")
        expect(turns).to_have_count(1)
        # a purge erases the records naming the fact, and the page shows it
        memory.forget(report.id, purge=True)
        page.fill("#turns-thread", "")
        page.click("#turns-form button[type=submit]")
        expect(page.locator("#turns")).not_to_contain_text("喜欢用中文写周报")
        browser.close()


def test_text_that_would_reorder_or_hide_itself_is_shown_inert(page: Any) -> None:
    # Stored text is cleaned on the way in; the page still never obeys what it is shown.
    shown = page.evaluate("() => el('span', {}, 'Likes\\u202e tea\\x1b[31m').textContent")
    assert shown == "Likes⟨U+202E⟩ tea⟨U+001B⟩[31m"
    assert page.evaluate("() => inert('क\\u200dष 👩\\u200d💻')") == "क\u200dष 👩\u200d💻"


def test_a_detail_fetched_after_the_edit_opened_does_not_close_it(
    page: Any, memory: Memory
) -> None:
    # Found in CI: a click on a hit fetched the fact again, Edit was clicked on the pane
    # still shown, and the late answer replaced the pane, edit form and all.
    from playwright.sync_api import expect

    fact = memory.remember("Prefers reports written in Chinese", user_id="ada",
                           category="preference")  # fmt: skip
    page.click("[data-tab=retrieval]")
    page.fill("#query", "reports")
    page.click("#search-form button[type=submit]")
    link = page.locator("#hits tbody tr").first.locator("a")
    link.click()
    expect(page.locator("#detail-content")).to_have_text(fact.content)
    held: list[Any] = []

    def hold(route: Any) -> None:
        held.append(route)

    page.route(re.compile(rf".*/facts/{fact.id}$"), hold)
    page.click("[data-tab=retrieval]")
    link.click()  # a second fetch of the fact, held back
    page.wait_for_timeout(200)
    assert held, "the hit's link did not fetch the fact"
    page.click("#edit")
    page.fill("#edit-content", "Prefers reports written in English")
    with page.expect_response(re.compile(rf".*/facts/{fact.id}$")):
        held[0].continue_()
    expect(page.locator("#edit-content")).to_have_value("Prefers reports written in English")
