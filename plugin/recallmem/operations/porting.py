"""A user's memory out and in: the versioned export, and imports validated whole first."""

from __future__ import annotations

from typing import Any

from recallmem.config import MemoryConfig
from recallmem.facts.export_format import ImportReport, accept_import, build_export
from recallmem.facts.validation import check_flag, optional_key, require_user
from recallmem.persistence.forget_ledger import as_work
from recallmem.persistence.repository import FactRepository


class Porting:
    """Builds exports from the repository and writes imports through it."""

    def __init__(self, repository: FactRepository, config: MemoryConfig) -> None:
        self.repository = repository
        self.config = config

    def export(self, user_id: str, agent_id: str | None, embeddings: bool) -> dict[str, Any]:
        """Every fact (all statuses) and profile of a user, oldest fact first; with
        ``embeddings``, the facts' stored vectors too (an import into a store of the same
        embedder then writes them instead of embedding again)."""
        facts = self.repository.facts(require_user(user_id))
        if (agent_id := optional_key(agent_id, "agent_id")) is not None:
            facts = [f for f in facts if f.agent_id == agent_id]
        facts = sorted(facts, key=lambda f: f.created_at)
        profiles = self.repository.stored_profiles(user_id, agent_id)
        if not check_flag(embeddings, "embeddings") or not facts:
            return build_export(user_id, facts=facts, profiles=profiles)
        vectors = self.repository.vectors(user_id, [f.id for f in facts])
        return build_export(user_id, facts=facts, profiles=profiles, vectors=vectors,
                            embedder=self.repository.store.embedder)  # fmt: skip

    @as_work  # a forget of a user while the import is embedded refuses that user's rows
    def import_(self, data: Any) -> ImportReport:
        """Validate every row, then write them all or nothing; vectors the export carries
        for this store's embedder are written as they are."""
        store = self.repository.store
        checked = accept_import(data, self.repository.owners, self.config.secrets,
                                embedder=store.embedder, dimension=store.dimension)  # fmt: skip
        self.repository.import_facts(checked.facts, checked.profiles, checked.carried)
        return checked.report()
