"""Profiles in the scopes collection, one record per user (and agent), under an id that
hashes the user's: a record's id stays in Chroma's log after a purge deletes the record,
and a user id is often an e-mail address. Profiles written before were under the plain
(``legacy``) id: read, and replaced when next written.
"""

from __future__ import annotations

import json
from typing import Any

from recallmem.store.chroma.failures import store_errors
from recallmem.store.chroma.layout import hashed_id
from recallmem.types import Profile

_VECTOR = [1.0]  # the scopes collection is looked up by id only


class ProfileRecords:
    """The profiles of one store, in its scopes collection."""

    def __init__(self, collection: Any, where: str) -> None:
        self._scopes = collection
        self._where = where

    def load(self, user_id: str, agent_id: str | None) -> Profile | None:
        """The stored profile of a user (and agent), if any (under its legacy id too)."""
        ids = [_profile_id(user_id, agent_id), _profile_id(user_id, agent_id, legacy=True)]
        with store_errors("read a profile", self._where):
            got = self._scopes.get(ids=ids, include=["documents", "metadatas"])
        found = dict(zip(got["ids"], got["documents"], strict=True))
        if (document := found.get(ids[0]) or found.get(ids[1])) is None:
            return None
        profile = Profile.model_validate_json(document)
        return profile if profile.user_id == user_id else None

    def save(self, profile: Profile) -> None:
        """Replace the stored profile of ``profile.user_id`` / ``profile.agent_id``."""
        legacy = _profile_id(profile.user_id, profile.agent_id, legacy=True)
        with store_errors("write a profile", self._where):
            self._scopes.upsert(
                ids=[_profile_id(profile.user_id, profile.agent_id)],
                embeddings=[_VECTOR],
                documents=[profile.model_dump_json()],
                metadatas=[{"user_id": profile.user_id, "kind": "profile"}],
            )
            # Asked first: a delete of an id is logged with the id, present or not.
            if self._scopes.get(ids=[legacy], include=[])["ids"]:
                self._scopes.delete(ids=[legacy])


def _profile_id(user_id: str, agent_id: str | None, *, legacy: bool = False) -> str:
    scope = json.dumps([user_id, agent_id])
    return "profile:" + (scope if legacy else hashed_id(scope))
