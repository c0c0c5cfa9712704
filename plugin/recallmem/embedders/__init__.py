"""Embedders: the default USE encoder, the optional e5, and embedders by registered name.

They touch no storage, so they sit at the bottom of the layers beside the vocabulary:
the store, the retrieval core and the signal detectors' prototype stage all embed
through them. ``MemoryConfig.embedder`` names an entry point in the
``recallmem.embedders`` group (``registry``; docs/embedders.md).
"""

from __future__ import annotations

from recallmem.embedders.e5 import E5_DIMENSION, EmbedderUnavailableError, MultilingualE5Small
from recallmem.embedders.registry import ENTRY_POINT_GROUP, installed_embedders, load_embedder
from recallmem.embedders.use import USE_DIMENSION, UniversalSentenceEncoder
from recallmem.embedders.vectors import (
    default_embeddings,
    embed_matrix,
    embed_query_vector,
    embedder_name,
    normalize_rows,
    recall_floor,
)

__all__ = [
    "E5_DIMENSION",
    "ENTRY_POINT_GROUP",
    "USE_DIMENSION",
    "EmbedderUnavailableError",
    "MultilingualE5Small",
    "UniversalSentenceEncoder",
    "default_embeddings",
    "embed_matrix",
    "embed_query_vector",
    "embedder_name",
    "installed_embedders",
    "load_embedder",
    "normalize_rows",
    "recall_floor",
]
