"""Times near the calendar's ends and far from the clock, over HTTP on real embedded Chroma:
a valid_until that would overflow in UTC and a maintenance `now` far from the server's
clock are 422 with the allowed range, and change nothing."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from fastapi.testclient import TestClient
from recallmem.memory import Memory
from recallmem.types import Fact
from serverkit import JSON

# Each is a valid local time whose UTC instant is past year 9999 or before year 1.
OVERFLOWING = ["9999-12-31T23:00:00-05:00", "0001-01-01T00:30:00+01:00"]


def refused_for_range(response: Any, field: str) -> None:
    assert response.status_code == 422, response.text
    (error,) = response.json()["errors"]
    assert error["location"] == f"body.{field}"
    assert "1900-01-01" in error["message"] and "9999-01-01" in error["message"]


@pytest.mark.parametrize("valid_until", OVERFLOWING)
def test_a_valid_until_past_the_calendar_is_422_on_create_and_patch(
    ada: TestClient, add_fact: Any, valid_until: str
) -> None:
    body = {"content": "Renews the lease", "category": "context", "valid_until": valid_until}
    refused_for_range(ada.post("/v1/users/me/facts", json=body, headers=JSON), "valid_until")
    fact = add_fact(ada, "Renews the lease every spring", category="context")
    patch = {"valid_until": valid_until}
    response = ada.patch(f"/v1/users/me/facts/{fact['id']}", json=patch, headers=JSON)
    refused_for_range(response, "valid_until")
    stored = ada.get("/v1/users/me/facts").json()["items"]
    assert [(f["content"], f["valid_until"]) for f in stored] == [(fact["content"], None)]


def test_a_valid_until_inside_the_range_is_still_stored(ada: TestClient, add_fact: Any) -> None:
    fact = add_fact(ada, "Passport valid", category="context", valid_until="9998-12-31T23:00:00Z")
    assert fact["valid_until"] == "9998-12-31T23:00:00Z"


def seed(memory: Memory) -> list[Fact]:
    """Three facts a year-long jump would fade (never confirmed or recalled)."""
    year_ago = datetime.now(UTC) - timedelta(days=10)
    facts = [
        Fact(content=text, category="context", user_id="ada", created_at=year_ago,
             updated_at=year_ago)
        for text in ("Works on the billing sprint", "Tries the Zed editor", "In Leeds this week")
    ]  # fmt: skip
    memory.put(facts)
    return facts


@pytest.mark.parametrize(
    "now", ["9000-01-01T00:00:00+00:00", "9999-12-31T00:00:00+00:00", "0001-01-01T00:00:00+00:00"]
)
@pytest.mark.parametrize("path", ["/v1/users/ada/maintain", "/v1/maintain"])
def test_a_maintenance_now_far_from_the_clock_is_422_and_changes_nothing(
    admin: TestClient, memory: Memory, now: str, path: str
) -> None:
    facts = seed(memory)
    revision = memory.revision("ada")
    response = admin.post(path, json={"now": now}, headers=JSON)
    assert response.status_code == 422, response.text
    (error,) = response.json()["errors"]
    assert error["location"] == "body.now"
    assert "out of range" in error["message"] or "give or take 1 day" in error["message"]
    assert memory.revision("ada") == revision  # nothing faded, purged or written
    assert {f.status.value for f in memory.list(user_id="ada", status=None)} == {"active"}
    assert len(memory.list(user_id="ada")) == len(facts)


def test_maintenance_within_a_day_of_the_clock_still_runs(ada: TestClient, memory: Memory) -> None:
    seed(memory)
    soon = (datetime.now(UTC) + timedelta(hours=20)).isoformat()
    response = ada.post("/v1/users/me/maintain", json={"now": soon}, headers=JSON)
    assert response.status_code == 200, response.text
    assert response.json()["faded"] == []  # ten days idle is nothing to a context fact
