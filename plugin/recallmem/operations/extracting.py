"""The extraction pipeline as ``Memory`` sees it: opened on first use; its queue's
administration is :mod:`recallmem.operations.queue_admin`."""

from __future__ import annotations

from collections.abc import Callable
from functools import cached_property
from typing import TYPE_CHECKING

from langchain_core.language_models import BaseChatModel

from recallmem.config import MemoryConfig
from recallmem.durability.sqlite_scrub import scrub_sqlite
from recallmem.persistence.repository import FactRepository

if TYPE_CHECKING:
    from recallmem.extraction.pipeline import ExtractionPipeline


def configured_model(model: BaseChatModel | None, config: MemoryConfig) -> BaseChatModel | None:
    """``model`` if given, else the one ``config.llm_model`` names (None if neither)."""
    if model is None and config.llm_model:
        from recallmem.extraction.chain import model_from_config

        return model_from_config(config)
    return model


class Extracting:
    """Opens the pipeline on first use; reads the queue only once it exists."""

    def __init__(
        self, repository: FactRepository, model: BaseChatModel | None, config: MemoryConfig
    ) -> None:
        self.repository = repository
        self.model = model
        self.config = config

    @cached_property
    def pipeline(self) -> ExtractionPipeline:
        """The durable extraction queue and its stages (created on first use)."""
        from recallmem.extraction.pipeline import ExtractionPipeline

        return ExtractionPipeline.open(self.repository, self.model, self.config)

    @property
    def opened(self) -> bool:
        """Whether this process has opened the pipeline."""
        return "pipeline" in self.__dict__

    @property
    def in_use(self) -> bool:
        """Whether the queue was opened here or exists on disk."""
        return self.opened or self.config.queue_path.exists()

    def start_background(self) -> None:
        """Start the worker; without a model nothing starts (windows stay queued)."""
        if self.model is not None:
            self.pipeline.start_background()

    def drop_queued(
        self,
        user_id: str,
        *,
        thread_id: str | None,
        agent_id: str | None,
        erase: bool,
        inside: Callable[[], object],
    ) -> None:
        """Drop the queued words of a scope, which would otherwise bring forgotten facts
        back; ``inside`` runs in the transaction that drops them (``Backlog.purge``)."""
        if self.in_use:
            self.pipeline.backlog.purge(user_id, thread_id=thread_id, agent_id=agent_id,
                                        erase=erase, inside=inside)  # fmt: skip

    def forget_reports(self, user_id: str) -> None:
        """Drop the user's recent extraction reports (after a purge: they quote the words)."""
        if self.opened:
            self.pipeline.reports.forget(user_id)

    def scrub(self) -> None:
        """Leave no bytes of purged words in the queue's file."""
        if self.in_use:
            scrub_sqlite(self.config.queue_path)

    def close(self, timeout: float) -> None:
        """Flush pending extraction within ``timeout`` if the pipeline was opened."""
        if self.opened:
            self.pipeline.close(timeout)
