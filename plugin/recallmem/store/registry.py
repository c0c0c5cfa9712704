"""Where the embedder registry lived before ``recallmem.embedders``; kept so old imports work."""

from __future__ import annotations

from recallmem.embedders.registry import ENTRY_POINT_GROUP, installed_embedders, load_embedder

__all__ = ["ENTRY_POINT_GROUP", "installed_embedders", "load_embedder"]
