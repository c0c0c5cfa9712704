"""What the service refuses before it reads a body: foreign Host names (DNS rebinding),
writes from other sites' pages, writes not declared JSON, unknown callers; and how many
large bodies it reads at once."""

from __future__ import annotations

import asyncio
import socket
from typing import Any
from urllib.parse import urlsplit

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient
from recallmem.errors import InvalidInputError
from recallmem.memory import Memory
from recallmem.server.app import create_app
from recallmem.server.settings import ServerSettings, load_settings
from serverkit import ADA, JSON, LiveServer, client_for, token_settings

PROBLEM = "application/problem+json"
SECRET = "Ada's door code is behind the blue vase"


def open_client(memory: Memory, **settings: Any) -> TestClient:
    """A client of the service without tokens (the default of scripts/serve.sh)."""
    app = create_app(memory, ServerSettings(api_tokens=[], **settings))
    return TestClient(app, base_url="http://localhost:8765")


@pytest.fixture
def seeded(memory: Memory) -> Memory:
    memory.remember(SECRET, user_id="ada", category="context")
    return memory


def export_from(client: TestClient, host: str) -> Any:
    return client.get("/v1/users/ada/export", headers={"Host": host})


# -- Host -------------------------------------------------------------------------


@pytest.mark.parametrize(
    "host", ["localhost", "localhost:8765", "LocalHost:1", "127.0.0.1:8765", "[::1]:8765"]
)
def test_open_mode_answers_loopback_names(seeded: Memory, host: str) -> None:
    response = export_from(open_client(seeded), host)
    assert response.status_code == 200
    assert SECRET in response.text


@pytest.mark.parametrize(
    "host",
    ["attacker.example", "attacker.example:8765", "localhost.attacker.example", "10.0.0.7", ""],
)
def test_open_mode_refuses_any_other_host(seeded: Memory, host: str) -> None:
    client = open_client(seeded)
    for method, path in (("GET", "/v1/users/ada/export"), ("GET", "/"), ("GET", "/docs")):
        response = client.request(method, path, headers={"Host": host})
        assert response.status_code == 400, (host, path)
        assert response.headers["content-type"].startswith(PROBLEM)
        assert "RECALLMEM_ALLOWED_HOSTS" in response.json()["detail"]
        assert SECRET not in response.text


def test_allowed_hosts_extend_open_mode(seeded: Memory) -> None:
    client = open_client(seeded, allowed_hosts="memory.internal, .corp.example")
    for host in ("memory.internal:80", "corp.example", "mem.corp.example", "localhost"):
        assert export_from(client, host).status_code == 200, host
    for host in ("evilcorp.example", "memory.internal.attacker.example", "internal"):
        assert export_from(client, host).status_code == 400, host


def test_with_tokens_any_host_unless_a_list_is_set(seeded: Memory) -> None:
    anywhere = client_for(create_app(seeded, token_settings()), ADA)
    assert export_from(anywhere, "memory.example.org").status_code == 200
    listed = create_app(seeded, token_settings(allowed_hosts=["memory.example.org"]))
    client = client_for(listed, ADA)
    assert export_from(client, "memory.example.org").status_code == 200
    assert export_from(client, "127.0.0.1:8765").status_code == 200
    assert export_from(client, "attacker.example").status_code == 400


def test_allowed_hosts_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RECALLMEM_ALLOWED_HOSTS", "Memory.Example.org, .corp.example")
    assert load_settings().allowed_hosts == ["memory.example.org", ".corp.example"]
    monkeypatch.setenv("RECALLMEM_ALLOWED_HOSTS", '["memory.example.org"]')
    assert load_settings().allowed_hosts == ["memory.example.org"]
    monkeypatch.setenv("RECALLMEM_ALLOWED_HOSTS", "https://memory.example.org:443")
    with pytest.raises(InvalidInputError, match=r"RECALLMEM_ALLOWED_HOSTS: .* is not a host name"):
        load_settings()


# -- Origin -----------------------------------------------------------------------


def writes(fact_id: str) -> list[tuple[str, str, Any]]:
    document = {"format": "recallmem.export", "version": 1, "facts": [], "profiles": []}
    return [
        ("POST", "/v1/users/ada/facts", {"content": "Planted by a web page", "category": "goal"}),
        ("POST", "/v1/users/ada/import", document),
        ("POST", f"/v1/users/ada/facts/{fact_id}/pin", None),
        ("PATCH", f"/v1/users/ada/facts/{fact_id}", {"content": "Overwritten by a page"}),
        ("PUT", "/v1/users/ada/profile", {"background": {"summary": "Planted"}}),
        ("DELETE", f"/v1/users/ada/facts/{fact_id}?purge=true", None),
        ("DELETE", "/v1/users/ada/memory?purge=true", None),
    ]


def snapshot(memory: Memory) -> list[str]:
    facts = memory.list(user_id="ada", status=None, limit=1000)
    profile = memory.get_profile(user_id="ada").model_dump_json()
    return [*sorted(f.model_dump_json(exclude={"last_accessed_at"}) for f in facts), profile]


@pytest.mark.parametrize(
    "origin", ["http://attacker.example", "http://localhost:9999", "null", "file://"]
)
def test_writes_from_another_origin_are_refused(seeded: Memory, origin: str) -> None:
    client = open_client(seeded)
    [fact] = seeded.list(user_id="ada")
    before = snapshot(seeded)
    for method, path, body in writes(fact.id):
        response = client.request(method, path, json=body, headers={**JSON, "Origin": origin})
        assert response.status_code == 403, (method, path)
        assert "may not change" in response.json()["detail"]
    assert snapshot(seeded) == before


def test_writes_from_the_service_own_origin_or_without_origin_pass(seeded: Memory) -> None:
    client = open_client(seeded)
    [fact] = seeded.list(user_id="ada")
    pin = f"/v1/users/ada/facts/{fact.id}/pin"
    assert client.post(pin, headers={**JSON, "Origin": "http://localhost:8765"}).is_success
    assert client.post(pin, headers=JSON).is_success  # not a browser: no Origin
    # A foreign page may ask to read, but is given no CORS grant to see the answer.
    read = client.get("/v1/users/ada/facts", headers={"Origin": "http://attacker.example"})
    assert read.status_code == 200 and "access-control-allow-origin" not in read.headers


def test_an_allowed_host_may_send_writes(seeded: Memory) -> None:
    client = open_client(seeded, allowed_hosts=["memory.internal"])
    [fact] = seeded.list(user_id="ada")
    headers = {**JSON, "Origin": "https://memory.internal", "Host": "127.0.0.1:8765"}
    assert client.post(f"/v1/users/ada/facts/{fact.id}/pin", headers=headers).is_success


# -- Content-Type -----------------------------------------------------------------


@pytest.mark.parametrize(
    "content_type",
    [None, "text/plain", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x"],
)
def test_writes_must_declare_json(seeded: Memory, content_type: str | None) -> None:
    client = open_client(seeded)
    [fact] = seeded.list(user_id="ada")
    before = snapshot(seeded)
    headers = {"Content-Type": content_type} if content_type else {}
    document = b'{"format": "recallmem.export", "version": 1, "facts": [], "profiles": []}'
    for method, path, body in [
        ("POST", "/v1/users/ada/import", document),
        ("POST", "/v1/users/ada/facts", b'{"content": "Planted", "category": "goal"}'),
        ("POST", f"/v1/users/ada/facts/{fact.id}/pin", None),
        ("PUT", "/v1/users/ada/profile", b'{"background": {"summary": "Planted"}}'),
        ("PATCH", f"/v1/users/ada/facts/{fact.id}", b'{"content": "Overwritten"}'),
    ]:
        response = client.request(method, path, content=body, headers=headers)
        assert response.status_code == 415, (method, path, response.text)
        assert "Content-Type: application/json" in response.json()["detail"]
    assert snapshot(seeded) == before


def test_json_with_a_charset_is_json(seeded: Memory) -> None:
    client = open_client(seeded)
    body = b'{"content": "Reads poetry", "category": "preference"}'
    headers = {"Content-Type": "Application/JSON; charset=utf-8"}
    assert client.post("/v1/users/ada/facts", content=body, headers=headers).status_code == 201


def test_the_schema_gives_bodyless_writes_an_empty_json_body(seeded: Memory) -> None:
    schema = open_client(seeded).get("/openapi.json").json()
    pin = schema["paths"]["/v1/users/{user_id}/facts/{fact_id}/pin"]["post"]
    assert pin["requestBody"]["required"] is True
    assert pin["requestBody"]["content"]["application/json"]["schema"]["maxProperties"] == 0
    assert "415" in pin["responses"]


# -- 405 --------------------------------------------------------------------------


def test_every_405_names_exactly_the_methods_served(app: FastAPI) -> None:
    client = client_for(app, ADA)
    schema = client.get("/openapi.json").json()
    paths: dict[str, set[str]] = {
        path: {m.upper() for m in operations} for path, operations in schema["paths"].items()
    }
    paths |= {"/": {"GET"}, "/docs": {"GET"}, "/static/{name}": {"GET"}}
    values = {"user_id": "me", "fact_id": "f" * 32, "letter_id": "1", "name": "app.js"}
    for template, documented in paths.items():
        path = template.format(**values)
        for method in {"GET", "POST", "PUT", "PATCH", "DELETE"} - documented:
            response = client.request(method, path, headers=JSON)
            assert response.status_code == 405, (method, path)
            allowed = {m.strip() for m in response.headers["allow"].split(",")}
            assert allowed - {"HEAD"} == documented, (method, path, allowed)
            assert all(m in response.json()["detail"] for m in documented)


# -- who is asking, before the body -----------------------------------------------

MIB = 1024 * 1024


class Upload:
    """A client that declares a large body and sends it a chunk at a time, when asked."""

    def __init__(self, path: str, chunks: int, token: str | None, declared: bool = True) -> None:
        self.path = path
        self.chunks = chunks
        self.token = token
        self.declared = declared  # False: no Content-Length (a chunked upload)
        self.pulled = 0
        self.status: int | None = None
        self.headers: dict[str, str] = {}
        self.more = asyncio.Event()  # set to let the client send the rest
        self.more.set()

    async def receive(self) -> dict[str, Any]:
        if self.pulled >= 1:
            await self.more.wait()
        self.pulled += 1
        last = self.pulled >= self.chunks
        return {"type": "http.request", "body": b" " * MIB, "more_body": not last}

    async def send(self, message: dict[str, Any]) -> None:
        if message["type"] == "http.response.start":
            self.status = message["status"]
            self.headers = {k.decode(): v.decode() for k, v in message["headers"]}

    async def run(self, app: FastAPI) -> Upload:
        headers = [(b"host", b"localhost"), (b"content-type", b"application/json")]
        if self.declared:
            headers.append((b"content-length", str(self.chunks * MIB).encode()))
        else:
            headers.append((b"transfer-encoding", b"chunked"))
        if self.token:
            headers.append((b"authorization", f"Bearer {self.token}".encode()))
        scope = {
            "type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1",
            "method": "POST", "scheme": "http", "path": self.path, "raw_path": self.path.encode(),
            "root_path": "", "query_string": b"", "headers": headers,
            "client": ("127.0.0.1", 50000), "server": ("127.0.0.1", 8765),
        }  # fmt: skip
        await asyncio.wait_for(app(scope, self.receive, self.send), timeout=60)
        return self


async def test_an_unknown_caller_is_refused_before_the_body_is_read(memory: Memory) -> None:
    app = create_app(memory, token_settings(max_import_bytes=128 * MIB))
    for token, path, status in [
        (None, "/v1/users/ada/import", 401),
        ("tok-not-configured-anywhere", "/v1/users/ada/import", 401),
        (None, "/v1/not-a-route/import", 404),
        (None, "/v1/users/ada/facts/x/import", 404),
    ]:
        upload = await Upload(path, chunks=62, token=token).run(app)
        assert (upload.status, upload.pulled) == (status, 0), (token, path)
    # A known caller's body is read, to the end (so the count above means something).
    upload = await Upload("/v1/users/me/import", chunks=3, token=ADA).run(app)
    assert (upload.status, upload.pulled) == (422, 3)


async def test_a_body_over_the_bound_is_refused_before_it_is_read(memory: Memory) -> None:
    app = create_app(memory, token_settings(max_import_bytes=2 * MIB))
    upload = await Upload("/v1/users/me/import", chunks=62, token=ADA).run(app)
    assert (upload.status, upload.pulled) == (413, 0)
    assert upload.headers["connection"] == "close"
    upload = await Upload("/v1/users/me/facts", chunks=2, token=ADA).run(app)
    assert (upload.status, upload.pulled) == (413, 0)  # 256 KiB outside imports


async def test_an_undeclared_body_is_cut_off_at_the_bound(memory: Memory) -> None:
    app = create_app(memory, token_settings(max_import_bytes=2 * MIB))
    upload = await Upload("/v1/users/me/import", chunks=62, token=ADA, declared=False).run(app)
    assert (upload.status, upload.pulled) == (413, 3)  # read to just past 2 MiB, no further
    assert upload.headers["connection"] == "close"
    upload = await Upload("/v1/users/me/facts", chunks=62, token=ADA, declared=False).run(app)
    assert (upload.status, upload.pulled) == (413, 1)
    upload = await Upload("/v1/users/me/import", chunks=62, token=None, declared=False).run(app)
    assert (upload.status, upload.pulled) == (401, 0)


async def test_concurrent_large_bodies_are_bounded(memory: Memory) -> None:
    app = create_app(memory, token_settings(max_concurrent_imports=1))
    first = Upload("/v1/users/me/import", chunks=3, token=ADA)
    first.more.clear()  # sends one chunk, then stalls holding its slot
    reading = asyncio.create_task(first.run(app))
    while first.pulled < 1:
        await asyncio.sleep(0.01)
    second = await Upload("/v1/users/me/import", chunks=3, token=ADA).run(app)
    assert (second.status, second.pulled) == (503, 0)
    assert second.headers["retry-after"] == "5"
    first.more.set()
    assert (await reading).status == 422  # whitespace is no export, but it was all read
    third = await Upload("/v1/users/me/import", chunks=3, token=ADA).run(app)
    assert (third.status, third.pulled) == (422, 3)  # the slot was given back


def test_a_stalled_unauthenticated_upload_is_answered_at_once(memory: Memory) -> None:
    """Over a real socket: headers and a little of a 60 MB body, then nothing. The 401
    comes back without the server waiting for the rest."""
    with LiveServer(create_app(memory, token_settings())) as url:
        where = urlsplit(url)
        with socket.create_connection((where.hostname, where.port), timeout=10) as sock:
            sock.sendall(
                b"POST /v1/users/ada/import HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                b"Content-Type: application/json\r\nContent-Length: 60000000\r\n\r\n" + b" " * 65536
            )
            answer = sock.recv(4096)
    assert answer.startswith(b"HTTP/1.1 401"), answer[:200]


# -- unreadable bodies ------------------------------------------------------------


@pytest.mark.parametrize(
    ("body", "words"),
    [
        (b"[" * 100_000 + b"]" * 100_000, "nested too deeply"),
        (b'{"format": "recallmem.export", "version": ' + b"9" * 5000 + b"}", "4300 digits"),
        (b'{"content": "\xff\xfe", "category": "goal"}', "not UTF-8"),
    ],
)
def test_unreadable_json_is_a_4xx_problem(ada: TestClient, body: bytes, words: str) -> None:
    for path, status in [
        ("/v1/users/me/import", 422),
        ("/v1/users/me/facts", 400),
        ("/v1/users/me/search", 400),
    ]:
        response = ada.post(path, content=body, headers=JSON)
        assert response.status_code == status, (path, response.text[:300])
        assert response.headers["content-type"].startswith(PROBLEM)
        assert words in response.json()["detail"]


def test_a_query_parameter_given_twice_is_refused_and_nothing_is_purged(
    seeded: Memory, app: FastAPI, ada: TestClient
) -> None:
    # With the last value winning, "purge=false&purge=true" read as a purge.
    response = ada.delete("/v1/users/me/memory?purge=false&purge=true")
    assert response.status_code == 400 and "'purge' more than once" in response.json()["detail"]
    assert [f.content for f in seeded.list(user_id="ada")] == [SECRET]
    assert ada.get("/v1/users/me/facts?limit=5").status_code == 200


def test_two_authorization_headers_are_refused(seeded: Memory, app: FastAPI) -> None:
    client = TestClient(app)
    raw = [(b"authorization", f"Bearer {ADA}".encode()), (b"authorization", b"Bearer other")]
    response = client.get("/v1/users/me/facts", headers=raw)
    assert response.status_code == 401 and "one Authorization header" in response.text


# -- what every response says about itself ---------------------------------------------


def test_every_answer_is_private_and_keeps_its_declared_type(seeded: Memory) -> None:
    client = open_client(seeded)
    answers = [
        client.get("/v1/users/ada/facts"),  # personal data
        client.get("/v1/users/ada/export"),
        client.post("/v1/users/ada/search", json={"query": "vase"}, headers=JSON),
        client.get("/v1/users/ada/facts", headers={"Host": "evil.example"}),  # refused early
        client.get("/v1/nowhere"),  # a problem body
        client.get("/"),  # the inspector page
    ]
    for answer in answers:
        assert answer.headers["cache-control"] == "no-store", answer.request.url
        assert answer.headers["x-content-type-options"] == "nosniff", answer.request.url
    streamed = client.post("/v1/chat/stream", json={"message": "hi"}, headers=JSON)
    assert streamed.headers["x-content-type-options"] == "nosniff"  # 409: no chat model
