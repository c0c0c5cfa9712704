"""Settings of the memory service, from arguments or ``RECALLMEM_*`` environment variables.

Kept apart from :class:`recallmem.MemoryConfig`: the library never needs to know about
tokens, ports or payload bounds.

Tokens are a JSON list in ``RECALLMEM_API_TOKENS`` (or a file named by
``RECALLMEM_API_TOKENS_FILE``); each binds one bearer token to a user or makes it an
admin token:

>>> settings = ServerSettings(api_tokens=[
...     {"token": "tok-ada-0123456789", "user_id": "ada"},
...     {"token": "tok-admin-0123456789", "admin": True},
... ])
>>> settings.grant_for("tok-ada-0123456789").user_id
'ada'
>>> settings.grant_for("wrong") is None
True

Host names the service answers to beyond loopback are a comma-separated list (or a JSON
list) in ``RECALLMEM_ALLOWED_HOSTS``; a leading dot also allows every subdomain:

>>> ServerSettings(allowed_hosts="memory.internal, .example.org").allowed_hosts
['memory.internal', '.example.org']
"""

from __future__ import annotations

import hmac
import ipaddress
import json
import re
from pathlib import Path
from typing import Annotated, Any, Self

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SecretStr,
    ValidationError,
    field_validator,
    model_validator,
)
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict, SettingsError

from recallmem.errors import InvalidInputError

MIN_TOKEN_CHARS = 16
MAX_WORKERS = 64
_HOST_NAME = re.compile(r"^\.?[a-z0-9_-]+(\.[a-z0-9_-]+)*$|^\[[0-9a-f:.]+\]$")


class TokenGrant(BaseModel):
    """One bearer token: bound to one user, or an admin token that names users in paths."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    token: SecretStr
    user_id: str | None = Field(default=None, min_length=1, max_length=200)
    admin: bool = False

    @model_validator(mode="after")
    def _user_xor_admin(self) -> Self:
        if self.admin == (self.user_id is not None):
            raise ValueError(
                "each token needs exactly one of user_id (a user's token) or admin: true"
            )
        if len(self.token.get_secret_value()) < MIN_TOKEN_CHARS:
            raise ValueError(
                f"tokens must be at least {MIN_TOKEN_CHARS} characters; generate one with "
                "`python -c 'import secrets; print(secrets.token_urlsafe(32))'`"
            )
        return self


class ServerSettings(BaseSettings):
    """Everything the HTTP service needs beyond the memory itself."""

    model_config = SettingsConfigDict(env_prefix="RECALLMEM_", extra="ignore")

    host: str = Field(default="127.0.0.1", description="Interface to bind.")
    port: int = Field(default=8765, ge=1, le=65535)
    api_tokens: Annotated[list[TokenGrant], NoDecode] = Field(
        default_factory=list, description="Bearer tokens (JSON list of grants)."
    )
    api_tokens_file: Path | None = Field(
        default=None, description="A JSON file holding the same list of grants."
    )
    max_body_bytes: int = Field(
        default=256 * 1024, ge=1024, description="Largest request body, import excepted."
    )
    max_import_bytes: int = Field(
        default=64 * 1024 * 1024, ge=1024, description="Largest import body."
    )
    body_read_timeout_seconds: float = Field(
        default=20.0,  # a slow upload's pause, well under a proxy's 60-75 s idle timeout
        gt=0,
        le=60,
        description="Longest wait for the next part of a request body; then 408 and the "
        "connection is closed (a body shorter than its Content-Length holds none longer).",
    )
    max_concurrent_imports: int = Field(
        default=2,
        ge=1,
        le=64,
        description="Import bodies larger than max_body_bytes read at once; more get 503.",
    )
    workers: int = Field(
        default=1,
        ge=1,
        le=MAX_WORKERS,
        description="Worker processes of `recallmem serve` (more than one needs chroma_url).",
    )
    allowed_hosts: Annotated[list[str], NoDecode] = Field(
        default_factory=list,
        description="Host names answered besides loopback ones (a leading dot: subdomains "
        "too). Without tokens only loopback names and these; with tokens, when set, only these "
        "and loopback names.",
    )

    @field_validator("api_tokens", mode="before")
    @classmethod
    def _tokens_from_json(cls, value: Any) -> Any:
        if not isinstance(value, str):
            return value
        if not value.strip():
            raise ValueError(
                "is empty; unset it to run without tokens (loopback only), or give a JSON list "
                'of grants such as [{"token": "<16+ characters>", "user_id": "ada"}]'
            )
        try:
            return json.loads(value)
        except ValueError as exc:
            raise ValueError(
                f"is not JSON ({exc}); give a JSON list of grants such as "
                '[{"token": "<16+ characters>", "user_id": "ada"}, '
                '{"token": "<16+ characters>", "admin": true}]'
            ) from exc

    @field_validator("allowed_hosts", mode="before")
    @classmethod
    def _hosts_from_text(cls, value: Any) -> Any:
        if isinstance(value, str):
            value = _json_or_commas(value)
        if not isinstance(value, list):
            return value
        hosts = [str(h).strip().lower() for h in value if str(h).strip()]
        bad = [h for h in hosts if not _HOST_NAME.match(h)]
        if bad:
            raise ValueError(
                f"{', '.join(map(repr, bad))} is not a host name; list bare names such as "
                "memory.example.org or .example.org (subdomains too), without scheme or port"
            )
        return hosts

    @model_validator(mode="after")
    def _load_tokens_file(self) -> Self:
        if self.api_tokens_file is not None:
            try:
                raw = json.loads(self.api_tokens_file.read_text(encoding="utf-8"))
            except (OSError, json.JSONDecodeError) as exc:
                raise ValueError(
                    f"could not read the token file {self.api_tokens_file}: {exc}"
                ) from exc
            grants = [TokenGrant.model_validate(item) for item in raw]
            self.api_tokens = [*self.api_tokens, *grants]
            self.api_tokens_file = None
        secrets = [g.token.get_secret_value() for g in self.api_tokens]
        if len(set(secrets)) != len(secrets):
            raise ValueError("the same token is configured twice; give each grant its own")
        return self

    @property
    def open_access(self) -> bool:
        """No tokens: anyone who can connect is trusted, so only loopback may connect."""
        return not self.api_tokens

    def grant_for(self, token: str) -> TokenGrant | None:
        """The grant of a presented token, compared in constant time."""
        presented = token.encode()
        found = None
        for grant in self.api_tokens:
            if hmac.compare_digest(grant.token.get_secret_value().encode(), presented):
                found = grant
        return found


def _json_or_commas(text: str) -> Any:
    """A JSON list, or else comma-separated names (``[::1]`` is a name, not JSON)."""
    if text.strip().startswith("["):
        try:
            return json.loads(text)
        except ValueError:
            pass
    return text.split(",")


def load_settings(**overrides: Any) -> ServerSettings:
    """The service settings from ``RECALLMEM_*`` and ``overrides``, or one clear error.

    Raises:
        InvalidInputError: naming each bad variable and what to set instead.
    """
    try:
        return ServerSettings(**overrides)
    except ValidationError as exc:
        problems = "; ".join(_describe(e) for e in exc.errors())
        raise InvalidInputError(
            f"the service settings are invalid: {problems} (the service settings are "
            "listed in README.md and docs/api.md)"
        ) from exc
    except SettingsError as exc:
        raise InvalidInputError(
            f"the service settings are invalid: {exc}; list settings take JSON"
        ) from exc


def _describe(error: Any) -> str:
    """One validation error as ``RECALLMEM_NAME[0].field: what is wrong``."""
    message = str(error["msg"]).removeprefix("Value error, ")
    if not error["loc"]:
        return message
    field, *rest = error["loc"]
    where = f"RECALLMEM_{str(field).upper()}" + "".join(
        f"[{part}]" if isinstance(part, int) else f".{part}" for part in rest
    )
    return f"{where} {message}" if message.startswith("is ") else f"{where}: {message}"


def is_loopback(host: str) -> bool:
    """Whether ``host`` only accepts connections from this machine.

    >>> is_loopback("127.0.0.1"), is_loopback("localhost"), is_loopback("0.0.0.0")
    (True, True, False)
    """
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False
