"""The state a configured model endpoint was last seen in, for readiness and health.

A probe must not call the model (a load balancer asks every few seconds, and a chat call
costs money): the state comes from the service's own calls as they succeed or fail, and
when none was seen for ``max_age`` seconds, from one cheap check, the endpoint's model
list (``GET {base_url}/models``: no tokens), which also tells whether the model is
served. One check runs at a time; probes meanwhile get the state as last seen.

>>> status = EndpointStatus(Endpoint("chat", "http://127.0.0.1:9/v1", "m"), check=lambda: None)
>>> status.record_failure("the chat endpoint ... could not be reached")
>>> status.current().reachable, status.current().problem
(False, 'the chat endpoint ... could not be reached')
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from pydantic import SecretStr

from recallmem.endpoints.failures import MODEL_SETTING, Endpoint, chat_endpoint, endpoint_failure

CHECK_EVERY_SECONDS = 60.0  # the oldest state a probe is told before one check runs
CHECK_TIMEOUT_SECONDS = 3.0
Check = Callable[[], str | None]  # a problem, or None when the endpoint answers well


@dataclass(frozen=True)
class EndpointState:
    """Whether the endpoint answered when last seen, and how it was seen."""

    endpoint: Endpoint
    reachable: bool | None  # None: not seen yet
    problem: str | None = None
    seen_seconds_ago: float | None = None
    seen_by: Literal["call", "check"] | None = None


class EndpointStatus:
    """The last state of one endpoint, from calls as they happen and a check when stale."""

    def __init__(
        self,
        endpoint: Endpoint,
        check: Check,
        *,
        max_age: float = CHECK_EVERY_SECONDS,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.endpoint, self._check, self._max_age, self._clock = endpoint, check, max_age, clock
        self._lock = threading.Lock()
        self._checking = threading.Lock()
        self._seen: tuple[float, bool, str | None, Literal["call", "check"]] | None = None

    def record_ok(self) -> None:
        """A call succeeded."""
        self._record(True, None, "call")

    def record_failure(self, problem: str) -> None:
        """A call failed: ``problem`` says how (naming the endpoint and what to check)."""
        self._record(False, problem, "call")

    def _record(self, ok: bool, problem: str | None, how: Literal["call", "check"]) -> None:
        with self._lock:
            self._seen = (self._clock(), ok, problem, how)

    def current(self) -> EndpointState:
        """The state as last seen; checked first (blocking, bounded by the check's timeout)
        when it is older than ``max_age`` and no other check is running."""
        if self._stale() and self._checking.acquire(blocking=False):
            try:
                if self._stale():
                    problem = self._check()
                    self._record(problem is None, problem, "check")
            finally:
                self._checking.release()
        with self._lock:
            seen = self._seen
        if seen is None:
            return EndpointState(self.endpoint, reachable=None)
        at, ok, problem, how = seen
        ago = round(self._clock() - at, 3)
        return EndpointState(self.endpoint, ok, problem, seen_seconds_ago=ago, seen_by=how)

    def _stale(self) -> bool:
        with self._lock:
            return self._seen is None or self._clock() - self._seen[0] > self._max_age


def model_list_check(endpoint: Endpoint, api_key: str | None) -> Check:
    """A check that lists the endpoint's models (no model call) and finds ``endpoint.model``
    among them when the endpoint lists any."""

    def check() -> str | None:
        import openai

        client = openai.OpenAI(api_key=api_key or "unused", base_url=endpoint.base_url,
                               timeout=CHECK_TIMEOUT_SECONDS, max_retries=0)  # fmt: skip
        try:
            served = [model.id for model in client.models.list().data]
        except openai.NotFoundError:
            return None  # answers, but lists no models (some compatible servers)
        except Exception as exc:
            failure = endpoint_failure(exc, endpoint)
            return str(failure) if failure else f"{endpoint.describe()}: {exc}"
        finally:
            client.close()
        if served and endpoint.model not in served:
            shown = ", ".join(sorted(served)[:10])
            setting = MODEL_SETTING[endpoint.role]
            said = f"{endpoint.describe()} does not serve that model (it lists {shown})"
            return f"{said}; check {setting}"
        return None

    return check


def chat_model_status(model: object) -> EndpointStatus | None:
    """The status of an OpenAI-compatible chat model's endpoint (None for another model),
    checked with the model's own key."""
    endpoint = chat_endpoint(model)
    if endpoint is None:
        return None
    key = getattr(model, "openai_api_key", None)
    secret = key.get_secret_value() if isinstance(key, SecretStr) else None
    return EndpointStatus(endpoint, model_list_check(endpoint, secret))
