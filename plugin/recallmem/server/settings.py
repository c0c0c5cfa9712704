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
"""

from __future__ import annotations

import hmac
import ipaddress
import json
from pathlib import Path
from typing import Self

from pydantic import BaseModel, ConfigDict, Field, SecretStr, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

MIN_TOKEN_CHARS = 16


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
    api_tokens: list[TokenGrant] = Field(
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
