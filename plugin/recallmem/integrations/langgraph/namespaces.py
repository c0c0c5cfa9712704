"""Which user (and agent) a LangGraph store namespace belongs to: one documented rule.

A rule is a template of namespace labels. ``"{user_id}"`` marks the label that names the
user, ``"{agent_id}"`` (optional) the one that names the agent; every other label must be
matched literally. Labels after the template are free: they name sub-namespaces of that
user's memory. The default fits LangMem's ``("memories", "{user_id}")``.

>>> rule = NamespaceRule()
>>> rule.scope(("memories", "ada", "work"))
NamespaceScope(user_id='ada', agent_id=None)
>>> rule.root(NamespaceScope("ada"))
('memories', 'ada')
>>> rule.scope(("notes", "ada"))  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
langgraph.store.base.InvalidNamespaceError: namespace ('notes', 'ada') does not fit ...
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from langgraph.store.base import InvalidNamespaceError

USER = "{user_id}"
AGENT = "{agent_id}"
DEFAULT_TEMPLATE = ("memories", USER)
WILDCARD = "*"


@dataclass(frozen=True)
class NamespaceScope:
    """The recallmem scope a namespace maps to."""

    user_id: str
    agent_id: str | None = None


def check_labels(namespace: Sequence[str]) -> tuple[str, ...]:
    """The namespace as a tuple, or an error naming the bad label (LangGraph's rules)."""
    for label in namespace:
        if not isinstance(label, str) or not label or "." in label:
            raise InvalidNamespaceError(
                f"namespace label {label!r} in {tuple(namespace)!r} is invalid: labels are "
                "non-empty strings without periods"
            )
    return tuple(namespace)


@dataclass(frozen=True)
class NamespaceRule:
    """How namespaces map to users: see the module docstring."""

    template: tuple[str, ...] = DEFAULT_TEMPLATE

    def __post_init__(self) -> None:
        if self.template.count(USER) != 1 or self.template.count(AGENT) > 1:
            raise ValueError(
                f"namespace template {self.template!r} must hold '{USER}' exactly once "
                f"and '{AGENT}' at most once, e.g. ('memories', '{USER}')"
            )

    def scope(self, namespace: Sequence[str]) -> NamespaceScope:
        """The user (and agent) a namespace, or a namespace prefix, belongs to."""
        namespace = check_labels(namespace)
        if not self.fits(namespace):
            raise InvalidNamespaceError(
                f"namespace {namespace!r} does not fit the template {self.template!r}: "
                f"start it with the template's labels, the user id in place of '{USER}'"
                + (f" and the agent id in place of '{AGENT}'" if AGENT in self.template else "")
                + "; a namespace that names no single user could reach other users' memory"
            )
        labels = dict(zip(self.template, namespace, strict=False))
        return NamespaceScope(user_id=labels[USER], agent_id=labels.get(AGENT))

    def fits(self, namespace: Sequence[str]) -> bool:
        """Whether the namespace starts with the template, placeholders filled."""
        if len(namespace) < len(self.template):
            return False
        return all(
            label == part if part not in (USER, AGENT) else label != WILDCARD
            for part, label in zip(self.template, namespace, strict=False)
        )

    def root(self, scope: NamespaceScope) -> tuple[str, ...]:
        """The namespace of a scope's facts that were not written through a store."""
        if (scope.agent_id is None) != (AGENT not in self.template):
            raise InvalidNamespaceError(
                f"template {self.template!r} cannot hold a scope with agent {scope.agent_id!r}"
            )
        filled = {USER: scope.user_id, AGENT: scope.agent_id or ""}
        return tuple(filled.get(part, part) for part in self.template)


def matches(path: Sequence[str], namespace: Sequence[str], *, suffix: bool = False) -> bool:
    """Whether ``namespace`` starts (or ends) with ``path``; ``"*"`` matches any label."""
    if len(path) > len(namespace):
        return False
    window = namespace[len(namespace) - len(path) :] if suffix else namespace[: len(path)]
    return all(p in (WILDCARD, label) for p, label in zip(path, window, strict=True))
