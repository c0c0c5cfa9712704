"""The inspector's routes: weights beside the parts, "why not this one", the record of
what reached the user's models, and refused user ids explained in words."""

from __future__ import annotations

from typing import Any

import pytest
from fastapi.testclient import TestClient
from langchain.agents import create_agent
from recallmem.agent.middleware import MemoryMiddleware
from recallmem.memory import Memory
from recallmem.server.app import create_app
from recallmem.server.schemas import MAX_SEARCH_K
from recallmem.testing import FakeChatModel
from serverkit import ADA, BOB, client_for, token_settings

PARTS = ("dense", "lexical", "recency", "confidence", "time", "newer")  # the weighted parts


def weighted_sum(hit: dict[str, Any]) -> float:
    return sum(hit["weights"][name] * hit["parts"][name] for name in PARTS)


def test_search_hits_carry_the_weights_their_score_sums(ada: TestClient, add_fact: Any) -> None:
    add_fact(ada, "Writes TypeScript at work", category="knowledge")
    add_fact(ada, "Prefers reports in Chinese", category="preference")
    hits = ada.post("/v1/users/me/search", json={"query": "TypeScript reports"}).json()["hits"]
    assert len(hits) == 2
    for hit in hits:
        assert set(hit["weights"]) == set(PARTS)
        assert hit["weights"]["dense"] > 0
        # The parts are rounded to 4 places, the score to 6: equal to rounding.
        assert hit["score"] == pytest.approx(weighted_sum(hit), abs=1e-3)


@pytest.fixture
def many(ada: TestClient, add_fact: Any) -> list[dict[str, Any]]:
    # Each shares fewer words with the query than the one before, so no two tie.
    texts = [
        "Writes TypeScript reports for the front-end team",
        "Debugs TypeScript compiler errors on Fridays",
        "Sends the quarterly reports to finance",
        "Sings in a choir on Tuesdays",
    ]
    return [add_fact(ada, text, category="knowledge") for text in texts]


def test_explain_ranks_a_fact_outside_the_top_k(ada: TestClient, many: Any) -> None:
    query = {"query": "TypeScript reports for the front-end team", "k": 2}
    top = ada.post("/v1/users/me/search", json=query).json()["hits"]
    ranked = ada.post("/v1/users/me/search", json={**query, "k": len(many)}).json()["hits"]
    assert len({h["score"] for h in ranked}) == len(many)  # no ties to order arbitrarily
    last = ranked[-1]
    assert last["fact"]["id"] not in {h["fact"]["id"] for h in top}

    response = ada.post(
        "/v1/users/me/search/explain", json={**query, "fact_id": last["fact"]["id"]}
    )
    assert response.status_code == 200, response.text
    explained = response.json()
    assert explained["rank"] == len(many) and explained["in_top_k"] is False
    assert explained["depth"] == MAX_SEARCH_K
    assert explained["hit"]["score"] == last["score"]
    assert explained["hit"]["parts"] == last["parts"]
    assert explained["hit"]["score"] == pytest.approx(weighted_sum(explained["hit"]), abs=1e-3)
    assert explained["kth_score"] == top[1]["score"]
    assert f"ranked {len(many)}: below the top 2" in explained["reason"]
    assert "loses most on" in explained["reason"]

    first = ada.post(
        "/v1/users/me/search/explain", json={**query, "fact_id": top[0]["fact"]["id"]}
    ).json()
    assert first["rank"] == 1 and first["in_top_k"] and first["reason"] == "ranked 1: in the top 2"


def test_explain_says_why_a_fact_is_not_ranked(ada: TestClient, add_fact: Any) -> None:
    gone = add_fact(ada, "Used to live in Berlin", category="identity")
    ada.delete(f"/v1/users/me/facts/{gone['id']}")
    own = add_fact(ada, "Reviews pull requests for the bot", agent_id="reviewer")
    other = add_fact(ada, "Lives in Berlin now", category="context")

    def explain(fact_id: str, **extra: Any) -> dict[str, Any]:
        body = {"query": "Berlin", "fact_id": fact_id, **extra}
        response = ada.post("/v1/users/me/search/explain", json=body)
        assert response.status_code == 200, response.text
        result: dict[str, Any] = response.json()
        return result

    deleted = explain(gone["id"])
    assert deleted["rank"] is None and deleted["hit"] is None
    assert "deleted; recall searches active facts only" in deleted["reason"]
    assert explain(gone["id"], include_inactive=True)["rank"] is not None
    assert "agent 'reviewer'" in explain(own["id"])["reason"]
    assert explain(own["id"], agent_id="reviewer")["rank"] is not None
    assert (
        "category context is not among" in explain(other["id"], categories=["identity"])["reason"]
    )


def test_explain_refuses_another_users_fact(
    ada: TestClient, bob: TestClient, add_fact: Any
) -> None:
    secret = add_fact(bob, "Bob's bank is in Zurich")
    response = ada.post(
        "/v1/users/me/search/explain", json={"query": "bank", "fact_id": secret["id"]}
    )
    assert response.status_code == 404
    assert "Zurich" not in response.text
    too_deep = ada.post(
        "/v1/users/me/search/explain",
        json={"query": "bank", "fact_id": secret["id"], "k": MAX_SEARCH_K + 1},
    )
    assert too_deep.status_code == 422


def recall_call(query: str) -> Any:
    from langchain_core.messages import AIMessage

    return AIMessage(
        content="", tool_calls=[{"name": "recall", "args": {"query": query}, "id": "call-1"}]
    )


def test_chat_turns_fill_the_retrieval_record(memory: Memory) -> None:
    memory.remember("Prefers reports in Chinese", user_id="ada", category="preference")
    memory.remember("Bob prefers reports in French", user_id="bob", category="preference")
    model = FakeChatModel(responses=[recall_call("report language"), "好的，用中文。"])
    app = create_app(memory, token_settings(), model=model)
    ada, bob = client_for(app, ADA), client_for(app, BOB)
    said = "Write my weekly report, as usual"
    assert ada.post("/v1/chat/stream", json={"message": said, "thread_id": "t-1"}).is_success

    answer = ada.get("/v1/users/me/retrievals").json()
    records = answer["records"]
    assert {r["thread_id"] for r in records} == {"t-1"}
    assert len({r["turn_id"] for r in records}) == 1
    by_trigger = {r["trigger"]: r for r in records}
    assert set(by_trigger) == {"block", "cue", "tool"}  # "as usual" is a cue
    block, tool = by_trigger["block"], by_trigger["tool"]
    assert block["query"] == said and block["tokens"] > 0
    [shown] = block["shown"]  # a standing preference: the block's core shows it, unscored
    assert shown["role"] == "core"
    [recalled] = tool["shown"]
    assert tool["query"] == "report language" and recalled["role"] == "recalled"
    assert recalled["fact_id"] == shown["fact_id"] and recalled["score"] > 0
    assert set(recalled["parts"]) == {*PARTS, "key"}
    assert max(recalled["parts"][name] for name in PARTS) > 0
    assert answer["facts"][recalled["fact_id"]] == {
        "content": "Prefers reports in Chinese", "category": "preference", "status": "active",
        "agent_id": None,
    }  # fmt: skip
    # newest first: the tool's recall came after the block that began the turn
    triggers = [r["trigger"] for r in records]
    assert triggers.index("tool") < triggers.index("block")
    assert "French" not in str(answer)
    assert bob.get("/v1/users/me/retrievals").json() == {"records": [], "facts": {}}
    assert bob.get("/v1/users/ada/retrievals").status_code == 403
    one = ada.get("/v1/users/me/retrievals", params={"limit": 1}).json()["records"]
    assert [r["trigger"] for r in one] == ["tool"]
    assert ada.get("/v1/users/me/retrievals", params={"limit": 0}).status_code == 422
    other = ada.get("/v1/users/me/retrievals", params={"thread_id": "t-2"}).json()
    assert other == {"records": [], "facts": {}}


def test_the_record_covers_every_agent_run_not_only_the_chat_route(
    memory: Memory, ada: TestClient
) -> None:
    """An agent the application runs itself (not the service's chat route) records into
    the same memory, and the service shows it; a purged fact leaves the answer."""
    fact = memory.remember("Prefers reports in Chinese", user_id="ada", category="preference")
    model = FakeChatModel(responses=["好的。"])
    agent = create_agent(model, middleware=[MemoryMiddleware(memory, register_tools=False)])
    agent.invoke({"messages": [("user", "Write the weekly report")]},
                 context={"user_id": "ada", "thread_id": "own-app"})  # fmt: skip
    answer = ada.get("/v1/users/me/retrievals").json()
    [record] = answer["records"]
    assert record["thread_id"] == "own-app" and record["trigger"] == "block"
    assert list(answer["facts"]) == [fact.id]
    assert ada.delete(f"/v1/users/me/facts/{fact.id}", params={"purge": "true"}).is_success
    assert ada.get("/v1/users/me/retrievals").json() == {"records": [], "facts": {}}


@pytest.mark.parametrize("user", ["ada lovelace", "x" * 201])
def test_a_refused_user_id_is_explained_in_words(ada: TestClient, user: str) -> None:
    response = ada.get(f"/v1/users/{user}/facts")
    assert response.status_code == 422
    problem = response.json()
    [error] = problem["errors"]
    assert error["location"] == "path.user_id"
    assert error["message"].startswith("a user id is 1 to 200 characters with no spaces")
    assert "pattern" not in problem["detail"] and "\\s" not in problem["detail"]


def test_a_blank_query_says_so_without_the_regex(ada: TestClient) -> None:
    response = ada.post("/v1/users/me/search", json={"query": "   "})
    assert response.status_code == 422
    [error] = response.json()["errors"]
    assert error == {
        "location": "body.query",
        "message": "must contain something besides whitespace",
    }
