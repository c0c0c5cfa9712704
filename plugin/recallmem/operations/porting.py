"""A user's memory out and in: the versioned export, and imports validated whole first."""

from __future__ import annotations

from typing import Any

from recallmem.config import MemoryConfig
from recallmem.portability import ImportReport, accept_import, build_export
from recallmem.repository import FactRepository
from recallmem.validation import optional_key, require_user


class Porting:
    """Builds exports from the repository and writes imports through it."""

    def __init__(self, repository: FactRepository, config: MemoryConfig) -> None:
        self.repository = repository
        self.config = config

    def export(self, user_id: str, agent_id: str | None) -> dict[str, Any]:
        """Every fact (all statuses) and profile of a user, oldest fact first."""
        facts = self.repository.facts(require_user(user_id))
        if (agent_id := optional_key(agent_id, "agent_id")) is not None:
            facts = [f for f in facts if f.agent_id == agent_id]
        profiles = self.repository.stored_profiles(user_id, agent_id)
        return build_export(
            user_id, facts=sorted(facts, key=lambda f: f.created_at), profiles=profiles
        )

    def import_(self, data: Any) -> ImportReport:
        """Validate every row, then write them all or nothing."""
        checked = accept_import(data, self.repository.owners, self.config.secrets)
        self.repository.import_facts(checked.facts, checked.profiles)
        return checked.report()
