"""Opening Chroma: an embedded ``PersistentClient`` under the home, or an ``HttpClient``."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlparse

from recallmem.config import MemoryConfig
from recallmem.errors import StoreError
from recallmem.store.chroma.failures import store_errors
from recallmem.store.chroma.workarounds.bounded_cache import bounded_index_cache


def chroma_settings() -> Any:
    """The Chroma settings recallmem opens a client with; another client of the same
    embedded path in this process must use them too (Chroma refuses different ones)."""
    from chromadb.config import Settings

    return Settings(anonymized_telemetry=False, allow_reset=False)


def open_client(config: MemoryConfig) -> Any:
    """An embedded ``PersistentClient`` under ``config.home``, or an ``HttpClient``."""
    import chromadb

    settings = chroma_settings()
    if config.chroma_url:
        url = urlparse(config.chroma_url)
        if url.scheme not in ("http", "https") or not url.hostname:
            raise StoreError(f"chroma_url {config.chroma_url!r} is not an http(s)://host:port URL")
        headers = {}
        if config.chroma_token is not None:
            headers["Authorization"] = f"Bearer {config.chroma_token.get_secret_value()}"
        with store_errors("connect to the Chroma server", config.chroma_url):
            return chromadb.HttpClient(
                host=url.hostname,
                port=url.port or (443 if url.scheme == "https" else 8000),
                ssl=url.scheme == "https",
                headers=headers,
                settings=settings,
            )
    with store_errors("open the embedded Chroma database", str(config.chroma_path)):
        config.chroma_path.mkdir(parents=True, exist_ok=True)
        with bounded_index_cache():
            return chromadb.PersistentClient(path=str(config.chroma_path), settings=settings)
