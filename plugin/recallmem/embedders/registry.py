"""Embedders by name: the ``recallmem.embedders`` entry-point group.

``MemoryConfig(embedder="name")`` (or ``RECALLMEM_EMBEDDER``) picks the embedder a package
registered under that name. recallmem registers its own three, ``use``, ``e5`` and ``openai``,
the same way (``pyproject.toml``); another package adds one with an entry point whose
object, called with no arguments, returns a LangChain ``Embeddings``; an object with a
``config`` parameter is given the memory's :class:`~recallmem.config.MemoryConfig`
(docs/embedders.md)::

    [project.entry-points."recallmem.embedders"]
    my-embedder = "my_package.embeddings:MyEmbeddings"

>>> sorted(installed_embedders())[:3]
['e5', 'openai', 'use']
>>> load_embedder("nope")  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
recallmem.errors.InvalidInputError: unknown embedder 'nope'; installed: e5, openai, use. ...
"""

from __future__ import annotations

import inspect
from importlib.metadata import EntryPoint, entry_points

from langchain_core.embeddings import Embeddings

from recallmem.config import MemoryConfig
from recallmem.errors import InvalidInputError, RecallmemError

ENTRY_POINT_GROUP = "recallmem.embedders"


def installed_embedders() -> dict[str, list[EntryPoint]]:
    """Every registered embedder name, with the entry points that claim it."""
    found: dict[str, list[EntryPoint]] = {}
    for point in entry_points(group=ENTRY_POINT_GROUP):
        found.setdefault(point.name, []).append(point)
    return found


def load_embedder(name: str, config: MemoryConfig | None = None) -> Embeddings:
    """A new instance of the embedder registered as ``name``, given ``config`` if its
    entry point takes one (by default the ``RECALLMEM_*`` environment's)."""
    installed = installed_embedders()
    points = installed.get(name.strip().lower())
    if not installed:
        raise RecallmemError(
            f"no embedders are registered, not even recallmem's own: its install is missing "
            f"or older than the {ENTRY_POINT_GROUP!r} entry points; reinstall it "
            "(pip install -e . or bash scripts/setup.sh)"
        )
    if not points:
        raise InvalidInputError(
            f"unknown embedder {name!r}; installed: {', '.join(sorted(installed))}. "
            f"A package adds one with an entry point in the {ENTRY_POINT_GROUP!r} group "
            "(docs/embedders.md)"
        )
    if len({p.value for p in points}) > 1:
        claims = ", ".join(sorted(f"{p.value} ({p.dist.name if p.dist else '?'})" for p in points))
        raise RecallmemError(
            f"embedder {name!r} is registered twice: {claims}; uninstall one of the packages"
        )
    factory = points[0].load()
    if _takes_config(factory):
        embedder = factory(config=config or MemoryConfig())
    else:
        embedder = factory()
    if not isinstance(embedder, Embeddings):
        raise RecallmemError(
            f"embedder {name!r} ({points[0].value}) returned {type(embedder).__name__}, "
            "not a langchain_core Embeddings"
        )
    return embedder


def _takes_config(factory: object) -> bool:
    try:
        return "config" in inspect.signature(factory).parameters  # type: ignore[arg-type]
    except (TypeError, ValueError):  # a builtin without a signature
        return False
