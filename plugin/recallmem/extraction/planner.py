"""Planning one window: one model call with the related facts, then hygiene's plan.

The model sees the window and only the ``max_related`` stored facts nearest to it, so
the prompt does not grow with the size of the memory.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import TYPE_CHECKING

from langchain_core.runnables import Runnable

from recallmem.endpoints.failures import Endpoint, described
from recallmem.extraction.admission import Policy, Rules
from recallmem.extraction.chain import prepare
from recallmem.extraction.hygiene import Context, add_evictions, make_plan
from recallmem.extraction.parser import ExtractionResult
from recallmem.extraction.report import Journal
from recallmem.extraction.threads import Utterance
from recallmem.extraction.window_queue import Window
from recallmem.extraction.write_plan import Add, Plan
from recallmem.prompts import ChatPromptSpec
from recallmem.signals.detector import Signals
from recallmem.types import Fact

if TYPE_CHECKING:
    from recallmem.persistence.repository import FactRepository

MAX_RELATED = 20  # stored facts shown to the model per window, whatever the memory's size
# How long a fact past its date is still shown: a window saying what became of a todo
# ("the talk went well", "I'm back from Shanghai") closes or supersedes it, days later.
ENDED_SHOWN_DAYS = 30


class Planner:
    """Turns a claimed window into a journal: the plan and what it cost."""

    def __init__(
        self,
        facts: FactRepository,
        extractor: Runnable[dict[str, str], ExtractionResult],
        *,
        extractor_name: str,
        prompt: ChatPromptSpec,
        policy: Policy,
        rules: Rules,
        signals: Signals,
        max_related: int = MAX_RELATED,
        endpoint: Endpoint | None = None,
    ) -> None:
        self.facts, self.extractor, self.extractor_name = facts, extractor, extractor_name
        self.endpoint = endpoint  # the model's, named when a call to it fails
        self.prompt, self.policy, self.rules, self.signals = prompt, policy, rules, signals
        self.max_related = max_related

    def _related(self, window: Window, lines: Sequence[Utterance]) -> list[Fact]:
        scope = window.scope
        rows = self.facts.nearest(
            [u.content for u in lines],
            user_id=scope.user_id,
            agent_id=scope.agent_id,
            k=self.max_related,
            # The facts that held when the words were said, and those that ended lately.
            now=window.said - timedelta(days=ENDED_SHOWN_DAYS),
        )
        best: dict[str, tuple[float, Fact]] = {}
        for fact, score in (pair for row in rows for pair in row):
            if fact.user_id == scope.user_id and score > best.get(fact.id, (-2.0,))[0]:
                best[fact.id] = (score, fact)
        ranked = sorted(best.values(), key=lambda pair: -pair[0])
        return [fact for _, fact in ranked[: self.max_related]]

    def plan(self, window: Window, now: datetime) -> Journal:
        """Call the model once for a window and vet what it proposes."""
        scope = window.scope
        lines = [u for u in window.messages if u.role == "user"]
        if not lines:  # nothing the user said: nothing to remember, no call
            return Journal(
                plan=Plan(user_id=scope.user_id, agent_id=scope.agent_id, at=now),
                messages=len(window.messages),
            )
        # The profile is about the user, whichever agent the user was talking to.
        profile = self.facts.profile(user_id=scope.user_id, agent_id=None)
        prepared = prepare(
            window.messages,
            self._related(window, lines),
            profile=profile,
            today=window.said,  # the day it was said, where the user is, not the day run
            signals=self.signals,
            agent_id=scope.agent_id,
        )
        try:
            result = self.extractor.invoke(prepared.inputs)
        except Exception as exc:
            failure = described(exc, self.endpoint)  # which endpoint and model, what to check
            if failure is exc:
                raise
            raise failure from exc
        texts = [c.content for c in result.facts]
        neighbours = self.facts.nearest(
            texts, user_id=scope.user_id, agent_id=scope.agent_id, k=5, now=window.said
        ) if texts else []  # fmt: skip
        context = Context(
            user_id=scope.user_id,
            window=window.messages,
            shown=prepared.fact_refs,
            agent_id=scope.agent_id,
            thread_id=scope.thread_id,
            extractor=result.model_name or self.extractor_name,
            prompt_version=self.prompt.label,
            timezone=window.scope.zone,
            said=window.said,
        )
        plan = make_plan(result, context, neighbours, policy=self.policy, now=now, rules=self.rules)
        # Each fact lands in the user's shared scope or the agent's own: each has its cap.
        for agent_id in dict.fromkeys(op.fact.agent_id for op in plan.operations
                                      if isinstance(op, Add)):  # fmt: skip
            active = self.facts.active(user_id=scope.user_id, agent_id=agent_id)
            plan = add_evictions(plan, active, self.policy.max_facts_per_scope, agent_id=agent_id)
        return Journal(
            plan=plan,
            usage=result.usage,
            model=context.extractor,
            prompt=self.prompt.label,
            messages=len(window.messages),
        )
