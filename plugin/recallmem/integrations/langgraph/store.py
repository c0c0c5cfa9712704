"""``RecallmemStore``: recallmem's memory as a LangGraph ``BaseStore``.

LangGraph agents (``create_agent(store=...)``, ``runtime.store``) and LangMem's memory tools
keep long-term memory in a store. This one keeps it as recallmem facts:

* a namespace names a user (and optionally an agent) by a ``NamespaceRule``; the default
  ``("memories", "{user_id}")`` is LangMem's. A read or search never leaves that user.
* ``put`` goes through the library's normal write path, ``Memory.remember_many`` (a new
  key) or ``Memory.update`` (a key it has): the same hygiene as every write, so a put that
  says what a stored fact says confirms that fact, which then answers to both keys.
  The value is kept whole on the fact; its text
  (``recallmem.integrations.langgraph.items.text_of``) is embedded. A ``None`` value
  deletes (a soft forget, kept for audit).
* ``search`` with a query is ``Memory.recall`` (hybrid ranking; the score is on each
  ``SearchItem``), at most ``MAX_RANKED`` deep; without one it lists newest first.
* facts written otherwise (extracted from conversations, ``remember``) are items too, in
  their scope's root namespace, keyed by fact id.

TTLs are not supported (facts have their own lifecycle); ``index=False`` is accepted and
changes nothing, since every fact is recallable.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable, Sequence
from typing import Any

from langgraph.store.base import (
    BaseStore,
    GetOp,
    InvalidNamespaceError,
    Item,
    ListNamespacesOp,
    Op,
    PutOp,
    Result,
    SearchItem,
    SearchOp,
)

from recallmem.errors import InvalidInputError
from recallmem.facts.validation import parse_category
from recallmem.integrations.langgraph.items import (
    check_value,
    matches_filter,
    placements,
    text_of,
    value_of,
    with_placement,
    without_placement,
)
from recallmem.integrations.langgraph.namespaces import (
    DEFAULT_TEMPLATE,
    NamespaceRule,
    NamespaceScope,
    check_labels,
    matches,
)
from recallmem.limits import MAX_K as MAX_RANKED  # the deepest recall a search pages
from recallmem.limits import MAX_PAGE as _PAGE  # Memory.list's largest page
from recallmem.memory import Memory
from recallmem.persistence.forget_ledger import work_began
from recallmem.types import MAX_CONTENT_CHARS, Category, Fact, Placement


class RecallmemStore(BaseStore):
    """A LangGraph ``BaseStore`` over a ``Memory`` (see the module docstring).

    Args:
        memory: the memory to read and write.
        namespace: the template mapping namespaces to users (``"{user_id}"``) and
            optionally agents (``"{agent_id}"``).
        category: the category of a put whose value names no valid ``category``.
    """

    __slots__ = ("category", "memory", "rule")

    def __init__(
        self,
        memory: Memory,
        *,
        namespace: Sequence[str] = DEFAULT_TEMPLATE,
        category: str | Category = Category.CONTEXT,
    ) -> None:
        self.memory = memory
        self.rule = NamespaceRule(tuple(namespace))
        self.category = parse_category(category)

    # the two entry points ---------------------------------------------------------

    def batch(self, ops: Iterable[Op]) -> list[Result]:
        """Run the operations in order; one result per operation.

        A batch is one unit of work: a ``put`` whose user was forgotten since the batch
        began (it may rewrite a record read before) is refused with
        ForgottenMeanwhileError (``recallmem.persistence.forget_ledger``).
        """
        with work_began():
            return [self._run(op) for op in ops]

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        """``batch`` in a worker thread, as ``Memory``'s async twins do."""
        return await asyncio.to_thread(self.batch, list(ops))

    def _run(self, op: Op) -> Result:
        if isinstance(op, GetOp):
            return self._get(op)
        if isinstance(op, PutOp):
            self._put(op)
            return None
        if isinstance(op, SearchOp):
            return self._search(op)
        if isinstance(op, ListNamespacesOp):
            return self._list_namespaces(op)
        raise TypeError(f"unknown store operation {op!r}")

    # reading ----------------------------------------------------------------------

    def _facts(self, scope: NamespaceScope) -> list[Fact]:
        """Every active fact of the user, newest first."""
        facts: list[Fact] = []
        while True:
            page = self.memory.list(user_id=scope.user_id, limit=_PAGE, offset=len(facts))
            facts += page
            if len(page) < _PAGE:
                return facts

    def _find(self, namespace: tuple[str, ...], key: str) -> Fact | None:
        placement = (check_labels(namespace), key)
        for fact in self._facts(self.rule.scope(namespace)):
            if placement in placements(fact, self.rule):
                return fact
        return None

    def _get(self, op: GetOp) -> Item | None:
        fact = self._find(op.namespace, op.key)
        if fact is None:
            return None
        return Item(value=value_of(fact), key=op.key, namespace=op.namespace,
                    created_at=fact.created_at, updated_at=fact.updated_at)  # fmt: skip

    def _under(self, fact: Fact, prefix: tuple[str, ...]) -> Placement | None:
        return next((p for p in placements(fact, self.rule) if matches(prefix, p[0])), None)

    def _search(self, op: SearchOp) -> list[SearchItem]:
        prefix = check_labels(op.namespace_prefix)
        scope = self.rule.scope(prefix)
        if op.query:
            hits = self.memory.recall(op.query, user_id=scope.user_id, agent_id=scope.agent_id,
                                      k=MAX_RANKED)  # fmt: skip
            ranked: list[tuple[Fact, float | None]] = [(h.fact, h.score) for h in hits]
        else:
            ranked = [(fact, None) for fact in self._facts(scope)]
        found = []
        for fact, score in ranked:
            placement = self._under(fact, prefix)
            if placement is not None and matches_filter(value_of(fact), op.filter):
                found.append(self._search_item(fact, placement, score))
        return found[op.offset : op.offset + op.limit]

    @staticmethod
    def _search_item(fact: Fact, placement: Placement, score: float | None) -> SearchItem:
        namespace, key = placement
        return SearchItem(namespace=namespace, key=key, value=value_of(fact), score=score,
                          created_at=fact.created_at, updated_at=fact.updated_at)  # fmt: skip

    def _list_namespaces(self, op: ListNamespacesOp) -> list[tuple[str, ...]]:
        conditions = op.match_conditions or ()
        prefixes = [c.path for c in conditions if c.match_type == "prefix"]
        scoped = [p for p in prefixes if self.rule.fits(p)]
        if not scoped:
            raise InvalidNamespaceError(
                f"list_namespaces needs a prefix naming one user, like {self.rule.template!r} "
                "with the user id filled in; listing across users is not allowed"
            )
        names = {
            namespace
            for fact in self._facts(self.rule.scope(scoped[0]))
            for namespace, _ in placements(fact, self.rule)
        }
        for condition in conditions:
            suffix = condition.match_type == "suffix"
            names = {n for n in names if matches(condition.path, n, suffix=suffix)}
        if op.max_depth is not None:
            names = {n[: op.max_depth] for n in names}
        return sorted(names)[op.offset : op.offset + op.limit]

    # writing ----------------------------------------------------------------------

    def _put(self, op: PutOp) -> None:
        namespace = check_labels(op.namespace)
        scope = self.rule.scope(namespace)
        existing = self._find(namespace, op.key)
        if op.value is None:
            if existing is not None:
                self._delete(existing, (namespace, op.key))
            return
        value = check_value(op.value)
        text = text_of(value, op.index or None)
        if len(text) > MAX_CONTENT_CHARS:
            raise InvalidInputError(
                f"the text of item {op.key!r} is {len(text)} characters; a memory holds at most "
                f"{MAX_CONTENT_CHARS}. Store smaller items, or name the fields to recall it by "
                "with put(..., index=['field']); nothing was stored"
            )
        category = self._category_of(value)
        if existing is None:
            self._create(scope, (namespace, op.key), value, text, category)
        else:
            self._replace(existing, (namespace, op.key), value, text, category)

    def _category_of(self, value: dict[str, Any]) -> Category:
        named = value.get("category")
        return (
            Category(named) if isinstance(named, str) and named in set(Category) else self.category
        )

    def _create(
        self,
        scope: NamespaceScope,
        placement: Placement,
        value: dict[str, Any],
        text: str,
        category: Category,
    ) -> None:
        namespace, key = placement
        item = {"namespace": namespace, "key": key, "value": value}
        (stored,) = self.memory.remember_many(
            [{"content": text, "category": category, "item": item}],
            user_id=scope.user_id,
            agent_id=scope.agent_id,
        )
        if placement not in placements(stored, self.rule):  # it confirmed an existing fact
            merged = with_placement(stored, placement, value)
            self.memory.put([stored.model_copy(update={"item": merged})])

    def _replace(
        self,
        fact: Fact,
        placement: Placement,
        value: dict[str, Any],
        text: str,
        category: Category,
    ) -> None:
        changed = text.strip() != fact.content
        if changed and fact.item is not None and len(placements(fact, self.rule)) > 1:
            # Other keys confirmed this fact; this one now says something else: its own fact.
            rest = without_placement(fact.item, placement)
            self.memory.put([fact.model_copy(update={"item": rest})])
            self._create(self.rule.scope(placement[0]), placement, value, text, category)
            return
        if changed or category is not fact.category:
            fact = self.memory.update(fact.id, user_id=fact.user_id, content=text,
                                      category=category, reason="store put")  # fmt: skip
        merged = with_placement(fact, placement, value)
        if merged != fact.item:
            self.memory.put([fact.model_copy(update={"item": merged})])

    def _delete(self, fact: Fact, placement: Placement) -> None:
        rest = without_placement(fact.item, placement) if fact.item is not None else None
        if rest is None:
            self.memory.forget(fact.id, user_id=fact.user_id)
        else:
            self.memory.put([fact.model_copy(update={"item": rest})])
