"""The ``openai`` embedder: OpenAI's embeddings, or any OpenAI-compatible endpoint's.

``RECALLMEM_EMBEDDER=openai`` embeds with the endpoint the chat model uses
(``RECALLMEM_OPENAI_API_KEY``, ``RECALLMEM_OPENAI_BASE_URL``) and its own model and
width (``RECALLMEM_EMBEDDING_MODEL``, ``RECALLMEM_EMBEDDING_DIMENSIONS``). Calls go
through ``langchain_openai.OpenAIEmbeddings`` and reach that endpoint and nothing else:

- texts are sent as text (``check_embedding_ctx_length=False``), which every compatible
  server accepts, so ``OpenAIEmbeddings`` never loads a tiktoken vocabulary (its first
  use downloads one from a blob host);
- each request is kept under the API's limits, in texts and in tokens: a byte-level BPE
  token is at least one UTF-8 byte, so bytes bound tokens without a vocabulary. A
  recallmem text (a fact of at most 2,000 characters, a query of 1,000) is at most
  8,000 bytes, within OpenAI's 8,191-token context, so none needs splitting.

A failed call raises :class:`~recallmem.errors.ModelUnreachableError` naming the endpoint,
the model and what to check.

>>> from recallmem.config import MemoryConfig
>>> emb = openai_embeddings(MemoryConfig(openai_base_url="http://127.0.0.1:9/v1",
...                                      embedding_model="nomic-embed-text"))
>>> emb.model_name, emb.dimension
('nomic-embed-text', None)
"""

from __future__ import annotations

from collections.abc import Iterator

from langchain_core.embeddings import Embeddings
from pydantic import SecretStr

from recallmem.config import MemoryConfig
from recallmem.endpoints.failures import Endpoint, endpoint_failure
from recallmem.errors import ModelNotConfiguredError

# OpenAI takes at most 2,048 inputs and 300,000 tokens per embeddings request; a margin
# under both keeps a request from being refused for its size on any compatible server.
MAX_TEXTS_PER_REQUEST = 512
MAX_BYTES_PER_REQUEST = 250_000  # at least as many as the tokens they make
REQUEST_TIMEOUT_SECONDS = 60.0


class OpenAICompatibleEmbeddings(Embeddings):
    """Embeddings from an OpenAI-compatible ``/embeddings`` endpoint.

    Args:
        model: the embedding model's name, e.g. ``text-embedding-3-small``.
        dimensions: the width to ask for (models that can shorten their vectors); also
            declared to the store, which otherwise learns it from the first vectors.
        api_key: the endpoint's key (a local server takes any).
        base_url: the endpoint (``.../v1``); None for OpenAI's own.
        max_retries: retries of a failed request by the client, with backoff.
    """

    def __init__(
        self,
        model: str,
        *,
        dimensions: int | None = None,
        api_key: str | None = None,
        base_url: str | None = None,
        max_retries: int = 2,
    ) -> None:
        from langchain_openai import OpenAIEmbeddings

        self.model_name = model  # with the class name, the identity the store records
        self.dimension = dimensions
        self.endpoint = Endpoint("embeddings", base_url, model)
        self._client = OpenAIEmbeddings(
            model=model,
            dimensions=dimensions,
            openai_api_key=SecretStr(api_key or "unused"),  # local servers take any key
            openai_api_base=base_url,
            check_embedding_ctx_length=False,
            max_retries=max_retries,
            request_timeout=REQUEST_TIMEOUT_SECONDS,
        )

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        """Embed stored facts, in as few requests as the API's limits allow."""
        vectors: list[list[float]] = []
        for batch in _requests(texts):
            vectors.extend(self._call(batch))
        return vectors

    def embed_query(self, text: str) -> list[float]:
        """Embed a recall query."""
        return self._call([text])[0]

    def _call(self, texts: list[str]) -> list[list[float]]:
        try:
            return self._client.embed_documents(texts, chunk_size=len(texts))
        except Exception as exc:
            failure = endpoint_failure(exc, self.endpoint)
            if failure is None:
                raise
            raise failure from exc


def _requests(texts: list[str]) -> Iterator[list[str]]:
    """``texts`` in consecutive batches under the per-request limits."""
    batch: list[str] = []
    size = 0
    for text in texts:
        cost = len(text.encode("utf-8"))
        if batch and (len(batch) == MAX_TEXTS_PER_REQUEST or size + cost > MAX_BYTES_PER_REQUEST):
            yield batch
            batch, size = [], 0
        batch.append(text)
        size += cost
    if batch:
        yield batch


def openai_embeddings(config: MemoryConfig | None = None) -> OpenAICompatibleEmbeddings:
    """The ``openai`` embedder as ``config`` (by default the ``RECALLMEM_*`` environment)
    sets it up: the chat model's endpoint and key, the embedding model and width.

    Raises ModelNotConfiguredError when neither a key nor a base URL is set.
    """
    config = config or MemoryConfig()
    if config.openai_api_key is None and not config.openai_base_url:
        raise ModelNotConfiguredError(
            "the openai embedder needs RECALLMEM_OPENAI_API_KEY (OpenAI) or "
            "RECALLMEM_OPENAI_BASE_URL (a compatible endpoint, which takes any key)"
        )
    key = config.openai_api_key.get_secret_value() if config.openai_api_key else None
    return OpenAICompatibleEmbeddings(
        config.embedding_model,
        dimensions=config.embedding_dimensions,
        api_key=key,
        base_url=config.openai_base_url,
    )
