"""Where the e5 embedder lived before ``recallmem.embedders``; kept so old imports work."""

from __future__ import annotations

from recallmem.embedders.e5 import (
    E5_DIMENSION,
    E5_MODEL_NAME,
    EmbedderUnavailableError,
    MultilingualE5Small,
)

__all__ = ["E5_DIMENSION", "E5_MODEL_NAME", "EmbedderUnavailableError", "MultilingualE5Small"]
