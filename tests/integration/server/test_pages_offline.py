"""The service's pages (the inspector and /docs) load nothing from another host.

Statically: every page, and every script and style sheet a page names, is fetched; the
pages and the inspector's own files hold no http(s) URL of another host, and every
``src``, ``href`` and CSS ``url()`` points to the service itself. In a real browser
with every request to another host cut off, both pages render and ask nothing outside.
"""

from __future__ import annotations

import re
import shutil
from html.parser import HTMLParser
from typing import Any
from urllib.parse import urljoin, urlsplit

import pytest
from fastapi.testclient import TestClient
from recallmem.memory import Memory
from recallmem.server.app import create_app
from recallmem.server.settings import ServerSettings
from serverkit import LiveServer

PAGES = ["/", "/docs"]
OWN_FILES = ["/static/app.js", "/static/style.css"]
URL = re.compile(r"https?://([^/\s\"'`)<>]+)")
CSS_URL = re.compile(r"url\(\s*['\"]?([^'\")]+)")
LOCAL = {"localhost", "127.0.0.1", "[::1]"}


class References(HTMLParser):
    """Every ``src`` and ``href`` of a page."""

    def __init__(self) -> None:
        super().__init__()
        self.found: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.found += [value for name, value in attrs if name in ("src", "href") and value]


def outside_hosts(text: str) -> set[str]:
    hosts = {match.split(":")[0].lower() for match in URL.findall(text)}
    return hosts - LOCAL


@pytest.fixture
def client(memory: Memory) -> TestClient:
    return TestClient(create_app(memory, ServerSettings()), base_url="http://localhost")


def test_pages_name_only_local_files(client: TestClient) -> None:
    assets: set[str] = set()
    for page in PAGES:
        response = client.get(page)
        assert response.status_code == 200 and "text/html" in response.headers["content-type"]
        assert outside_hosts(response.text) == set(), page
        parser = References()
        parser.feed(response.text)
        assert parser.found, page
        for reference in parser.found:
            target = urlsplit(urljoin(f"http://localhost{page}", reference))
            assert target.hostname == "localhost", (page, reference)
            assets.add(target.path)
    assert {"/static/app.js", "/static/style.css", "/docs/assets/swagger-ui-bundle.js"} <= assets
    for asset in assets:
        response = client.get(asset)
        assert response.status_code == 200, asset
        if asset.endswith(".css"):
            for reference in CSS_URL.findall(response.text):
                assert reference.startswith("data:") or not urlsplit(reference).netloc, reference


def test_the_inspector_files_name_no_outside_host(client: TestClient) -> None:
    for path in OWN_FILES:
        assert outside_hosts(client.get(path).text) == set(), path


def test_the_docs_use_no_online_validator(client: TestClient) -> None:
    page = client.get("/docs").text
    assert '"validatorUrl": null' in page
    assert "/docs/assets/swagger-ui.css" in page


CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"


@pytest.mark.browser
def test_pages_render_in_a_browser_cut_off_from_other_hosts(memory: Memory) -> None:
    if not shutil.which(CHROMIUM):
        pytest.skip("Debian's chromium is not installed (scripts/test.sh installs it as root)")
    from playwright.sync_api import expect, sync_playwright

    outside: list[str] = []
    with LiveServer(create_app(memory, ServerSettings())) as url, sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, headless=True)
        page = browser.new_page()
        page.set_default_timeout(15_000)

        def only_local(route: Any) -> None:
            if route.request.url.startswith(url + "/") or route.request.url.startswith("data:"):
                route.continue_()
            else:
                outside.append(route.request.url)
                route.abort()

        page.route("**/*", only_local)
        page.goto(url + "/docs")
        expect(page.locator(".opblock").first).to_be_visible()
        expect(page.locator("#swagger-ui")).to_contain_text("/v1/users/{user_id}/facts")
        page.goto(url + "/")
        expect(page.locator("#status")).to_contain_text("enter a user id")
        browser.close()
    assert outside == []


def test_no_other_site_may_frame_the_pages(client: TestClient) -> None:
    for path in PAGES:
        headers = client.get(path).headers
        assert headers["x-frame-options"] == "DENY", path
        assert "frame-ancestors 'none'" in headers["content-security-policy"], path
    assert "default-src 'self'" in client.get("/").headers["content-security-policy"]
    for path in OWN_FILES:
        assert client.get(path).headers["x-content-type-options"] == "nosniff", path
