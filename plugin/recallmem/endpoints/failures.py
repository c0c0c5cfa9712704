"""What a failed call to an OpenAI-compatible endpoint means, said in one line.

The client's own errors name neither the endpoint nor the model ("Connection error.",
"Error code: 404"), so a service whose model is unreachable could not tell which of its
settings is wrong. :func:`endpoint_failure` turns them into a
:class:`~recallmem.errors.ModelUnreachableError` that names both and the setting to check.

>>> import httpx, openai
>>> request = httpx.Request("POST", "http://127.0.0.1:9/v1/embeddings")
>>> error = endpoint_failure(
...     openai.APIConnectionError(request=request),
...     Endpoint("embeddings", "http://127.0.0.1:9/v1", "nomic-embed-text"),
... )
>>> print(error)  # doctest: +NORMALIZE_WHITESPACE
the embeddings endpoint http://127.0.0.1:9/v1 (model 'nomic-embed-text') could not be
reached (Connection error.); check that its server is running and that
RECALLMEM_OPENAI_BASE_URL points at it
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from recallmem.errors import ModelUnreachableError
from recallmem.secrets.detector import redact

OPENAI_API = "https://api.openai.com/v1"
MODEL_SETTING = {"chat": "RECALLMEM_LLM_MODEL", "embeddings": "RECALLMEM_EMBEDDING_MODEL"}
_DETAIL_CHARS = 200  # of the server's own message, enough to say what it objected to


@dataclass(frozen=True)
class Endpoint:
    """One configured model: what it is for, where it answers, and which model."""

    role: Literal["chat", "embeddings"]
    base_url: str | None
    model: str

    @property
    def where(self) -> str:
        """The base URL calls go to (OpenAI's own when none is configured)."""
        return self.base_url or OPENAI_API

    def describe(self) -> str:
        """``the chat endpoint URL (model 'NAME')``."""
        return f"the {self.role} endpoint {self.where} (model {self.model!r})"


def chat_endpoint(model: object) -> Endpoint | None:
    """The endpoint of an OpenAI-compatible chat model (``ChatOpenAI``: its base URL and
    model name); None for any other model, whose failures are its own to describe.

    >>> from langchain_openai import ChatOpenAI
    >>> chat_endpoint(ChatOpenAI(model="qwen3", base_url="http://127.0.0.1:9/v1", api_key="k"))
    Endpoint(role='chat', base_url='http://127.0.0.1:9/v1', model='qwen3')
    """
    name = getattr(model, "model_name", None)
    if not isinstance(name, str) or not hasattr(model, "openai_api_base"):
        return None
    base_url = getattr(model, "openai_api_base", None)
    return Endpoint("chat", base_url if isinstance(base_url, str) else None, name)


def described(exc: BaseException, endpoint: Endpoint | None) -> BaseException:
    """``exc`` as :func:`endpoint_failure` says it when it is the endpoint's failure (raise
    it ``from exc``), else ``exc`` itself."""
    failure = endpoint_failure(exc, endpoint) if endpoint is not None else None
    return failure or exc


def endpoint_failure(exc: BaseException, endpoint: Endpoint) -> ModelUnreachableError | None:
    """The error that says which endpoint failed and what to check, or None when ``exc``
    is not a failure of the endpoint (a bug of ours stays what it is)."""
    import openai

    if isinstance(exc, openai.APIConnectionError):
        kind = "did not answer in time" if isinstance(exc, openai.APITimeoutError) else (
            "could not be reached"
        )  # fmt: skip
        what = f"{kind} ({_detail(exc)})"
        check = "check that its server is running and that RECALLMEM_OPENAI_BASE_URL points at it"
    elif isinstance(exc, openai.APIStatusError):
        what = f"answered HTTP {exc.status_code} ({_detail(exc)})"
        check = _check_for_status(exc.status_code, endpoint)
    else:
        return None
    return ModelUnreachableError(f"{endpoint.describe()} {what}; {check}")


def _check_for_status(status: int, endpoint: Endpoint) -> str:
    if status in (401, 403):
        return "check RECALLMEM_OPENAI_API_KEY"
    if status == 404:
        return (
            f"check {MODEL_SETTING[endpoint.role]} (a model this endpoint serves) and that "
            "RECALLMEM_OPENAI_BASE_URL ends where its API starts (often /v1)"
        )
    if status == 429:
        return "the endpoint is rate-limiting or out of quota; the call can be retried later"
    if status >= 500:
        return "the endpoint failed on its side; see its own log"
    return "the endpoint refused the request; see its message"


def _detail(exc: BaseException) -> str:
    # A server may echo part of the key it refused: what reaches a log is redacted.
    text = redact(" ".join(str(getattr(exc, "message", None) or exc).split()))
    return text if len(text) <= _DETAIL_CHARS else text[: _DETAIL_CHARS - 1] + "…"
