"""Write throughput, before and after, side by side: ``python -m bench.writes``.

Two workloads, each in a fresh process and a fresh home per run:

- ``remember``: LoCoMo-like facts through ``remember_many`` with the default USE
  encoder, 100 per call, 200 users (20,000 facts). The texts are LoCoMo's observation
  facts with the speakers' names replaced by other names, so every fact is distinct while
  the words and lengths stay LoCoMo's (read from ``../shared/bench``, never copied).
- ``remember-keys``: the same, each fact with its search keys (``questions``) as the
  keying model wrote them for LoCoMo (``bench.keys_requests``); "before" is the same
  facts without keys (a version before keys cannot store them).
- ``import``: one export of 100,000 facts over 1,000 users imported through ``import_``
  with the hashing embedder (no model; storage, validation and the import intent real).
- ``import-carried``: the same export carrying its vectors (``embeddings``, made before
  the clock starts); a version that reads them writes them as they are, an older one
  ignores the block and embeds.

"before" is recallmem as of ``--baseline`` (a git ref, extracted with ``git archive``
into a temporary folder and put first on the child's ``PYTHONPATH``); "after" is this
checkout. Runs alternate before/after so that the machine's load hits both alike; the
table shows medians and the after/before ratio, which is what to read on a busy machine.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from io import BytesIO
from pathlib import Path
from typing import Any

from bench.report import machine_note, markdown_table, save_results, write_section

ROOT = Path(__file__).resolve().parents[1]
# The last commit before the write-throughput work (issue 14, item 2).
BASELINE = "5209be4"
REMEMBER = {"facts": 20_000, "users": 200, "per_call": 100}
IMPORT = {"facts": 100_000, "users": 1_000}
QUICK = {
    "remember": {"facts": 400, "users": 4, "per_call": 100},
    "remember-keys": {"facts": 400, "users": 4, "per_call": 100},
    "import": {"facts": 2_000, "users": 20},
    "import-carried": {"facts": 2_000, "users": 20},
}
WRITE_STEP_VARIABLE = "RECALLMEM_BENCH_WRITE_STEP"  # --write-step, read by the child
NAMES = ("Avery", "Bodhi", "Celia", "Dorian", "Esme", "Felix", "Greta", "Hiro", "Imani", "Jonas",
         "Kiara", "Luca", "Mira", "Nikhil", "Orla", "Pavel", "Quentin", "Rhea", "Soren", "Talia")  # fmt: skip


def locomo_like(facts: int) -> list[str]:
    """``facts`` distinct LoCoMo observation facts, speakers renamed round by round."""
    from bench.data import load_locomo_raw

    base: list[tuple[str, tuple[str, str]]] = []
    for sample in load_locomo_raw():
        speakers = (sample["conversation"]["speaker_a"], sample["conversation"]["speaker_b"])
        for by_speaker in sample["observation"].values():
            for said in by_speaker.values():
                base += [(text, speakers) for text, _ in said]
    texts = []
    for i in range(facts):
        text, (a, b) = base[i % len(base)]
        round_ = i // len(base)
        if round_:
            pair = NAMES[(2 * round_) % len(NAMES)], NAMES[(2 * round_ + 1) % len(NAMES)]
            text = text.replace(a, pair[0]).replace(b, pair[1])
            text = text if round_ < len(NAMES) // 2 else f"{text} ({round_})"
        texts.append(text)
    return texts


# -- in the child process (either version of recallmem) -----------------------------------


def locomo_keys(facts: int) -> tuple[list[list[str]], int]:
    """The keys of each ``locomo_like`` fact, and how many are the model's: those the
    keying replies give its LoCoMo original, else keys of the same shape made from the
    text (for timing only: a question in English, one in Chinese, a Chinese paraphrase)."""
    from bench.keys_requests import load_keys, set_facts

    keys = load_keys("locomo").keys
    by_text = {f.text: keys.get(f.id, ()) for _, found in set_facts("locomo") for f in found}
    base = locomo_like(min(facts, len(by_text)))
    made, real = [], 0
    for i in range(facts):
        given = by_text.get(base[i % len(base)], ())
        real += bool(given)
        words = base[i % len(base)].split()
        made.append(list(given) or [f"What about {' '.join(words[:6])}?", "这件事是什么时候的事？",
                                    "用户说过" + "这件事" * max(1, len(words) // 3)])  # fmt: skip
    return made, real


def _encoder() -> Any:
    try:
        from recallmem.embedders import UniversalSentenceEncoder
    except ImportError:  # a version before the embedders moved out of the store
        from recallmem.store.embeddings import UniversalSentenceEncoder  # type: ignore
    return UniversalSentenceEncoder()


def _remember(facts: int, users: int, per_call: int, keys: bool = False) -> dict[str, Any]:
    if step := os.environ.get(WRITE_STEP_VARIABLE):
        import recallmem.persistence.remember_steps

        recallmem.persistence.remember_steps.WRITE_STEP = int(step)
    from recallmem import Memory, MemoryConfig

    texts = locomo_like(facts)
    questions, real = locomo_keys(facts) if keys else ([[]] * facts, 0)
    per_user = facts // users
    with tempfile.TemporaryDirectory(prefix="recallmem-writes-") as home:
        memory = Memory(MemoryConfig(home=Path(home)), embeddings=_encoder())
        memory.remember_many([{"content": "warm up", "category": "context"}], user_id="warm")
        started, stored = time.perf_counter(), 0
        for user in range(users):
            mine = list(zip(texts, questions, strict=True))[user * per_user : (user + 1) * per_user]
            for at in range(0, len(mine), per_call):
                items = [{"content": t, "category": "context", **({"questions": q} if q else {})}
                         for t, q in mine[at : at + per_call]]  # fmt: skip
                stored += len(memory.remember_many(items, user_id=f"user-{user}"))
        seconds = time.perf_counter() - started
        memory.close()
    keyed = sum(bool(q) for q in questions)
    return {"facts_per_second": round(facts / seconds, 1), "stored": stored, "seconds": seconds,
            "keyed": keyed, "real": real, "keys": sum(map(len, questions))}  # fmt: skip


def _import(facts: int, users: int, carried: bool = False) -> dict[str, Any]:
    import base64

    import numpy as np
    from recallmem import Memory, MemoryConfig
    from recallmem.facts.export_format import build_export
    from recallmem.testing import HashingEmbeddings
    from recallmem.types import Fact

    rows = [Fact(content=f"Fact {i}: item {i * 7} was left at place {i % 97}", category="context",
                 user_id=f"user-{i % users}") for i in range(facts)]  # fmt: skip
    document = json.loads(json.dumps(build_export("user-0", facts=rows, profiles=[])))
    embedder = HashingEmbeddings(dimension=512)
    if carried:  # the block as `recallmem export --embeddings` writes it (portability.py)
        vectors = np.asarray(embedder.embed_documents([f.content for f in rows]), "<f4")
        document["embeddings"] = {
            "embedder": f"HashingEmbeddings:{embedder.model_name}", "dimension": 512,
            "encoding": "float32-le-base64",
            "vectors": {f.id: base64.b64encode(v.tobytes()).decode()
                        for f, v in zip(rows, vectors, strict=True)},
        }  # fmt: skip
        document = json.loads(json.dumps(document))
    with tempfile.TemporaryDirectory(prefix="recallmem-import-") as home:
        memory = Memory(MemoryConfig(home=Path(home)), embeddings=embedder)
        started = time.perf_counter()
        memory.import_(document)
        seconds = time.perf_counter() - started
        stored = memory.count()
        memory.close()
    return {"facts_per_second": round(facts / seconds, 1), "stored": stored, "seconds": seconds}


def _cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)  # every thread of this process
    return usage.ru_utime + usage.ru_stime


def child(workload: str, sizes: dict[str, int]) -> dict[str, Any]:
    """One measurement in this process, with whichever recallmem is first on the path."""
    import recallmem

    before = _cpu_seconds()
    if workload.startswith("remember"):
        keys = workload == "remember-keys" and "questions" in recallmem.Memory.remember.__doc__
        result = _remember(**sizes, keys=keys)
    else:
        result = _import(**sizes, carried=workload == "import-carried")
    # CPU seconds include the setup around the timed part (model load, building rows),
    # alike for both versions; they are what a crowded machine distorts least.
    cpu = _cpu_seconds() - before
    return {**result, "facts_per_cpu_second": round(sizes["facts"] / cpu, 1),
            "recallmem": str(Path(recallmem.__file__).parents[1])}  # fmt: skip


# -- the parent --------------------------------------------------------------------------


def baseline_tree(ref: str, into: Path) -> Path:
    """recallmem's ``plugin/`` folder as of ``ref``, extracted under ``into``."""
    # recallmem/_prompts links to the top-level prompts/ folder where ``ref`` has one.
    top = subprocess.run(["git", "-C", str(ROOT), "ls-tree", "--name-only", ref, "prompts"],
                         capture_output=True, text=True, check=True).stdout.split()  # fmt: skip
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", ref, "plugin", *top],
                             capture_output=True, check=True).stdout  # fmt: skip
    with tarfile.open(fileobj=BytesIO(archive)) as tar:
        tar.extractall(into, filter="data")
    return into / "plugin"


def run_child(
    workload: str, sizes: dict[str, int], plugin: Path, write_step: int | None = None
) -> dict[str, Any]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(plugin), str(ROOT)])}
    if (
        write_step is not None
    ):  # this checkout only: older versions have no recallmem.persistence.remember_steps
        env[WRITE_STEP_VARIABLE] = str(write_step)
    code = (f"import json, sys; from bench.writes import child; "
            f"print(json.dumps(child({workload!r}, {sizes!r})))")  # fmt: skip
    out = subprocess.run([sys.executable, "-c", code], env=env, cwd=ROOT, capture_output=True,
                         text=True, check=False)  # fmt: skip
    if out.returncode:
        raise RuntimeError(f"{workload} child failed:\n{out.stderr[-3000:]}")
    result: dict[str, Any] = json.loads(out.stdout.strip().splitlines()[-1])
    if Path(result["recallmem"]) != plugin:
        raise RuntimeError(f"the child ran {result['recallmem']}, not {plugin}")
    return result


def measure(
    rounds: int, baseline: str, sizes: dict[str, dict[str, int]], write_step: int | None = None
) -> dict[str, Any]:
    runs: dict[str, dict[str, list[float]]] = {w: {"before": [], "after": []} for w in sizes}
    cpu: dict[str, dict[str, list[float]]] = {w: {"before": [], "after": []} for w in sizes}
    with tempfile.TemporaryDirectory(prefix="recallmem-baseline-") as folder:
        plugins = {"before": baseline_tree(baseline, Path(folder)), "after": ROOT / "plugin"}
        for round_ in range(rounds):
            for workload, size in sizes.items():
                order = ("before", "after") if round_ % 2 == 0 else ("after", "before")
                for variant in order:
                    step = write_step if variant == "after" else None
                    result = run_child(workload, size, plugins[variant], step)
                    runs[workload][variant].append(result["facts_per_second"])
                    cpu[workload][variant].append(result["facts_per_cpu_second"])
                    print(f"round {round_ + 1} {workload} {variant}: "
                          f"{result['facts_per_second']} facts/s ({result['stored']} stored)",
                          flush=True)  # fmt: skip
    medians = {w: {v: statistics.median(r) for v, r in by.items()} for w, by in runs.items()}
    return {
        "baseline": baseline,
        "write_step": write_step,
        "rounds": rounds,
        "sizes": sizes,
        "runs": runs,
        "medians": medians,
        "cpu_runs": cpu,
        "cpu_medians": {
            w: {v: statistics.median(r) for v, r in by.items()} for w, by in cpu.items()
        },
    }


TARGETS = {"remember": 600, "remember-keys": 500, "import": 1500, "import-carried": 1500}
WHAT = {"import": "import_, hashing embedder", "import-carried": "import_, vectors carried"}


def render(results: dict[str, Any]) -> str:
    sizes, rows = results["sizes"], []
    for workload, by in results["medians"].items():
        size = sizes[workload]
        keyed = " (after: with keys)" if workload == "remember-keys" else ""
        what = (f"remember_many{keyed}, LoCoMo-like, USE: {size['facts']:,} facts, "
                f"{size['users']} users, {size['per_call']} per call"
                if workload.startswith("remember") else
                f"{WHAT[workload]}: {size['facts']:,} facts, {size['users']:,} users")  # fmt: skip
        runs, after = results["runs"][workload], by["after"]
        per_cpu = results["cpu_medians"][workload]
        rows.append([what, by["before"], after, round(after / by["before"], 2),
                     per_cpu["before"], per_cpu["after"], round(per_cpu["after"] / per_cpu["before"], 2),
                     " / ".join(f"{b:.0f}→{a:.0f}" for b, a in zip(runs["before"], runs["after"], strict=True)),
                     f">= {TARGETS[workload]:,}: {'met' if after >= TARGETS[workload] else 'not met'}"])  # fmt: skip
    table = markdown_table(
        ["workload", "before facts/s (median)", "after facts/s (median)", "after ÷ before",
         "before facts per CPU-s", "after", "after ÷ before", "runs, before→after", "target"],
        rows)  # fmt: skip
    step = f" with `WRITE_STEP` {results['write_step']}" if results.get("write_step") else ""
    return "\n".join([
        "## Write throughput (before and after, one run)",
        "",
        f"`python -m bench.writes`: before is recallmem at `{results['baseline']}`, after is this "
        f"checkout{step}; {results['rounds']} alternating rounds, each run a fresh process and home. "
        "After: USE's tokenizer segments each distinct word once (same ids); remember_many "
        "writes a call of up to 1,000 facts as one step (one directory write, one revision "
        "claim; larger calls embed the next step while one is written); records carry no document and only "
        "the keys reads filter on; imports write many users per Chroma call and keep the vectors "
        "an export carries (docs/decisions/0070-write-steps-and-per-call-costs.md; in `import-carried` the baseline "
        "ignores the vectors and embeds); USE encodes its micro-batches on several threads of one "
        "BLAS thread each (no OpenBLAS spin-waits; same vectors), a call's ids are listed in the "
        "directory while it is embedded, and the secret rules run only on texts holding one of "
        "their words (same findings). On a busy machine read the ratios: both columns were "
        "crowded alike. Facts per "
        "CPU-second (all threads, setup included) show the work saved; the pipeline saves none, it "
        "overlaps, which only wall time on free cores can show; on a crowded machine a second thread "
        "also gets a second share of the CPU, which flatters it, so the targets are judged on a quiet "
        "machine at the full sizes (20,000 and 100,000 facts).",
        "",
        table,
        "",
        machine_note(),
    ])  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.writes", description=__doc__)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--baseline", default=BASELINE, help="git ref measured as 'before'")
    parser.add_argument("--quick", action="store_true", help="tiny sizes, for a smoke run")
    parser.add_argument("--remember-facts", type=int, default=REMEMBER["facts"])
    parser.add_argument("--import-facts", type=int, default=IMPORT["facts"])
    parser.add_argument("--workloads", default=",".join(TARGETS),
                        help="comma-separated, of: " + ", ".join(TARGETS))  # fmt: skip
    parser.add_argument("--write-step", type=int, default=None,
                        help="this checkout's recallmem.persistence.remember_steps.WRITE_STEP for the run (e.g. "
                             "1000: one step per call, no embedding ahead)")  # fmt: skip
    parser.add_argument("--no-write", action="store_true", help="print only")
    args = parser.parse_args(argv)
    if args.quick:
        sizes = QUICK
    else:
        remember = {**REMEMBER, "facts": args.remember_facts,
                    "users": args.remember_facts // 100}  # fmt: skip
        imported = {**IMPORT, "facts": args.import_facts,
                    "users": max(1, args.import_facts // 100)}  # fmt: skip
        sizes = {"remember": remember, "remember-keys": remember, "import": imported,
                 "import-carried": imported}  # fmt: skip
    chosen = args.workloads.split(",")
    results = measure(args.rounds, args.baseline, {w: sizes[w] for w in chosen}, args.write_step)
    text = render(results)
    print(text)
    if not args.no_write:
        save_results("writes", results)
        write_section("writes", text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
