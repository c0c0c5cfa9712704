"""Profiles are stored under a hashed id (a record's id outlives its purge in Chroma's
log, and a user id is often an e-mail address); one written by an earlier version under
the raw id is still read, and replaced by the next write."""

from __future__ import annotations

import json

from recallmem import Memory
from recallmem.types import Profile, ProfileSection

USER = "carol.jones@example.com"


def test_a_profile_of_the_raw_id_is_read_then_replaced(memory: Memory) -> None:
    old = Profile(user_id=USER, work_context=ProfileSection(summary="Edits the tech desk"))
    legacy = "profile:" + json.dumps([USER, None])
    scopes = memory.repository.store._scopes
    scopes.upsert(ids=[legacy], embeddings=[[1.0]], documents=[old.model_dump_json()],
                  metadatas=[{"user_id": USER, "kind": "profile"}])  # fmt: skip
    assert memory.get_profile(user_id=USER).work_context.summary == "Edits the tech desk"

    memory.set_profile(old.model_copy(update={"top_of_mind": ProfileSection(summary="Robots")}))
    assert scopes.get(ids=[legacy])["ids"] == []  # replaced, not kept beside
    stored = scopes.get(where={"user_id": USER}, include=[])["ids"]
    assert len(stored) == 1 and USER not in stored[0]
    assert memory.get_profile(user_id=USER).top_of_mind.summary == "Robots"
