"""``python -m bench [agent-loop|locomo|madial|bilingual|planner|keywords|keys|dedup|signals|peers|scale|scale-cold|ablation|secrets|consolidation|real_model|year|audit|all] [--quick] [--no-write]``."""

from __future__ import annotations

import argparse
import os
import sys
import warnings
from collections.abc import Callable, Sequence
from typing import Any

# Peers phone home by default; nothing in a benchmark may reach the network.
os.environ.setdefault("MEM0_TELEMETRY", "False")
os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")
os.environ.setdefault("DO_NOT_TRACK", "1")


def _suites() -> dict[str, Callable[..., Any]]:
    from bench.ablation import ablation
    from bench.agent_loop import agent_loop
    from bench.audit import audit
    from bench.bilingual_report import bilingual
    from bench.consolidation import consolidation
    from bench.dedup import dedup
    from bench.embedders import embedders
    from bench.keywords import keywords
    from bench.peers import peers
    from bench.planner import planner
    from bench.plots import plot_all
    from bench.quality import locomo, madial
    from bench.real_model import real_model
    from bench.scale import scale
    from bench.scale_cold import scale_cold
    from bench.search_keys_report import keys
    from bench.secrets import secrets
    from bench.signals_quality import signals
    from bench.summary import summary
    from bench.year import year

    return {
        "agent-loop": agent_loop,
        "locomo": locomo,
        "madial": madial,
        "bilingual": bilingual,
        "peers": peers,
        "scale": scale,
        "scale-cold": scale_cold,
        "ablation": ablation,
        "summary": summary,
        "embedders": embedders,
        "secrets": secrets,
        "planner": planner,
        "keywords": keywords,
        "dedup": dedup,
        "signals": signals,
        "keys": keys,
        "consolidation": consolidation,
        "real_model": real_model,
        "year": year,
        "audit": audit,
        "plots": lambda quick=False, write=True: plot_all(),
    }


ORDER = (
    "agent-loop",
    "locomo",
    "madial",
    "bilingual",
    "planner",
    "keywords",
    "dedup",
    "signals",
    "keys",
    "ablation",
    "embedders",
    "peers",
    "scale",
    "scale-cold",
    "secrets",
    "consolidation",
    "real_model",
    "year",
    "audit",
    "summary",
    "plots",
)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__)
    parser.add_argument("suite", nargs="?", default="all", choices=(*ORDER, "all"))
    parser.add_argument("--quick", action="store_true", help="a tiny subset, for a smoke run")
    parser.add_argument(
        "--no-write",
        action="store_true",
        help="print tables only; leave docs/benchmarks.md and bench/results/ alone",
    )
    parser.add_argument(
        "--min-facts", type=int, default=0, help="scale: skip corpus sizes below this"
    )
    parser.add_argument(
        "--max-facts", type=int, default=1_000_000, help="scale: skip corpus sizes above this"
    )
    parser.add_argument(
        "--first-look",
        action="store_true",
        help="bilingual: save the score before any tuning, once (never overwritten)",
    )
    args = parser.parse_args(argv)
    warnings.filterwarnings("ignore", category=DeprecationWarning)
    suites = _suites()
    for name in ORDER if args.suite == "all" else (args.suite,):
        print(f"== {name} ==", flush=True)
        options: dict[str, Any] = {}
        if name == "scale":
            from bench.scale import SIZES

            options["sizes"] = tuple(s for s in SIZES if args.min_facts <= s <= args.max_facts)
        if name == "scale-cold":
            suites[name](
                min_facts=args.min_facts, max_facts=args.max_facts, write=not args.no_write
            )
            continue
        if name == "bilingual":
            options["first_look"] = args.first_look
        suites[name](quick=args.quick, write=not args.no_write, **options)
    return 0


if __name__ == "__main__":
    sys.exit(main())
