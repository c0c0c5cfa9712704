"""Which ``Host`` a request may name, and which ``Origin`` may send it a write.

A web page can make a browser send requests to a name it re-points at 127.0.0.1 (DNS
rebinding); the browser then names the attacker's host in ``Host``. Without tokens the
service therefore answers only loopback names (and names the operator allows with
``RECALLMEM_ALLOWED_HOSTS``); with tokens, only those when the list is set. A page of
another origin that makes the browser send a write names itself in ``Origin``: writes
are taken only from the service's own origin (or an allowed host), or with no ``Origin``
at all (clients that are not browsers).

>>> open_mode = HostPolicy(allowed=(), any_host=False)
>>> open_mode.accepts("localhost:8765"), open_mode.accepts("attacker.example")
(True, False)
>>> open_mode.origin_accepted("http://localhost:8765", host="localhost:8765")
True
>>> open_mode.origin_accepted("http://attacker.example", host="localhost:8765")
False
"""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import urlsplit

from recallmem.server.settings import ServerSettings, is_loopback

_DEFAULT_PORTS = {"http": ":80", "https": ":443"}


def host_name(authority: str) -> str:
    """The host of a ``Host`` header or an origin's authority: lower case, no port.

    >>> host_name("LocalHost:8765"), host_name("[::1]:80"), host_name("example.org.")
    ('localhost', '[::1]', 'example.org')
    """
    authority = authority.strip().lower()
    if authority.startswith("["):
        return authority[: authority.find("]") + 1] or authority
    name = authority.rsplit(":", 1)[0] if authority.count(":") == 1 else authority
    return name.rstrip(".")


def _authority(authority: str, scheme: str) -> str:
    """``authority`` in lower case without the scheme's default port."""
    authority = authority.strip().lower()
    return authority.removesuffix(_DEFAULT_PORTS.get(scheme, "\0"))


@dataclass(frozen=True)
class HostPolicy:
    """The host names a service answers to."""

    allowed: tuple[str, ...]
    any_host: bool

    @classmethod
    def of(cls, settings: ServerSettings) -> HostPolicy:
        """Loopback and the allowed names; any name when tokens protect the service and
        no list is set."""
        allowed = tuple(settings.allowed_hosts)
        return cls(allowed=allowed, any_host=not settings.open_access and not allowed)

    def listed(self, name: str) -> bool:
        """Whether ``name`` is one of the allowed names (``.example.org`` allows the
        domain and its subdomains)."""
        return any(
            name == entry or (entry.startswith(".") and (name == entry[1:] or name.endswith(entry)))
            for entry in self.allowed
        )

    def accepts(self, host: str | None) -> bool:
        """Whether a request naming ``host`` in its ``Host`` header is answered."""
        if self.any_host:
            return True
        if not host:
            return False
        name = host_name(host)
        return is_loopback(name) or self.listed(name)

    def origin_accepted(self, origin: str, *, host: str | None) -> bool:
        """Whether a write sent by a page of ``origin`` to ``host`` is taken: the same
        origin as the service, or an allowed host."""
        parts = urlsplit(origin.strip())
        if parts.scheme not in _DEFAULT_PORTS or not parts.netloc:
            return False  # "null" (sandboxed or file pages) and other schemes
        if host and _authority(parts.netloc, parts.scheme) == _authority(host, parts.scheme):
            return True
        return self.listed(host_name(parts.netloc))
