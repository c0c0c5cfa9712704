"""Whole-memory routes (export, import, clear), the profile, and the retrieval view."""

from __future__ import annotations

from typing import Any

import pytest
from fastapi.testclient import TestClient
from recallmem.config import MemoryConfig
from recallmem.memory import Memory
from recallmem.server.app import create_app
from recallmem.testing import HashingEmbeddings
from recallmem.types import Category, Fact
from serverkit import ADA, client_for, token_settings


def snapshot(memory: Memory, user: str) -> list[dict[str, Any]]:
    facts = memory.list(user_id=user, status=None, limit=1000)
    return sorted(
        (f.model_dump(mode="json", exclude={"last_accessed_at"}) for f in facts),
        key=lambda f: f["id"],
    )


def test_export_streams_the_library_format(ada: TestClient, memory: Memory, add_fact: Any) -> None:
    add_fact(ada, "Prefers reports in Chinese")
    ada.put("/v1/users/me/profile", json={"work_context": {"summary": "Front-end team"}})
    response = ada.get("/v1/users/me/export")
    assert response.headers["content-type"] == "application/json"
    assert "attachment" in response.headers["content-disposition"]
    streamed = response.json()
    library = memory.export(user_id="ada")
    streamed.pop("exported_at"), library.pop("exported_at")
    assert streamed == library


def test_an_export_with_its_vectors_imports_without_embedding(
    ada: TestClient, memory: Memory, add_fact: Any, tmp_path: Any
) -> None:
    add_fact(ada, "Prefers reports in Chinese")
    add_fact(ada, "Keeps two kayaks in the shed")
    document = ada.get("/v1/users/me/export?embeddings=true").json()
    assert len(document["embeddings"]["vectors"]) == 2
    with Memory(MemoryConfig(home=tmp_path / "other"), embeddings=HashingEmbeddings()) as fresh:
        client = client_for(create_app(fresh, token_settings()), ADA)
        report = client.post("/v1/users/me/import", json=document)
        assert report.status_code == 200, report.text
        assert report.json()["embedded"] == 0 and report.json()["imported"] == 2
        assert snapshot(fresh, "ada") == snapshot(memory, "ada")


def test_a_large_export_arrives_in_chunks_and_round_trips(
    ada: TestClient, memory: Memory, tmp_path: Any
) -> None:
    memory.put(
        [
            Fact(
                content=f"Visited city number {n} in spring {1990 + n % 30}",
                category=Category.CONTEXT,
                user_id="ada",
            )
            for n in range(1200)
        ]
    )
    with ada.stream("GET", "/v1/users/me/export") as response:
        chunks = list(response.iter_raw())
    assert len(chunks) >= 3
    document = b"".join(chunks)

    with Memory(MemoryConfig(home=tmp_path / "other"), embeddings=HashingEmbeddings()) as fresh:
        client = client_for(create_app(fresh, token_settings()), ADA)
        report = client.post(
            "/v1/users/me/import", content=document, headers={"Content-Type": "application/json"}
        )
        assert report.status_code == 200, report.text
        assert report.json() == {
            "imported": 1200,
            "profiles": 0,
            "users": ["ada"],
            "embedded": 1200,
        }
        assert snapshot(fresh, "ada") == snapshot(memory, "ada")


def test_a_corrupt_import_names_its_rows_and_writes_nothing(
    ada: TestClient, memory: Memory, add_fact: Any
) -> None:
    add_fact(ada, "Keeps a bonsai tree")
    before = snapshot(memory, "ada")
    document = ada.get("/v1/users/me/export").json()
    good = dict(document["facts"][0], id="new-good-row", content="Plays the cello")
    document["facts"] = [
        good,
        dict(good, id="bad-category", category="hobby"),
        dict(good, id="bad-confidence", confidence=7),
        {"id": "no-content", "category": "preference", "user_id": "ada"},
        dict(good, id="naive-time", created_at="2024-01-01T00:00:00"),
    ]
    response = ada.post("/v1/users/me/import", json=document)
    assert response.status_code == 422
    assert response.headers["content-type"].startswith("application/problem+json")
    body = response.json()
    by_row = {r["row"]: r["reason"] for r in body["rejected"]}
    assert set(by_row) == {1, 2, 3, 4}
    assert "category" in by_row[1]
    assert "confidence" in by_row[2]
    assert "content" in by_row[3]
    assert "timezone" in by_row[4]
    assert "nothing was written" in body["detail"]
    assert snapshot(memory, "ada") == before


@pytest.mark.parametrize(
    ("document", "reason"),
    [
        ({"format": "something-else", "version": 1, "facts": []}, "not a recallmem export"),
        ({"format": "recallmem.export", "version": 99, "facts": []}, "unsupported export version"),
        ({"format": "recallmem.export", "version": 1, "facts": {}}, "must be lists"),
    ],
)
def test_an_import_that_is_not_an_export_is_rejected(
    ada: TestClient, document: dict[str, Any], reason: str
) -> None:
    response = ada.post("/v1/users/me/import", json=document)
    assert response.status_code == 422
    assert reason in response.json()["rejected"][0]["reason"]


def test_an_import_that_is_not_json_is_rejected(ada: TestClient) -> None:
    for body in (b"\x89PNG\r\n", b'{"format": "recallmem.export", "facts": [', b""):
        response = ada.post(
            "/v1/users/me/import", content=body, headers={"Content-Type": "application/json"}
        )
        assert response.status_code == 422
        assert response.headers["content-type"].startswith("application/problem+json")
        assert "not JSON" in response.json()["detail"]
        assert response.json()["rejected"] == [{"row": -1, "reason": "not JSON"}]


def test_imports_have_their_own_size_bound(memory: Memory) -> None:
    client = client_for(create_app(memory, token_settings(max_import_bytes=2048)), ADA)
    body = b'{"format": "recallmem.export", "version": 1, "facts": [' + b" " * 4096 + b"]}"
    response = client.post(
        "/v1/users/me/import", content=body, headers={"Content-Type": "application/json"}
    )
    assert response.status_code == 413
    assert "RECALLMEM_MAX_IMPORT_BYTES" in response.json()["detail"]


def test_clear_cascades_by_thread_then_agent_then_user(
    ada: TestClient, memory: Memory, add_fact: Any
) -> None:
    add_fact(ada, "Thread one fact about kites", thread_id="t1")
    add_fact(ada, "Agent fact about violins", agent_id="music")
    add_fact(ada, "Shared fact about tea")
    ada.put("/v1/users/me/profile", json={"background": {"summary": "Likes kites"}})

    assert ada.delete("/v1/users/me/memory", params={"thread_id": "t1"}).json()["affected"] == 1
    assert {f.content for f in memory.list(user_id="ada")} == {
        "Shared fact about tea",
        "Agent fact about violins",
    }
    assert ada.delete("/v1/users/me/memory", params={"agent_id": "music"}).json()["affected"] == 1
    assert [f.content for f in memory.list(user_id="ada")] == ["Shared fact about tea"]

    response = ada.delete("/v1/users/me/memory", params={"purge": True})
    assert response.json() == {"affected": 3, "purged": True}
    assert memory.list(user_id="ada", status=None) == []
    assert ada.get("/v1/users/me/profile").json()["background"]["summary"] == ""


def test_profile_replace_and_read(ada: TestClient) -> None:
    empty = ada.get("/v1/users/me/profile").json()
    assert empty["user_id"] == "ada" and empty["top_of_mind"] == {"summary": "", "updated_at": None}

    first = ada.put(
        "/v1/users/me/profile",
        json={
            "work_context": {"summary": "Front-end team, TypeScript"},
            "top_of_mind": {"summary": "Vue report due Friday"},
        },
    ).json()
    assert first["work_context"]["summary"] == "Front-end team, TypeScript"
    stamped = first["work_context"]["updated_at"]
    assert stamped is not None

    second = ada.put(
        "/v1/users/me/profile",
        json={
            "work_context": {"summary": "Front-end team, TypeScript"},
            "recent": {"summary": "Shipped the dashboard"},
        },
    ).json()
    assert second["work_context"]["updated_at"] == stamped  # unchanged section keeps its time
    assert second["top_of_mind"]["summary"] == ""  # replaced: left-out sections are emptied
    assert ada.get("/v1/users/me/profile").json() == second

    agent = ada.put(
        "/v1/users/me/profile",
        params={"agent_id": "writer"},
        json={"background": {"summary": "Writes for the weekly"}},
    ).json()
    assert agent["agent_id"] == "writer"
    assert ada.get("/v1/users/me/profile").json()["background"]["summary"] == ""


def test_search_shows_the_score_breakdown_of_every_hit(ada: TestClient, add_fact: Any) -> None:
    add_fact(ada, "Writes TypeScript at work", category="knowledge", confidence=0.95)
    add_fact(ada, "Prefers reports in Chinese", category="preference", confidence=0.7)
    add_fact(ada, "Has a cat named Mochi", category="identity")
    result = ada.post("/v1/users/me/search", json={"query": "TypeScript reports", "k": 3}).json()
    assert result["query"] == "TypeScript reports"
    assert result["took_ms"] >= 0
    hits = result["hits"]
    assert hits[0]["fact"]["content"] == "Writes TypeScript at work"
    assert [h["score"] for h in hits] == sorted((h["score"] for h in hits), reverse=True)
    for hit in hits:
        assert set(hit["parts"]) == {
            "dense",
            "lexical",
            "recency",
            "confidence",
            "time",
            "newer",
            "key",
        }
        assert all(0.0 <= v <= 1.0 for k, v in hit["parts"].items() if k != "key")
    assert hits[0]["parts"]["lexical"] > 0

    only = ada.post(
        "/v1/users/me/search", json={"query": "TypeScript reports", "categories": ["preference"]}
    ).json()
    assert [h["fact"]["category"] for h in only["hits"]] == ["preference"]


def test_search_includes_inactive_only_when_asked(ada: TestClient, add_fact: Any) -> None:
    fact = add_fact(ada, "Used to live in Berlin", category="identity")
    ada.delete(f"/v1/users/me/facts/{fact['id']}")
    assert ada.post("/v1/users/me/search", json={"query": "Berlin"}).json()["hits"] == []
    hits = ada.post("/v1/users/me/search", json={"query": "Berlin", "include_inactive": True})
    assert [h["fact"]["id"] for h in hits.json()["hits"]] == [fact["id"]]


def test_metrics_count_facts_and_recalls(ada: TestClient, admin: TestClient, add_fact: Any) -> None:
    fact = add_fact(ada, "Likes hiking in the Alps")
    add_fact(ada, "Drives an old Volvo")
    ada.delete(f"/v1/users/me/facts/{fact['id']}")
    ada.post("/v1/users/me/search", json={"query": "Volvo"})
    ada.post("/v1/users/me/search", json={"query": "zzzz qqqq", "min_score": 0.99})
    metrics = ada.get("/v1/users/me/metrics").json()
    assert metrics["scope"] == "user:ada"
    assert metrics["facts"] == {"active": 1, "superseded": 0, "done": 0, "deleted": 1, "total": 2}
    assert metrics["recall"]["count"] == 2
    assert metrics["recall"]["with_hits"] == 1
    assert metrics["recall"]["hit_rate"] == 0.5
    assert metrics["recall"]["p95_ms"] >= metrics["recall"]["p50_ms"] > 0
    service = admin.get("/v1/metrics").json()
    assert service["scope"] == "service"
    assert service["facts"]["total"] == 2
    assert service["recall"]["count"] == 2


def test_health(ada: TestClient) -> None:
    health = ada.get("/v1/health").json()
    assert health == {
        "status": "ok",
        "version": health["version"],
        "store": "chroma-embedded",
        "problems": [],
        "auth": "bearer",
    }
