"""The facts routes against real embedded Chroma: every operation and what it leaves behind."""

from __future__ import annotations

from typing import Any

from fastapi.testclient import TestClient
from recallmem.memory import Memory
from recallmem.types import Category, Fact, Source, Status
from serverkit import JSON


def contents(response_json: dict) -> list[str]:
    return [f["content"] for f in response_json["items"]]


def test_create_records_a_manual_source_and_returns_the_stored_fact(
    ada: TestClient, add_fact: Any
) -> None:
    fact = add_fact(
        ada,
        "Prefers reports in Chinese",
        quote="请用中文写报告",
        pinned=True,
        thread_id="t1",
        agent_id="writer",
    )
    assert fact["user_id"] == "ada"
    assert fact["pinned"] is True
    assert (fact["agent_id"], fact["thread_id"]) == ("writer", "t1")
    assert fact["sources"][0]["extractor"] == "manual"
    assert fact["sources"][0]["quote"] == "请用中文写报告"


def test_list_filters_by_category_status_agent_thread_and_text(
    ada: TestClient, add_fact: Any
) -> None:
    add_fact(ada, "Likes green tea", category="preference")
    add_fact(ada, "Works on the front-end team", category="context", thread_id="t9")
    add_fact(ada, "Writes TypeScript daily", category="knowledge", agent_id="coder")
    gone = add_fact(ada, "Owns a red bicycle", category="identity")
    assert ada.delete(f"/v1/users/me/facts/{gone['id']}").status_code == 200

    assert contents(ada.get("/v1/users/me/facts", params={"category": "preference"}).json()) == [
        "Likes green tea"
    ]
    assert contents(ada.get("/v1/users/me/facts", params={"thread_id": "t9"}).json()) == [
        "Works on the front-end team"
    ]
    assert contents(ada.get("/v1/users/me/facts", params={"agent_id": "coder"}).json()) == [
        "Writes TypeScript daily"
    ]
    assert contents(ada.get("/v1/users/me/facts", params={"text": "TYPESCRIPT"}).json()) == [
        "Writes TypeScript daily"
    ]
    deleted = ada.get("/v1/users/me/facts", params={"status": "deleted"}).json()
    assert contents(deleted) == ["Owns a red bicycle"]
    assert "Owns a red bicycle" not in contents(ada.get("/v1/users/me/facts").json())
    assert len(ada.get("/v1/users/me/facts", params={"status": "all"}).json()["items"]) == 4


def test_pagination_walks_every_fact_once(ada: TestClient, add_fact: Any) -> None:
    written = {add_fact(ada, f"Fact number {n} about topic {n * 7}")["id"] for n in range(7)}
    seen: list[str] = []
    offset: int | None = 0
    while offset is not None:
        page = ada.get("/v1/users/me/facts", params={"limit": 3, "offset": offset}).json()
        seen += [f["id"] for f in page["items"]]
        offset = page["next_offset"]
    assert sorted(seen) == sorted(written)


def test_detail_has_evidence_history_and_supersede_lineage(
    ada: TestClient, add_fact: Any, memory: Memory
) -> None:
    old = Fact(
        id="f-old",
        content="Editor in the tech desk",
        category=Category.CONTEXT,
        user_id="ada",
        status=Status.SUPERSEDED,
        superseded_by="f-mid",
    )
    mid = Fact(
        id="f-mid",
        content="Editor in the product desk",
        category=Category.CONTEXT,
        user_id="ada",
        status=Status.SUPERSEDED,
        supersedes="f-old",
        superseded_by="f-new",
    )
    new = Fact(
        id="f-new",
        content="Product manager",
        category=Category.CONTEXT,
        user_id="ada",
        supersedes="f-mid",
        sources=(
            Source(
                thread_id="t3",
                message_ids=("m1",),
                quote="我转岗做产品了",
                extractor="fake-chat-model",
                prompt_version="extract@3",
            ),
        ),
    )
    memory.put([old, mid, new])

    detail = ada.get("/v1/users/me/facts/f-mid").json()
    assert [f["id"] for f in detail["lineage"]] == ["f-old", "f-mid", "f-new"]
    newest = ada.get("/v1/users/me/facts/f-new").json()
    assert newest["source"] == "extraction"  # the model's name, not manual or planner
    assert newest["evidence"] == [
        {
            "kind": "extraction",
            "thread_id": "t3",
            "message_ids": ["m1"],
            "quote": "我转岗做产品了",
            "at": newest["fact"]["sources"][0]["at"],
            "extractor": "fake-chat-model",
            "prompt_version": "extract@3",
        }
    ]
    assert [f["id"] for f in newest["lineage"]] == ["f-old", "f-mid", "f-new"]


def test_patch_re_embeds_and_keeps_the_old_text(ada: TestClient, add_fact: Any) -> None:
    fact = add_fact(ada, "Drinks coffee every morning", category="behavior")
    response = ada.patch(
        f"/v1/users/me/facts/{fact['id']}",
        json={"content": "Drinks matcha every morning", "reason": "user said so"},
    )
    assert response.status_code == 200
    edited = response.json()
    assert edited["content"] == "Drinks matcha every morning"
    assert edited["history"][0]["content"] == "Drinks coffee every morning"
    assert edited["history"][0]["reason"] == "user said so"
    hits = ada.post("/v1/users/me/search", json={"query": "matcha"}).json()["hits"]
    assert [h["fact"]["id"] for h in hits] == [fact["id"]]
    assert ada.get(f"/v1/users/me/facts/{fact['id']}").json()["history"] == edited["history"]


def test_patch_status_and_confidence(ada: TestClient, add_fact: Any) -> None:
    fact = add_fact(ada, "Finish the quarterly report", category="todo")
    done = ada.patch(f"/v1/users/me/facts/{fact['id']}", json={"status": "done", "confidence": 0.6})
    assert (done.json()["status"], done.json()["confidence"]) == ("done", 0.6)
    assert done.json()["history"] == []


def test_soft_delete_leaves_recall_but_stays_for_audit(ada: TestClient, add_fact: Any) -> None:
    fact = add_fact(ada, "Allergic to peanuts", category="identity")
    response = ada.delete(f"/v1/users/me/facts/{fact['id']}")
    assert response.json() == {"affected": 1, "purged": False}
    assert ada.post("/v1/users/me/search", json={"query": "peanuts"}).json()["hits"] == []
    assert ada.get(f"/v1/users/me/facts/{fact['id']}").json()["fact"]["status"] == "deleted"


def test_purge_erases(ada: TestClient, add_fact: Any, memory: Memory) -> None:
    fact = add_fact(ada, "Lives in Hangzhou", category="identity")
    assert ada.delete(f"/v1/users/me/facts/{fact['id']}", params={"purge": True}).json() == {
        "affected": 1,
        "purged": True,
    }
    assert ada.get(f"/v1/users/me/facts/{fact['id']}").status_code == 404
    assert memory.list(user_id="ada", status=None) == []


def test_pin_and_unpin(ada: TestClient, add_fact: Any) -> None:
    fact = add_fact(ada, "Team standup is at 10:00", category="context")
    assert ada.post(f"/v1/users/me/facts/{fact['id']}/pin", headers=JSON).json()["pinned"] is True
    assert ada.get(f"/v1/users/me/facts/{fact['id']}").json()["fact"]["pinned"] is True
    assert (
        ada.post(f"/v1/users/me/facts/{fact['id']}/unpin", headers=JSON).json()["pinned"] is False
    )


def test_a_duplicate_confirms_the_existing_fact(ada: TestClient, add_fact: Any) -> None:
    first = add_fact(ada, "Prefers dark mode")
    body = {"content": "prefers dark mode", "category": "preference"}
    again = ada.post("/v1/users/me/facts", json=body)
    assert again.status_code == 200  # nothing was created
    assert again.headers["Recallmem-Outcome"] == "confirmed"
    second = again.json()
    assert second["id"] == first["id"]
    assert second["confirmations"] == 1
    assert [f["id"] for f in ada.get("/v1/users/me/facts").json()["items"]] == [first["id"]]


def test_a_new_fact_is_created(ada: TestClient) -> None:
    body = {"content": "Keeps a sourdough starter", "category": "identity"}
    created = ada.post("/v1/users/me/facts", json=body)
    assert created.status_code == 201
    assert created.headers["Recallmem-Outcome"] == "created"
    assert created.json()["confirmations"] == 0
