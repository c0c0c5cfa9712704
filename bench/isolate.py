"""Run a system in a fresh process, so its peak memory is its own.

The child loads the embedder and the data, records its resident memory (the baseline
every system pays), then builds the system, runs it and reports its peak.
"""

from __future__ import annotations

import multiprocessing
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench.data import load_dataset
from bench.runner import RunResult, peak_rss_mb, run
from bench.systems import BatchCachedEncoder, make_system


@dataclass(frozen=True)
class Job:
    """One system on one dataset split, with options for the system."""

    system: str
    dataset: str
    split: str = "all"
    max_corpora: int | None = None
    options: dict[str, Any] = field(default_factory=dict)
    cache_documents: bool = False


def run_job(job: Job) -> RunResult:
    """Run ``job`` in this process."""
    from recallmem.embedders import UniversalSentenceEncoder

    dataset = load_dataset(job.dataset, job.split, job.max_corpora)
    embeddings = BatchCachedEncoder() if job.cache_documents else UniversalSentenceEncoder()
    embeddings.embed_array(["warm up the model"])
    baseline = peak_rss_mb()
    with tempfile.TemporaryDirectory(prefix="recallmem-bench-") as workdir:
        system = make_system(job.system, embeddings, Path(workdir), **job.options)
        try:
            result = run(system, dataset, options=job.options)
        finally:
            system.close()
    result.baseline_rss_mb = baseline
    result.peak_rss_mb = peak_rss_mb()
    return result


def _child(job: Job, queue: Any) -> None:
    try:
        queue.put(("ok", run_job(job)))
    except BaseException as error:  # report the child's failure to the parent, whatever it is
        queue.put(("error", f"{type(error).__name__}: {error}"))


def run_isolated(job: Job) -> RunResult:
    """Run ``job`` in a spawned child process and return its result."""
    context = multiprocessing.get_context("spawn")
    queue = context.Queue()
    process = context.Process(target=_child, args=(job, queue))
    process.start()
    status, payload = queue.get()
    process.join()
    if status != "ok":
        raise RuntimeError(f"{job.system} on {job.dataset} failed in its process: {payload}")
    result: RunResult = payload
    return result
